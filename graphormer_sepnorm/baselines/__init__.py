r"""Baselines of other model families, trained on our benchmark splits and
CPU budget. The chemprop D-MPNN needs the optional extra
(``pip install ".[baselines]"``); it is imported only when used."""
from .molecule_splits import (BASELINE_DATASETS, SPLITS, MoleculeSplit,
                              load_molecule_splits, rdkit_rejects,
                              subsample_benchmark, subsample_train,
                              write_splits_csv)

__all__ = ['BASELINE_DATASETS', 'SPLITS', 'MoleculeSplit',
           'load_molecule_splits', 'rdkit_rejects', 'subsample_benchmark',
           'subsample_train', 'write_splits_csv']
