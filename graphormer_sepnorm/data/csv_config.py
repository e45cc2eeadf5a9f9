r"""The configuration side of CSV training (config :obj:`data.name: csv`):
the checks of the :obj:`data` keys made before any work, and the
:class:`~graphormer_sepnorm.data.graph_splits.DatasetInfo` of a CSV."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .csv_dataset import csv_columns
from .csv_table import check_columns, read_header
from .graph_splits import DatasetInfo

__all__ = ['check_csv_config', 'csv_info']


def check_csv_config(data: Mapping, check_paths: bool = True) -> None:
    r"""Checks the CSV keys of a :obj:`data` section: with
    :obj:`name: csv`, :obj:`path`, :obj:`target_columns` and :obj:`task`
    are required, :obj:`split_sizes` must be three positive fractions
    summing to 1, :obj:`split: column` needs :obj:`split_column`, the
    SMILES and id columns (copied into ``test_predictions.csv``) must not
    be named like the other columns of that file, and (with
    :obj:`check_paths`) the file must exist and hold the named columns
    (only its header is read); for the other datasets, the keys that only
    a CSV has must stay unset.

    Raises:
        ValueError: Naming the key and the fix.
    """
    _check_molecule_features(data)
    if data['name'] != 'csv':
        for key in ('path', 'target_columns', 'task', 'split_column',
                    'id_column', 'feature_columns'):
            if data[key] is not None:
                raise ValueError(
                    f"'data.{key}' applies to data.name=csv only (your own "
                    f"CSV); remove it, or set data.name=csv")
        return
    for key in ('path', 'target_columns', 'task'):
        if data[key] is None:
            raise ValueError(f"data.name=csv needs 'data.{key}'; "
                             f"{_CSV_KEY_HINTS[key]}")
    if len(set(data['target_columns'])) != len(data['target_columns']):
        raise ValueError(f"'data.target_columns' names a column twice: "
                         f"{data['target_columns']}")
    sizes = data['split_sizes']
    if min(sizes) <= 0 or abs(sum(sizes) - 1.0) > 1e-6:
        raise ValueError(f"'data.split_sizes' must be three fractions > 0 "
                         f"(train, valid, test) that sum to 1, got {sizes}")
    if data['split'] == 'column' and data['split_column'] is None:
        raise ValueError("data.split=column needs 'data.split_column', the "
                         "column holding train/valid/test for every row")
    _check_prediction_file_names(data)
    if data['raw_source'] is not None:
        raise ValueError("'data.raw_source' does not apply to data.name=csv "
                         "(the CSV is read in place from data.path); remove "
                         "it")
    if check_paths:
        path = Path(data['path'])
        split_column = (data['split_column'] if data['split'] == 'column'
                        else None)
        columns = csv_columns(data['smiles_column'], data['target_columns'],
                              split_column, data['id_column'])
        if data.get('feature_columns'):
            columns['data.feature_columns'] = list(data['feature_columns'])
        check_columns(path, read_header(path), columns)


def _check_molecule_features(data: Mapping) -> None:
    r"""The featurizer names of :obj:`data.molecule_features` and the
    Morgan settings (see :mod:`.molecule_features`); none for
    pretraining."""
    from .molecule_features import molecule_featurizer
    if data['name'] == 'pretraining' and (data.get('molecule_features')
                                          or data.get('feature_columns')):
        raise ValueError("'data.molecule_features' does not apply to "
                         "pretraining; remove it")
    molecule_featurizer(data)


def _check_prediction_file_names(data: Mapping) -> None:
    r"""``test_predictions.csv`` holds the id column (or ``id``), the
    SMILES column, and per target its label and prediction (``target`` and
    ``prediction`` for one target, ``<name>`` and ``<name>_prediction`` for
    several): refuses a SMILES or id column named like one of the others,
    checked here so that a run never fails at its end."""
    targets = data['target_columns']
    taken = {'target', 'prediction', *targets,
             *(f'{name}_prediction' for name in targets)}
    if data['id_column'] is None:
        taken.add('id')
    for key in ('smiles_column', 'id_column'):
        name = data[key]
        if name is None:
            continue
        if name in taken:
            raise ValueError(
                f"'data.{key}' is {name!r}, the name of another column of "
                f"test_predictions.csv (the id, SMILES, a target or a "
                f"prediction); name another column, or rename it in the CSV")
        taken.add(name)


_CSV_KEY_HINTS = {
    'path': 'the .csv or .csv.gz file (data.path=molecules.csv)',
    'target_columns': 'the column(s) to predict '
    '(data.target_columns=[logS] or [a,b])',
    'task': 'regression or binary (data.task=regression)',
}


def csv_info(data: Mapping) -> DatasetInfo:
    r"""The :class:`~graphormer_sepnorm.data.graph_splits.DatasetInfo` of a
    CSV :obj:`data` section (vocabularies from the featurizer, one output
    per target column). Its default model-selection metric is ROC-AUC for
    a binary task, MAE for one regression target, and for several the
    standardized MAE (each target's MAE over the standard deviation of its
    training labels, averaged), so that the largest-scale target does not
    pick the best epoch alone."""
    from .featurize import featurizer_vocab_sizes
    atom_vocab, bond_vocab = featurizer_vocab_sizes(data['featurizer'])
    targets = tuple(data['target_columns'])
    if data['task'] == 'binary':
        metric = 'rocauc'
    else:
        metric = 'std_mae' if len(targets) > 1 else 'mae'
    return DatasetInfo('csv', Path(data['path']).name, data['task'],
                       data['featurizer'], metric, atom_vocab, bond_vocab,
                       targets)
