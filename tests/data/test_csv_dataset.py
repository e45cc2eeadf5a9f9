"""MoleculeCSVDataset on real molecules: graphs and labels as the featurizer
and AddShortestPaths give them, missing labels, skipped rows with their
reasons, the cache and its invalidation, duplicates, and the splits."""
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from graphormer_sepnorm.data.csv_dataset import (CSVDataWarning,
                                                 MoleculeCSVDataset,
                                                 load_csv_splits,
                                                 write_run_records)
from graphormer_sepnorm.data.csv_table import CSVDataError
from graphormer_sepnorm.data.featurize import get_featurizer
from graphormer_sepnorm.transforms import AddShortestPaths

TARGETS = ['y', 'logp']
# Rows that cannot be used, appended to the 200 real molecules: an
# unparsable SMILES, silicon (outside the ZINC vocabulary), a 60-atom chain
# (above max_nodes=40) and an empty SMILES.
BAD_ROWS = [('c1ccccc1(', 1.0, 2.0), ('C[Si](C)(C)C', 1.0, None),
            ('C' * 60, None, 3.0), ('', 1.0, 1.0)]


def _dataset(root, path, featurizer='zinc', **kwargs):
    return MoleculeCSVDataset(root, path, 'smiles', TARGETS, 'regression',
                              featurizer, max_nodes=40,
                              pre_transform=AddShortestPaths(40), **kwargs)


@pytest.fixture
def csv_file(zinc_property_frame, tmp_path):
    bad = pd.DataFrame(BAD_ROWS, columns=['smiles', *TARGETS])
    frame = pd.concat([zinc_property_frame, bad], ignore_index=True)
    path = tmp_path / 'molecules.csv'
    frame.to_csv(path, index=False)
    return path, frame


def _data_warnings(record):
    return [str(w.message) for w in record if w.category is CSVDataWarning]


def test_graphs_labels_and_skipped_rows(csv_file, tmp_path):
    path, frame = csv_file
    with pytest.warns(CSVDataWarning) as record:
        dataset = _dataset(tmp_path / 'cache', path)
    # Rows 0, 21, 42, ... have no label at all; the four bad rows fail
    no_label = frame[TARGETS].isna().all(axis=1).to_numpy()
    usable = ~no_label
    usable[-4:] = False
    assert len(dataset) == usable.sum() == 200 - 10
    assert dataset.lines.tolist() == (np.flatnonzero(usable) + 2).tolist()
    featurize = get_featurizer('zinc')
    for i in (0, 57, len(dataset) - 1):
        row = dataset.lines[i] - 2
        expected = AddShortestPaths(40)(featurize(frame['smiles'][row]))
        graph = dataset[i]
        for key in ('x', 'edge_index', 'edge_attr', 'spd', 'path_next'):
            assert torch.equal(graph[key], expected[key]), key
    y = dataset._data.y.double().numpy()
    assert y.shape == (len(dataset), 2)
    np.testing.assert_allclose(y, frame[TARGETS].to_numpy()[usable],
                               rtol=1e-6)  # NaN where the cell is empty
    skipped = dataset.skipped
    assert skipped['line'].tolist() == [str(line) for line in sorted(
        [r + 2 for r in np.flatnonzero(no_label)] + [202, 203, 204, 205])]
    reasons = dict(zip(skipped['line'].astype(int), skipped['reason']))
    assert 'could not be parsed by RDKit' in reasons[202]
    assert "'Si' ... outside the ZINC vocabulary" in reasons[203].replace(
        "'Si', which is", "'Si' ...")
    assert 'more than the maximum of max_nodes=40' in reasons[204]
    assert 'is empty or whitespace only' in reasons[205]
    assert reasons[2].startswith('no target value')
    assert _data_warnings(record) == [
        f"{path}: skipped 14 of 204 rows that cannot be used (e.g. line 2: "
        f"{reasons[2]}); training uses the other 190. The run directory "
        f"lists them in skipped_rows.csv"]


def test_the_cache_is_reused_until_the_csv_or_featurizer_changes(
        csv_file, tmp_path, monkeypatch):
    path, frame = csv_file
    root = tmp_path / 'cache'
    first = _dataset(root, path)
    calls = []
    original = MoleculeCSVDataset.process
    monkeypatch.setattr(MoleculeCSVDataset, 'process',
                        lambda self: calls.append(1) or original(self))
    again = _dataset(root, path)
    assert calls == [] and again.digest == first.digest
    assert torch.equal(again._data.x, first._data.x)

    # Edit one label: processed again, the new label is there
    frame.loc[5, 'y'] = 123.25
    frame.to_csv(path, index=False)
    edited = _dataset(root, path)
    assert calls == [1] and edited.digest != first.digest
    position = int(np.flatnonzero(edited.lines == 7)[0])
    assert edited[position].y[0, 0] == 123.25
    assert first[position].y[0, 0] != 123.25

    # Another featurizer: processed again (OGB's 9 atom features)
    ogb = _dataset(root, path, featurizer='ogb')
    assert calls == [1, 1] and ogb[0].x.shape[1] == 9
    # The OGB vocabulary holds silicon: one row fewer is skipped
    assert len(ogb) == len(edited) + 1


def test_conflicting_duplicates_are_kept_with_a_warning(tmp_path):
    path = tmp_path / 'dup.csv'
    path.write_text('smiles,y,logp\nCCO,1,2\nc1ccccc1,3,\nOCC,1.5,2\n'
                    'C1=CC=CC=C1,3,4\nCCN,0,0\n')
    with pytest.warns(CSVDataWarning, match=r"1 molecules appear on several "
                      r"lines with different labels \(e\.g\. lines 2, 4: "
                      r"CCO\); all their rows are kept"):
        dataset = _dataset(tmp_path / 'cache', path)
    assert len(dataset) == 5
    # Benzene twice, once without logp: the labels do not conflict
    assert dataset.conflicting_duplicates() == [[2, 4]]


def _config(path, root, **changes):
    data = {'name': 'csv', 'path': str(path), 'root': str(root),
            'smiles_column': 'smiles', 'target_columns': TARGETS,
            'task': 'regression', 'featurizer': 'ogb', 'max_nodes': 40,
            'split': 'scaffold', 'split_sizes': [0.8, 0.1, 0.1],
            'split_seed': 0, 'split_column': None, 'limit_train': None,
            'limit_val': None, 'limit_test': None}
    data.update(changes)
    return data


def test_splits_and_run_records(csv_file, tmp_path):
    path, frame = csv_file
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
        again = load_csv_splits(_config(run_dir / 'split.csv',
                                         tmp_path / 'cache', split='column',
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
