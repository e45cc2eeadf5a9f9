r"""The molecules a pretraining corpus must not hold: every validation and
test molecule of the project's benchmarks, so that pretraining never sees a
molecule it is later scored on.

Sources, each a folder or file laid out as in ``../shared/data`` (see its
README), found under one exclusion root unless given one by one:

* ``zinc_subset``: ``ZINC-proxy/smiles/{val,test}.csv`` (column ``smiles``),
  the real ZINC-subset val and test molecules (1,000 each).
* ``zinc_full``: ``zinc250k/jtvae_{valid,test}.txt`` (or JT-VAE's own names
  ``valid.txt``/``test.txt``), one SMILES per line: ZINC-full's val (24,445)
  and test (5,000) molecules, which benchmarking-gnns (and so PyG's
  :class:`~torch_geometric.datasets.ZINC`) took from JT-VAE in this order.
  PyG's download holds graphs only, so the SMILES come from these files.
* ``molhiv``: OGB's ``ogbg_molhiv/`` (``mapping/mol.csv.gz`` and
  ``split/scaffold/{valid,test}.csv.gz``), as OGB downloads it.
* ``csv_example``: the file ``scripts/make_property_csv.py`` writes the
  README's CSV example from (``zinc250k/jtvae_test.txt``). Its split is a
  scaffold split drawn from ``data.split_seed``, so any of its molecules can
  be in validation or test: all of them are excluded.

A corpus molecule is excluded when it matches an excluded molecule by
canonical SMILES, by standard InChIKey, or by the InChIKey's connectivity
block (:mod:`.molecule_keys`). The last rule matters for ZINC: MOSES SMILES
carry no stereo marks while most ZINC test molecules do, so the flat form of
a test molecule, which the ZINC featurizer (no chirality) turns into the
very same graph, differs from it in both SMILES and full InChIKey.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional, Union

from ..data.molecule_splits import load_molecule_splits
from ..data.text_files import read_smiles_lines
from ..data.errors import DataError
from .molecule_keys import MoleculeKeys, molecule_keys

__all__ = ['EXCLUSION_SOURCES', 'MATCH_RULES', 'ExcludedSplit',
           'MissingExclusionSourceError', 'default_exclusion_paths',
           'load_exclusions']

PathLike = Union[str, Path]

#: The exclusion sources, each with the splits it excludes.
EXCLUSION_SOURCES = {'zinc_subset': ('val', 'test'),
                     'zinc_full': ('val', 'test'),
                     'molhiv': ('val', 'test'),
                     'csv_example': ('all',)}
#: The match rules, strictest first; a corpus molecule is attributed to the
#: first rule that matches it.
MATCH_RULES = ('canonical_smiles', 'inchikey', 'inchikey_connectivity')
#: The command-line option that sets each source's path.
_OPTION = {'zinc_subset': '--zinc-subset', 'zinc_full': '--zinc-full',
           'molhiv': '--molhiv', 'csv_example': '--csv-example'}
_ZINC_FULL_FILES = {'val': ('jtvae_valid.txt', 'valid.txt'),
                    'test': ('jtvae_test.txt', 'test.txt')}


class MissingExclusionSourceError(DataError):
    r"""An exclusion source is not where it was looked for; the message
    names the path, the option that sets it and the flag that skips it."""


@dataclass
class ExcludedSplit:
    r"""The keys of the molecules of one excluded split.

    Attributes:
        source (str): The source (a key of :data:`EXCLUSION_SOURCES`).
        split (str): The split (``val``, ``test`` or ``all``).
        path (str): The folder or file it was read from.
        molecules (int): Molecules in the split.
        unparsable (int): Those RDKit cannot parse (they cannot match).
    """
    source: str
    split: str
    path: str
    molecules: int
    unparsable: int
    smiles: set = field(default_factory=set, repr=False)
    inchikeys: set = field(default_factory=set, repr=False)
    connectivity: set = field(default_factory=set, repr=False)

    @classmethod
    def from_smiles(cls, source: str, split: str, path: PathLike,
                    smiles: list[str], unparsable: int = 0
                    ) -> 'ExcludedSplit':
        r"""The split of the molecules :obj:`smiles` (plus
        :obj:`unparsable` ones a loader already dropped)."""
        keys = [molecule_keys(s) for s in smiles]
        parsed = [k for k in keys if k is not None]
        return cls(source, split, str(path), len(smiles) + unparsable,
                   unparsable + len(keys) - len(parsed),
                   smiles={k.smiles for k in parsed},
                   inchikeys={k.inchikey for k in parsed if k.inchikey},
                   connectivity={k.connectivity for k in parsed
                                 if k.inchikey})

    def match(self, keys: MoleculeKeys) -> Optional[str]:
        r"""The first of :data:`MATCH_RULES` by which :obj:`keys` is one of
        this split's molecules, or :obj:`None`."""
        if keys.smiles in self.smiles:
            return MATCH_RULES[0]
        if keys.inchikey and keys.inchikey in self.inchikeys:
            return MATCH_RULES[1]
        if keys.inchikey and keys.connectivity in self.connectivity:
            return MATCH_RULES[2]
        return None


def default_exclusion_paths(root: PathLike) -> dict[str, Path]:
    r"""Where each source is looked for under the exclusion root
    :obj:`root` (the layout of ``../shared/data``; ``ogbg_molhiv/`` is also
    where OGB downloads MolHIV under the data root)."""
    root = Path(root)
    return {'zinc_subset': root / 'ZINC-proxy',
            'zinc_full': root / 'zinc250k',
            'molhiv': root / 'ogbg_molhiv',
            'csv_example': root / 'zinc250k' / 'jtvae_test.txt'}


def _missing(source: str, path: PathLike, what: str
             ) -> MissingExclusionSourceError:
    return MissingExclusionSourceError(
        f"exclusion source {source}: {path} {what}; pass {_OPTION[source]} "
        f"PATH (or --exclusion-root, a folder laid out like ../shared/data) "
        f"or leave it out with --skip {source}")


def _benchmark_splits(source: str, path: Path) -> list[ExcludedSplit]:
    # zinc_subset and molhiv are read as the baselines read them.
    try:
        splits = load_molecule_splits(source, path)
    except FileNotFoundError as error:
        raise _missing(source, path, f'is incomplete ({error})') from error
    return [ExcludedSplit.from_smiles(source, split, path,
                                      splits[split].smiles,
                                      len(splits[split].dropped_ids))
            for split in EXCLUSION_SOURCES[source]]


def _zinc_full_splits(path: Path) -> list[ExcludedSplit]:
    splits = []
    for split, names in _ZINC_FULL_FILES.items():
        found = [path / n for n in names if (path / n).is_file()]
        if not found:
            raise _missing('zinc_full', path, f"holds neither "
                           f"{' nor '.join(names)} (JT-VAE's ZINC "
                           f"{split} SMILES, e.g. https://raw.githubusercontent"
                           f".com/wengong-jin/icml18-jtnn/master/data/zinc/"
                           f"{names[1]})")
        splits.append(ExcludedSplit.from_smiles(
            'zinc_full', split, found[0], read_smiles_lines(found[0])))
    return splits


def load_exclusions(paths: Mapping[str, PathLike]) -> list[ExcludedSplit]:
    r"""Reads the excluded splits of every source in :obj:`paths` (source
    name to folder or file, see :func:`default_exclusion_paths`), in the
    order of :data:`EXCLUSION_SOURCES`.

    Raises:
        MissingExclusionSourceError: A source's folder or file is missing
            or incomplete.
        ValueError: An unknown source name.
    """
    unknown = sorted(set(paths) - set(EXCLUSION_SOURCES))
    if unknown:
        raise ValueError(f"unknown exclusion source(s) {', '.join(unknown)}; "
                         f"choose from {', '.join(EXCLUSION_SOURCES)}")
    excluded = []
    for source in EXCLUSION_SOURCES:
        if source not in paths:
            continue
        path = Path(paths[source])
        if source == 'csv_example':
            if not path.is_file():
                raise _missing(source, path, 'does not exist')
            excluded.append(ExcludedSplit.from_smiles(
                source, 'all', path, read_smiles_lines(path)))
            continue
        if not path.is_dir():
            raise _missing(source, path, 'is not a folder')
        if source == 'zinc_full':
            excluded.extend(_zinc_full_splits(path))
        else:
            excluded.extend(_benchmark_splits(source, path))
    return excluded
