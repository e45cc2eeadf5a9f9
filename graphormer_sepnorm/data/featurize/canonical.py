r"""One molecule, one graph: every featurizer reads a molecule in RDKit's
canonical atom order, however its SMILES was written.

A graph built in the atom order of its SMILES depends on that order twice:

* the Kekulé form of an aromatic ring (the ZINC featurizer's single and
  double bonds) is placed by atom index, so :obj:`c1ccccc1O` and
  :obj:`Oc1ccccc1` can become two different graphs;
* Graphormer's multi-hop edge encoding follows one shortest path per atom
  pair, and which one, when several tie, depends on the node order (as in
  the reference implementation); so do OGB's chirality tags (clockwise or
  not is relative to the order of an atom's bonds).

Writing the molecule as RDKit's canonical SMILES and reading that back fixes
the atom order, the bond order around every atom and the explicit hydrogens
of bracket atoms: two spellings of one molecule have one canonical SMILES,
so they give one graph, bit for bit.
"""
from __future__ import annotations

from rdkit import Chem

from .smiles import FeaturizationError, _parse_smiles, _quiet_rdkit

__all__ = ['canonical_smiles', 'parse_canonical']


def canonical_smiles(mol: Chem.Mol) -> str:
    r"""RDKit's canonical isomeric SMILES of :obj:`mol` (stereochemistry
    kept, so stereoisomers stay different molecules)."""
    return Chem.MolToSmiles(mol, canonical=True, isomericSmiles=True)


def parse_canonical(smiles: object,
                    max_nodes: int | None = None) -> tuple[str, Chem.Mol]:
    r"""Parses :obj:`smiles` and returns its canonical SMILES and the
    molecule read back from it, whose atoms are in canonical order.

    Args:
        smiles (str): The SMILES string of the molecule, written any way.
        max_nodes (int, optional): If set, molecules with more than
            :obj:`max_nodes` heavy atoms are rejected. (default: :obj:`None`)

    Raises:
        FeaturizationError: If :obj:`smiles` is not a non-empty string,
            cannot be parsed by RDKit, has zero or more than
            :obj:`max_nodes` atoms, or RDKit cannot read back its own
            canonical SMILES of it.
    """
    mol = _parse_smiles(smiles, max_nodes)
    with _quiet_rdkit():
        canonical = canonical_smiles(mol)
        canonical_mol = Chem.MolFromSmiles(canonical)
    if canonical_mol is None or \
            canonical_mol.GetNumAtoms() != mol.GetNumAtoms():
        raise FeaturizationError(
            f"SMILES {smiles.strip()!r}: RDKit cannot read back its own "
            f"canonical SMILES of it ({canonical!r}), so its atoms cannot be "
            f"put in canonical order; write the molecule with explicit "
            f"charges and hydrogens on its unusual atoms")
    return canonical, canonical_mol
