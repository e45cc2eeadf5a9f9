"""MoleculeCSVDataset on real molecules: graphs and labels as the featurizer
and AddShortestPaths give them, missing labels, skipped rows with their
reasons, the cache and its invalidation, and duplicates."""

import numpy as np
import pytest
import torch

from graphormer_sepnorm.data.csv_dataset import (CSVDataWarning,
                                                 MoleculeCSVDataset)
from graphormer_sepnorm.data.featurize import get_featurizer
from graphormer_sepnorm.transforms import AddShortestPaths

TARGETS = ['y', 'logp']


def _dataset(root, path, featurizer='zinc', **kwargs):
    return MoleculeCSVDataset(root, path, 'smiles', TARGETS, 'regression',
                              featurizer, max_nodes=40,
                              pre_transform=AddShortestPaths(40), **kwargs)


def _data_warnings(record):
    return [str(w.message) for w in record if w.category is CSVDataWarning]


def test_graphs_labels_and_skipped_rows(zinc_csv_with_bad_rows, tmp_path):
    path, frame = zinc_csv_with_bad_rows
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
        zinc_csv_with_bad_rows, tmp_path, monkeypatch):
    path, frame = zinc_csv_with_bad_rows
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
