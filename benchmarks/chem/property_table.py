r"""A training CSV of real molecules with properties computed by RDKit: the
example dataset of CSV training (``configs/csv_zinc_properties.yaml``).

Each row holds a SMILES and two regression targets: :obj:`penalized_logp`,
the normalized penalized logP of the ZINC benchmark
(:func:`~benchmarks.chem.zinc_normalized_penalized_logp`), and
:obj:`logp`, RDKit's Crippen logP (one of its terms).
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterable, Union

from .penalized_logp import combine_penalized_logp_terms, penalized_logp_terms

__all__ = ['PROPERTY_COLUMNS', 'write_property_csv']

PathLike = Union[str, Path]

#: The columns of the CSV written by :func:`write_property_csv`.
PROPERTY_COLUMNS = ('smiles', 'penalized_logp', 'logp')


def write_property_csv(smiles: Iterable[str], output: PathLike,
                       progress: bool = True) -> Path:
    r"""Writes :data:`PROPERTY_COLUMNS` for every molecule of :obj:`smiles`
    to the CSV file :obj:`output` (parent folders are created).

    Args:
        smiles (iterable of str): The molecules; one that RDKit cannot parse
            stops with its :class:`ValueError`.
        output (str or Path): The CSV file to write.
        progress (bool, optional): Show a progress bar.
            (default: :obj:`True`)
    """
    from tqdm.auto import tqdm
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    smiles = list(smiles)
    with open(output, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(PROPERTY_COLUMNS)
        for s in tqdm(smiles, unit='mol', desc=f'Writing {output.name}',
                      disable=None if progress else True):
            terms = penalized_logp_terms(s)
            writer.writerow([s, repr(combine_penalized_logp_terms(*terms)),
                             repr(terms[0])])
    return output
