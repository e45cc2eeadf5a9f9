r"""Molecules as inline SVG (RDKit's :class:`rdMolDraw2D.MolDraw2DSVG`),
each atom optionally shaded by its contribution to the prediction
(:func:`molecule_svg`)."""
from __future__ import annotations

import re
from typing import Optional, Sequence

__all__ = ['molecule_svg', 'drawing_html', 'contribution_color', 'POSITIVE', 'NEGATIVE']

#: The colours of a contribution at full strength (RGB in 0..1): raising
#: the prediction, lowering it.
POSITIVE = (0.84, 0.19, 0.15)
NEGATIVE = (0.19, 0.40, 0.85)


def contribution_color(value: float, scale: float
                       ) -> tuple[float, float, float]:
    r"""The shade of an atom contributing :obj:`value`: white blended
    towards :data:`POSITIVE` or :data:`NEGATIVE` by :obj:`|value| / scale`
    (at most 1)."""
    strength = min(1.0, abs(value) / scale) if scale > 0 else 0.0
    base = POSITIVE if value >= 0 else NEGATIVE
    return tuple(1.0 - strength * (1.0 - c) for c in base)


def molecule_svg(smiles: str, contributions: Optional[Sequence[float]] = None,
                 size: tuple[int, int] = (220, 160)) -> Optional[str]:
    r"""The drawing of :obj:`smiles` as an :obj:`<svg>` element (no XML
    header), or :obj:`None` if RDKit cannot parse it.

    Args:
        smiles (str): The molecule, drawn as written (atoms in the order of
            RDKit's parse, as :func:`~.contributions.atom_contributions`
            returns them).
        contributions (list of float, optional): One per atom: each atom is
            shaded by :func:`contribution_color`, scaled to the largest
            absolute contribution of the molecule. (default: :obj:`None`)
        size (tuple of int, optional): Width and height in pixels.
            (default: :obj:`(220, 160)`)
    """
    from rdkit import Chem
    from rdkit.Chem.Draw import rdMolDraw2D

    from ..data.featurize.smiles import _quiet_rdkit
    with _quiet_rdkit():
        mol = Chem.MolFromSmiles(smiles) if smiles else None
        if mol is None or mol.GetNumAtoms() == 0:
            return None
        drawer = rdMolDraw2D.MolDraw2DSVG(*size)
        options = drawer.drawOptions()
        options.clearBackground = False
        options.padding = 0.05
        atoms, colors, radii = [], {}, {}
        if contributions is not None and len(contributions) == \
                mol.GetNumAtoms():
            scale = max((abs(float(v)) for v in contributions), default=0.0)
            for k, value in enumerate(contributions):
                atoms.append(k)
                colors[k] = contribution_color(float(value), scale)
                radii[k] = 0.45
        rdMolDraw2D.PrepareAndDrawMolecule(
            drawer, mol, highlightAtoms=atoms, highlightAtomColors=colors,
            highlightAtomRadii=radii, highlightBonds=[])
        drawer.FinishDrawing()
        svg = drawer.GetDrawingText()
    # Inline in HTML: no XML declaration, and no comments or ids to clash.
    svg = svg[svg.index('<svg'):]
    return re.sub(r'<!--.*?-->', '', svg, flags=re.S).strip()


def drawing_html(smiles: str,
                 contributions: Optional[Sequence[float]] = None) -> str:
    r"""The table cell's content for :obj:`smiles`: its
    :func:`molecule_svg` in a box that the browser lays out only when it is
    scrolled into view (the page loads as fast with 150 drawings as with
    10), or nothing if RDKit cannot parse it."""
    svg = molecule_svg(smiles, contributions)
    return '' if svg is None else f'<div class="drawing">{svg}</div>'
