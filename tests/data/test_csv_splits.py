"""The splits of a CSV run on real molecules (no scaffold in two splits),
the records written into the run directory (split.csv trains again on the
same split), and empty splits."""
import warnings

import pandas as pd
import pytest

from graphormer_sepnorm.data.csv_dataset import CSVDataWarning
from graphormer_sepnorm.data.csv_splits import (load_csv_splits,
                                                write_run_records)
from graphormer_sepnorm.data.csv_table import CSVDataError

TARGETS = ['y', 'logp']


def _config(path, root, **changes):
    data = {'name': 'csv', 'path': str(path), 'root': str(root),
            'smiles_column': 'smiles', 'target_columns': TARGETS,
            'task': 'regression', 'featurizer': 'ogb', 'max_nodes': 40,
            'split': 'scaffold', 'split_sizes': [0.8, 0.1, 0.1],
            'split_seed': 0, 'split_column': None, 'limit_train': None,
            'limit_val': None, 'limit_test': None}
    data.update(changes)
    return data


def test_splits_and_run_records(zinc_csv_with_bad_rows, tmp_path):
    path, frame = zinc_csv_with_bad_rows
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', CSVDataWarning)
        splits = load_csv_splits(_config(path, tmp_path / 'cache'))
    sizes = [len(splits[s]) for s in ('train', 'val', 'test')]
    assert sum(sizes) == 191 and splits.info.num_targets == 2
    assert splits.info.target_names == ('y', 'logp')
    dataset = splits.train
    scaffolds = [{dataset.scaffolds[i] for i in splits[s].indices()}
                 for s in ('train', 'val', 'test')]
    assert not (scaffolds[0] & scaffolds[1] or scaffolds[0] & scaffolds[2]
                or scaffolds[1] & scaffolds[2])

    run_dir = tmp_path / 'run'
    run_dir.mkdir()
    written = write_run_records(splits, run_dir)
    assert [p.name for p in written] == ['split.csv', 'skipped_rows.csv']
    record = pd.read_csv(run_dir / 'split.csv')
    assert record['split'].value_counts().to_dict() == {
        'train': sizes[0], 'valid': sizes[1], 'test': sizes[2]}
    used = frame.iloc[dataset.lines - 2].reset_index(drop=True)
    pd.testing.assert_frame_equal(record[['smiles', *TARGETS]], used)
    assert len(pd.read_csv(run_dir / 'skipped_rows.csv')) == 13

    # The record trains again with data.split=column: the same split
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', CSVDataWarning)
        again = load_csv_splits(_config(
            run_dir / 'split.csv', tmp_path / 'cache', split='column',
            split_column='split'))
    for name in ('train', 'val', 'test'):
        ours = sorted(dataset.canonical_smiles[i]
                      for i in splits[name].indices())
        theirs = sorted(again.train.canonical_smiles[i]
                        for i in again[name].indices())
        assert ours == theirs


def test_empty_split_and_no_usable_row(tmp_path):
    path = tmp_path / 'few.csv'
    path.write_text('smiles,y,logp,fold\nCCO,1,2,train\nCCN,2,3,train\n'
                    'CCC,3,4,test\n')
    with pytest.raises(CSVDataError, match=r"the valid split is empty \(3 "
                       r"usable molecules, data.split=column\); use more "
                       r"molecules or larger split sizes, or put rows with "
                       r"valid in column 'fold'"):
        load_csv_splits(_config(path, tmp_path, split='column',
                                split_column='fold'))
    with pytest.raises(CSVDataError, match=r"the valid split is empty .*"
                       r"data.split_sizes=\[0.8, 0.1, 0.1\]"):
        load_csv_splits(_config(path, tmp_path, split='random'))
    path.write_text('smiles,y,logp\nnope,1,2\n[Xx],2,3\n')
    with pytest.raises(CSVDataError, match=r"none of its 2 rows can be used "
                       r"\(first problem: SMILES 'nope' could not be parsed"):
        load_csv_splits(_config(path, tmp_path))
