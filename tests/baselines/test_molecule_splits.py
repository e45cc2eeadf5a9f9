"""The SMILES splits of the baselines: row order and labels against the real
graph files, and RDKit's rejections dropped and listed."""
import gzip

import numpy as np
import pytest
from conftest import shared_path

from baseline_data import MOLHIV_BAD, molhiv_rows, ogb_split, small_molhiv
from graphormer_sepnorm.data.molecule_splits import (load_molecule_splits, rdkit_rejects,
                                                     subsample_benchmark)
from graphormer_sepnorm.data.splits import murcko_scaffold


def test_rdkit_rejects_real_bad_smiles_and_keeps_good_ones():
    flags = rdkit_rejects([MOLHIV_BAD[137], 'CCO', MOLHIV_BAD[987], 'C1CC',
                           'c1ccccc1O'])
    assert flags.tolist() == [True, False, True, True, False]


def test_zinc_rows_are_the_real_graphs_in_order():
    # Row k of smiles/<split>.csv is graph k: its label is the real graph's.
    splits = load_molecule_splits('zinc_subset',
                                  shared_path('ZINC-proxy'))
    assert [len(splits[s]) for s in ('train', 'val', 'test')] == \
        [10000, 1000, 1000]
    for split in ('val', 'test'):
        arrays = np.load(shared_path('ZINC', 'subset_partial_pyg',
                                     f'{split}_arrays.npz'))
        part = splits[split]
        assert part.dropped_ids == []
        assert part.ids.tolist() == list(range(1000))
        np.testing.assert_allclose(part.targets, arrays['y'], atol=1e-6)


def test_molhiv_drops_rejected_smiles_and_keeps_ogb_indices(tmp_path):
    split = small_molhiv(tmp_path)
    rows = molhiv_rows()
    assert rows[137][1] == MOLHIV_BAD[137]
    splits = load_molecule_splits('molhiv', tmp_path)
    assert splits['train'].dropped_ids == []
    assert splits['val'].dropped_ids == [12882]
    assert splits['test'].dropped_ids == [137]
    for name, ogb_name in (('train', 'train'), ('val', 'valid'),
                           ('test', 'test')):
        part = splits[name]
        expected = [i for i in split[ogb_name] if i not in (137, 12882)]
        assert part.ids.tolist() == expected
        assert part.smiles == [rows[i][1] for i in expected]
        assert part.targets.tolist() == [float(rows[i][0]) for i in expected]
        assert set(part.targets.tolist()) == {0.0, 1.0}


@pytest.mark.slow
def test_molhiv_full_drops_seven_and_labels_match_ogb_graph_labels():
    root = shared_path('ogbg_molhiv')
    splits = load_molecule_splits('molhiv', root)
    with gzip.open(root / 'raw' / 'graph-label.csv.gz', 'rt') as f:
        graph_labels = np.array([float(line) for line in f])
    dropped = {s: splits[s].dropped_ids for s in splits}
    assert sum(len(v) for v in dropped.values()) == 7
    assert dropped['test'] == [137, 987]
    assert dropped['val'] == [12882, 18293]
    total = 0
    for name, ogb_name in (('train', 'train'), ('val', 'valid'),
                           ('test', 'test')):
        ogb_ids = ogb_split(ogb_name)
        part = splits[name]
        assert sorted(part.ids.tolist() + part.dropped_ids) == ogb_ids
        # mol.csv's HIV_active agrees with OGB's graph labels, in id order.
        np.testing.assert_array_equal(part.targets, graph_labels[part.ids])
        total += len(ogb_ids)
    assert total == 41127


def test_missing_file_and_wrong_columns_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match='smiles/train.csv'):
        load_molecule_splits('zinc_subset', tmp_path)
    (tmp_path / 'smiles').mkdir()
    for split in ('train', 'val', 'test'):
        (tmp_path / 'smiles' / f'{split}.csv').write_text('smi,target\nC,1\n')
    with pytest.raises(ValueError, match='needs the columns smiles,y'):
        load_molecule_splits('zinc_subset', tmp_path)
    with pytest.raises(ValueError, match='Unknown dataset'):
        load_molecule_splits('zinc', tmp_path)


def test_splits_csv_trains_as_a_csv_dataset_with_the_same_splits(tmp_path):
    """write_splits_csv (scripts/make_split_csv.py) on the small MolHIV copy
    with 2 rejected SMILES: the kept molecules in split order, and the CSV
    dataset (data.split: column) reads back exactly these splits, with OGB's
    indices in the id column."""
    from graphormer_sepnorm.data.molecule_splits import write_splits_csv
    from graphormer_sepnorm.data.csv_splits import load_csv_splits
    from graphormer_sepnorm.data.datasets import graph_targets
    small_molhiv(tmp_path)
    splits = load_molecule_splits('molhiv', tmp_path)
    path = write_splits_csv('molhiv', tmp_path, tmp_path / 'out' / 'hiv.csv')
    lines = path.read_text().splitlines()
    assert lines[0] == 'smiles,target,split,id'
    rows = [line.rsplit(',', 3) for line in lines[1:]]
    expected = []
    for name, csv_name in (('train', 'train'), ('val', 'valid'),
                           ('test', 'test')):
        part = splits[name]
        expected += [(smiles, float(y), csv_name, int(i)) for smiles, y, i in
                     zip(part.smiles, part.targets, part.ids)]
    assert [(s, float(y), name, int(i)) for s, y, name, i in rows] == \
        expected
    assert 137 not in [i for *_, i in expected]  # rejected by RDKit
    data = {'name': 'csv', 'path': str(path), 'smiles_column': 'smiles',
            'target_columns': ['target'], 'task': 'binary',
            'featurizer': 'ogb', 'split': 'column', 'split_column': 'split',
            'split_sizes': [0.8, 0.1, 0.1], 'split_seed': 0,
            'root': str(tmp_path / 'data'), 'max_nodes': 512,
            'limit_train': None, 'limit_val': None, 'limit_test': None}
    graphs = load_csv_splits(data)
    for name in ('train', 'val', 'test'):
        assert len(graphs[name]) == len(splits[name])
        np.testing.assert_array_equal(
            graph_targets(graphs[name]).view(-1).numpy(),
            splits[name].targets)


def test_split_csv_script_errors_are_one_line(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    script = Path(__file__).resolve().parents[2] / 'scripts' / \
        'make_split_csv.py'
    result = subprocess.run(
        [sys.executable, str(script), '--dataset', 'zinc_subset',
         '--source', str(tmp_path / 'nope'), '--output',
         str(tmp_path / 'x.csv')], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.startswith('error: ') and \
        result.stderr.count('\n') == 1 and 'ZINC-proxy' in result.stderr
    assert not (tmp_path / 'x.csv').exists()


def test_a_training_subsample_keeps_validation_and_test_whole(tmp_path):
    small_molhiv(tmp_path, sizes=(80, 20, 30))
    full = load_molecule_splits('molhiv', tmp_path)
    small = load_molecule_splits('molhiv', tmp_path, train_molecules=25)
    for split in ('val', 'test'):
        assert small[split].ids.tolist() == full[split].ids.tolist()
    assert 20 <= len(small['train']) <= 25
    position = {i: k for k, i in enumerate(full['train'].ids.tolist())}
    assert set(position) >= set(small['train'].ids.tolist())
    for i, smiles, y in zip(small['train'].ids, small['train'].smiles,
                            small['train'].targets):
        assert full['train'].smiles[position[i]] == smiles
        assert full['train'].targets[position[i]] == y
    # Whole scaffold groups (scaffolds from RDKit here, independently).
    from rdkit import Chem
    scaffold = {i: murcko_scaffold(Chem.MolFromSmiles(s)) for i, s in
                zip(full['train'].ids.tolist(), full['train'].smiles)}
    kept = {scaffold[i] for i in small['train'].ids.tolist()}
    assert {i for i in scaffold if scaffold[i] in kept} == \
        set(small['train'].ids.tolist())
    assert subsample_benchmark('molhiv', 2000) == 'molhiv_train2000'
