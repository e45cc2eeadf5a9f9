r"""Turn SMILES strings into PyTorch Geometric graphs.

Two featurizations are provided, one per pretrained model family:

* :func:`smiles_to_zinc_graph` reproduces the graphs of the `ZINC
  <https://pytorch-geometric.readthedocs.io/en/latest/generated/torch_geometric.datasets.ZINC.html>`_
  benchmark (benchmarking-gnns / :class:`torch_geometric.datasets.ZINC`):
  one categorical atom type per node (28 types) and one categorical bond type
  per edge (Kekulé form).
* :func:`smiles_to_ogb_graph` reproduces the graphs of the OGB molecule
  datasets (*e.g.*, :obj:`ogbg-molhiv`) via :func:`ogb.utils.smiles2graph`:
  9 categorical atom features and 3 categorical bond features.

Both raise :class:`FeaturizationError` (a :class:`ValueError`) with a message
that names the offending SMILES, the problem, and what to do about it.

Example:

.. code-block:: python

    from graphormer_sepnorm.data.featurize import get_featurizer

    featurize = get_featurizer('zinc')
    data = featurize('CC(=O)Oc1ccccc1C(=O)O')  # aspirin
    data.x.shape, data.edge_index.shape, data.edge_attr.shape
    >>> (torch.Size([13, 1]), torch.Size([2, 26]), torch.Size([26]))
"""
from __future__ import annotations

import contextlib
from typing import Callable, Iterator, Sequence

import torch
from rdkit import Chem, RDLogger, rdBase
from torch_geometric.data import Data
from torch_geometric.utils import coalesce

__all__ = [
    'ZINC_ATOM_TYPES',
    'ZINC_BOND_TYPES',
    'FeaturizationError',
    'smiles_to_zinc_graph',
    'smiles_to_ogb_graph',
    'FEATURIZERS',
    'get_featurizer',
]

#: The 28 atom types of the benchmarking-gnns ZINC dataset, in index order
#: (the ``idx2word`` list of its ``atom_dict.pickle``).  A type is the element
#: symbol, followed by ``' H<n>'`` when the SMILES bracket atom carries ``n``
#: explicit hydrogens (except for neutral aromatic atoms such as ``[nH]``,
#: whose type is the bare symbol), followed by ``' +'``/``' -'`` for a formal
#: charge of :math:`\pm 1`.
ZINC_ATOM_TYPES: tuple[str, ...] = (
    'C', 'O', 'N', 'F', 'C H1', 'S', 'Cl', 'O -', 'N H1 +', 'Br', 'N H3 +',
    'N H2 +', 'N +', 'N -', 'S -', 'I', 'P', 'O H1 +', 'N H1 -', 'O +', 'S +',
    'P H1', 'P H2', 'C H2 -', 'P +', 'S H1 +', 'C H1 -', 'P H1 +'
)

#: The bond types of the benchmarking-gnns ZINC dataset, in index order.
#: Index ``0`` (``'NONE'``) never appears in :obj:`edge_attr`.
ZINC_BOND_TYPES: tuple[str, ...] = ('NONE', 'SINGLE', 'DOUBLE', 'TRIPLE')

_ZINC_ATOM_TYPE_TO_ID: dict[str, int] = {
    name: i
    for i, name in enumerate(ZINC_ATOM_TYPES)
}

_ZINC_BOND_TYPE_TO_ID: dict[Chem.BondType, int] = {
    Chem.BondType.SINGLE: 1,
    Chem.BondType.DOUBLE: 2,
    Chem.BondType.TRIPLE: 3,
}

_VOCAB_PREVIEW = ', '.join(ZINC_ATOM_TYPES[:3])


class FeaturizationError(ValueError):
    r"""Raised when a SMILES string cannot be turned into a model input graph.

    The message names the offending SMILES, what is wrong with it, and how to
    fix it.  Being a :class:`ValueError`, it can be caught as such.
    """


# Helpers #####################################################################


@contextlib.contextmanager
def _silence_rdkit() -> Iterator[None]:
    r"""Silences RDKit's own logging (``rdApp.*``) inside a :obj:`with` block
    and afterwards restores exactly the log levels that were enabled before.
    """
    levels = ('debug', 'info', 'warning', 'error')
    try:  # Lines like "rdApp.warning:enabled":
        status = rdBase.LogStatus().splitlines()
        enabled = [
            line.split(':')[0] for line in status
            if line.strip().endswith(':enabled')
        ]
    except Exception:  # pragma: no cover - very old RDKit
        enabled = [f'rdApp.{level}' for level in levels if level != 'debug']
    RDLogger.DisableLog('rdApp.*')
    try:
        yield
    finally:
        for name in enabled:
            RDLogger.EnableLog(name)


def _check_smiles(smiles: object) -> str:
    r"""Validates the type and emptiness of :obj:`smiles` and returns it
    stripped of surrounding whitespace.
    """
    if not isinstance(smiles, str):
        raise FeaturizationError(
            f"Expected a SMILES string, but got an object of type "
            f"'{type(smiles).__name__}' ({smiles!r}); pass the molecule as a "
            f"SMILES string, e.g. 'CCO'")
    stripped = smiles.strip()
    if len(stripped) == 0:
        raise FeaturizationError(
            f"SMILES {smiles!r} is empty or whitespace only; pass a "
            f"non-empty SMILES string, e.g. 'CCO'")
    return stripped


def _parse_smiles(smiles: object, max_nodes: int | None) -> Chem.Mol:
    r"""Parses :obj:`smiles` with RDKit (with sanitization, RDKit's logging
    silenced) and checks that the molecule has between one and
    :obj:`max_nodes` heavy atoms.
    """
    text = _check_smiles(smiles)
    with _silence_rdkit():
        mol = Chem.MolFromSmiles(text)
        if mol is None:
            raise FeaturizationError(_explain_parse_failure(text))
    num_atoms = mol.GetNumAtoms()
    if num_atoms == 0:
        raise FeaturizationError(
            f"SMILES {text!r} describes a molecule with zero atoms; pass a "
            f"SMILES string with at least one atom")
    if max_nodes is not None and num_atoms > max_nodes:
        raise FeaturizationError(
            f"SMILES {text!r} has {num_atoms} heavy atoms, more than the "
            f"maximum of max_nodes={max_nodes} this model supports; use a "
            f"smaller molecule (or a model trained with a larger node limit)")
    return mol


def _explain_parse_failure(text: str) -> str:
    r"""Builds the error message for a SMILES that RDKit failed to parse.
    Must be called with RDKit logging silenced.
    """
    reason = 'it is not valid SMILES syntax'
    mol = Chem.MolFromSmiles(text, sanitize=False)
    if mol is not None:  # Syntax is fine; the chemistry is not:
        problems = Chem.DetectChemistryProblems(mol)
        if len(problems) > 0:
            reason = ('RDKit rejects its chemistry: ' +
                      '; '.join(p.Message() for p in problems))
        else:
            reason = 'RDKit could not sanitize the molecule'
    return (f"SMILES {text!r} could not be parsed by RDKit ({reason}); "
            f"check the SMILES string for typos, unclosed rings or "
            f"impossible valences")


def _zinc_atom_type(atom: Chem.Atom) -> str:
    r"""Returns the benchmarking-gnns ZINC atom type string of :obj:`atom`
    (*e.g.*, :obj:`'N H1 +'` for :obj:`[NH+]`).
    """
    name = atom.GetSymbol()
    num_hs = atom.GetNumExplicitHs()  # Hydrogens written in the bracket.
    charge = atom.GetFormalCharge()
    # Neutral aromatic atoms (`[nH]`) are written without H in the Kekulé
    # SMILES the original dataset was built from:
    if num_hs > 0 and not (atom.GetIsAromatic() and charge == 0):
        name += f' H{num_hs}'
    if charge != 0:  # ' +'/' -'; larger charges (not in ZINC) as ' +2'.
        name += ' ' + ('+' if charge > 0 else '-')
        if abs(charge) > 1:
            name += str(abs(charge))
    return name


def _match_double_bonds(
    atoms: Sequence[int],
    neighbors: dict[int, list[int]],
) -> dict[int, int] | None:
    r"""Finds a perfect matching of :obj:`atoms` along the aromatic bonds in
    :obj:`neighbors` by deterministic backtracking: the lowest-index
    unmatched atom is matched first, trying its neighbors in ascending index
    order.  Returns the matching as a symmetric ``{atom: partner}`` map, or
    :obj:`None` if no perfect matching exists.
    """
    order = sorted(atoms)
    partner: dict[int, int] = {}

    def solve(pos: int) -> bool:
        while pos < len(order) and order[pos] in partner:
            pos += 1
        if pos == len(order):
            return True
        i = order[pos]
        for j in neighbors[i]:  # Sorted in ascending order.
            if j in partner:
                continue
            partner[i], partner[j] = j, i
            if solve(pos + 1):
                return True
            del partner[i], partner[j]
        return False

    return partner if solve(0) else None


def _zinc_bond_types(mol: Chem.Mol) -> list[int]:
    r"""Returns the ZINC bond type id (1, 2 or 3) of every bond of
    :obj:`mol`, in bond-index order, with aromatic bonds resolved into the
    Kekulé pattern of the benchmarking-gnns graphs.

    RDKit's :meth:`Chem.Kekulize` decides *which* aromatic atoms carry a
    ring double bond.  The double bonds among those atoms are then *placed*
    by :meth:`_match_double_bonds`, which reproduces the (atom-order
    dependent) pattern found in the original dataset far more often than
    RDKit's own Kekulé assignment does.
    """
    bonds = list(mol.GetBonds())
    types: list[int] = [0] * len(bonds)
    aromatic: list[Chem.Bond] = []
    for bond in bonds:
        if (bond.GetIsAromatic()
                or bond.GetBondType() == Chem.BondType.AROMATIC):
            aromatic.append(bond)
            continue
        bond_type = _ZINC_BOND_TYPE_TO_ID.get(bond.GetBondType())
        if bond_type is None:
            i, j = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
            raise FeaturizationError(
                f"Bond {bond.GetIdx()} (atoms {i}-{j}) has type "
                f"{bond.GetBondType()}, which is outside the ZINC bond types "
                f"(SINGLE, DOUBLE, TRIPLE, aromatic); this model can only "
                f"predict molecules with those bond types")
        types[bond.GetIdx()] = bond_type

    if len(aromatic) == 0:
        return types

    kekule = Chem.Mol(mol)
    Chem.Kekulize(kekule, clearAromaticFlags=True)
    # Atoms that carry an aromatic-ring double bond in RDKit's Kekulé form:
    double_atoms = set()
    for bond in aromatic:
        if kekule.GetBondWithIdx(bond.GetIdx()).GetBondType() == \
                Chem.BondType.DOUBLE:
            double_atoms.add(bond.GetBeginAtomIdx())
            double_atoms.add(bond.GetEndAtomIdx())

    neighbors: dict[int, list[int]] = {i: [] for i in double_atoms}
    for bond in aromatic:
        i, j = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        if i in double_atoms and j in double_atoms:
            neighbors[i].append(j)
            neighbors[j].append(i)
    for nbrs in neighbors.values():
        nbrs.sort()

    partner = _match_double_bonds(sorted(double_atoms), neighbors)
    for bond in aromatic:
        i, j = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        if partner is None:  # Cannot happen for sanitized molecules.
            kek_type = kekule.GetBondWithIdx(bond.GetIdx()).GetBondType()
            types[bond.GetIdx()] = _ZINC_BOND_TYPE_TO_ID[kek_type]
        else:
            types[bond.GetIdx()] = 2 if partner.get(i) == j else 1
    return types


# Featurizers #################################################################


def smiles_to_zinc_graph(smiles: str, max_nodes: int | None = None) -> Data:
    r"""Converts a SMILES string into a graph in the format of the
    benchmarking-gnns `ZINC` dataset
    (:class:`torch_geometric.datasets.ZINC`).

    Nodes follow the atom order of the SMILES string.  Each node is labelled
    with one of the 28 :obj:`ZINC_ATOM_TYPES` (element, explicit bracket
    hydrogens, formal charge; ``[nH]`` maps to :obj:`'N'`), and each bond
    with its Kekulé type (:obj:`1` single, :obj:`2` double, :obj:`3`
    triple).  Aromatic systems are kekulized with the same double-bond
    placement convention as the original dataset (bond-labelled isomorphic to
    the real graph for 99.85% of the ZINC-subset val/test molecules).
    Disconnected molecules (*e.g.*, salts) keep all their fragments.

    Args:
        smiles (str): The SMILES string of the molecule.
        max_nodes (int, optional): If set, molecules with more than
            :obj:`max_nodes` heavy atoms are rejected. (default: :obj:`None`)

    Returns:
        :class:`torch_geometric.data.Data` with :obj:`x` (:obj:`torch.long`,
        shape :obj:`[num_nodes, 1]`), :obj:`edge_index` (:obj:`torch.long`,
        shape :obj:`[2, 2 * num_bonds]`, both directions, sorted by row then
        column like :class:`~torch_geometric.datasets.ZINC`) and
        :obj:`edge_attr` (:obj:`torch.long`, shape :obj:`[2 * num_bonds]`).

    Raises:
        FeaturizationError: If :obj:`smiles` is not a non-empty string, cannot
            be parsed by RDKit, has zero or more than :obj:`max_nodes` atoms,
            or contains an atom outside the 28 ZINC atom types.
    """
    mol = _parse_smiles(smiles, max_nodes)
    text = smiles.strip()

    atom_ids: list[int] = []
    for atom in mol.GetAtoms():
        name = _zinc_atom_type(atom)
        idx = _ZINC_ATOM_TYPE_TO_ID.get(name)
        if idx is None:
            raise FeaturizationError(
                f"SMILES {text!r}: atom {atom.GetIdx()} is {name!r}, which is "
                f"outside the ZINC vocabulary of {len(ZINC_ATOM_TYPES)} atom "
                f"types ({_VOCAB_PREVIEW}, ...; see ZINC_ATOM_TYPES); this "
                f"model can only predict molecules made of those atom types")
        atom_ids.append(idx)

    try:
        bond_types = _zinc_bond_types(mol)
    except FeaturizationError as e:
        raise FeaturizationError(f'SMILES {text!r}: {e}') from None

    num_nodes = len(atom_ids)
    x = torch.tensor(atom_ids, dtype=torch.long).view(-1, 1)
    if len(bond_types) > 0:
        pairs = [(b.GetBeginAtomIdx(), b.GetEndAtomIdx())
                 for b in mol.GetBonds()]
        ends = torch.tensor(pairs, dtype=torch.long).t()
        edge_index = torch.cat([ends, ends.flip(0)], dim=1)
        attr = torch.tensor(bond_types, dtype=torch.long)
        edge_attr = torch.cat([attr, attr], dim=0)
        edge_index, edge_attr = coalesce(edge_index, edge_attr, num_nodes)
    else:
        edge_index = torch.empty((2, 0), dtype=torch.long)
        edge_attr = torch.empty((0, ), dtype=torch.long)

    return Data(x=x, edge_index=edge_index, edge_attr=edge_attr,
                num_nodes=num_nodes)


def smiles_to_ogb_graph(smiles: str, max_nodes: int | None = None) -> Data:
    r"""Converts a SMILES string into a graph in the format of the OGB
    molecule datasets (*e.g.*, :obj:`ogbg-molhiv`), using
    :func:`ogb.utils.smiles2graph`.

    Args:
        smiles (str): The SMILES string of the molecule.
        max_nodes (int, optional): If set, molecules with more than
            :obj:`max_nodes` heavy atoms are rejected. (default: :obj:`None`)

    Returns:
        :class:`torch_geometric.data.Data` with :obj:`x` (:obj:`torch.long`,
        shape :obj:`[num_nodes, 9]`), :obj:`edge_index` (:obj:`torch.long`,
        shape :obj:`[2, 2 * num_bonds]`, in the order of
        :func:`~ogb.utils.smiles2graph`) and :obj:`edge_attr`
        (:obj:`torch.long`, shape :obj:`[2 * num_bonds, 3]`).

    Raises:
        FeaturizationError: If :obj:`smiles` is not a non-empty string, cannot
            be parsed by RDKit, or has zero or more than :obj:`max_nodes`
            atoms.
    """
    from ogb.utils import smiles2graph

    _parse_smiles(smiles, max_nodes)  # Validation with readable errors.
    with _silence_rdkit():
        graph = smiles2graph(smiles.strip())
    return Data(
        x=torch.from_numpy(graph['node_feat']).to(torch.long),
        edge_index=torch.from_numpy(graph['edge_index']).to(torch.long),
        edge_attr=torch.from_numpy(graph['edge_feat']).to(torch.long),
        num_nodes=int(graph['num_nodes']),
    )


#: Featurizers by name: :obj:`"zinc"` (:func:`smiles_to_zinc_graph`) and
#: :obj:`"ogb"` (:func:`smiles_to_ogb_graph`).
FEATURIZERS: dict[str, Callable[..., Data]] = {
    'zinc': smiles_to_zinc_graph,
    'ogb': smiles_to_ogb_graph,
}


def get_featurizer(name: str) -> Callable[..., Data]:
    r"""Returns the featurizer registered under :obj:`name` in
    :obj:`FEATURIZERS`.

    Args:
        name (str): :obj:`"zinc"` or :obj:`"ogb"` (case-insensitive).

    Raises:
        ValueError: If :obj:`name` is not a registered featurizer.
    """
    key = name.lower().strip() if isinstance(name, str) else name
    if key not in FEATURIZERS:
        raise ValueError(
            f"Unknown featurizer {name!r}; valid choices are "
            f"{sorted(FEATURIZERS)}")
    return FEATURIZERS[key]
