"""benchmarks/descriptor_probe.py on real ZINC molecules with made-up tasks
whose answer is known: a label that is a descriptor's threshold is probed
perfectly, a task with one class in a split is not scored, and the split is
the one a training run of the set's config gets, data.max_nodes
included."""
import csv
import json

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import Descriptors

from benchmark_helpers import script_module
from conftest import shared_path


@pytest.fixture(scope='module')
def probe_csv(tmp_path_factory):
    """300 real ZINC molecules; task `big`: more than the median heavy atom
    count (a descriptor of the probe, so linearly separable); task `rare`:
    positive for 3 molecules only, so some split lacks positives for some
    seed; task `noise`: a coin flip."""
    with open(shared_path('ZINC-proxy', 'smiles', 'val.csv'),
              newline='') as f:
        smiles = [row['smiles'] for row in csv.DictReader(f)][:300]
    atoms = np.array([Descriptors.HeavyAtomCount(Chem.MolFromSmiles(s))
                      for s in smiles])
    rng = np.random.default_rng(0)
    folder = tmp_path_factory.mktemp('moleculenet')
    path = folder / 'toy.csv'
    with open(path, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['smiles', 'big', 'rare', 'noise'])
        for i, s in enumerate(smiles):
            writer.writerow([s, int(atoms[i] > np.median(atoms)),
                             int(i < 3), int(rng.random() < 0.5)])
    return path


def toy_config(csv_path, folder, max_nodes=512):
    """A CSV training config of the toy set, as configs/cpu/moleculenet's
    are written: scaffold split 80/10/10 of binary tasks."""
    path = folder / 'toy.yaml'
    path.write_text(
        'data:\n  name: csv\n'
        f'  path: {csv_path}\n  root: {folder / "cache"}\n'
        '  task: binary\n  target_columns: [big, rare, noise]\n'
        '  split: scaffold\n  split_sizes: [0.8, 0.1, 0.1]\n'
        f'  max_nodes: {max_nodes}\ntrain:\n  max_epochs: 1\n')
    return str(path)


def test_known_answers(probe_csv, tmp_path):
    module = script_module('descriptor_probe')
    result = module.probe_set(toy_config(probe_csv, tmp_path), 0)
    tasks = result['per_task']
    assert tasks['big']['test_rocauc'] > 0.97
    assert tasks['big']['C'] in module.C_GRID
    assert 0.3 < tasks['noise']['test_rocauc'] < 0.7
    assert tasks['rare'] is None  # 3 positives cannot fill three splits
    assert result['tasks_scored'] == 2
    assert result['test_rocauc'] == pytest.approx(
        (tasks['big']['test_rocauc'] + tasks['noise']['test_rocauc']) / 2)
    assert result['molecules'] == 300 and sum(result['split_sizes']) == 300


def test_split_is_the_training_runs(probe_csv, tmp_path):
    """The probe's molecules and split are load_csv_splits' for the config
    with data.split_seed 1; data.max_nodes leaves the big molecules out."""
    from graphormer_sepnorm.data.csv_splits import load_csv_splits
    from graphormer_sepnorm.training.config import load_config
    module = script_module('descriptor_probe')
    with open(probe_csv, newline='') as f:
        atoms = [Chem.MolFromSmiles(row['smiles']).GetNumAtoms()
                 for row in csv.DictReader(f)]
    limit = int(np.median(atoms))
    config = toy_config(probe_csv, tmp_path, max_nodes=limit)
    result = module.probe_set(config, 1)
    assert result['molecules'] == sum(n <= limit for n in atoms) < 300
    splits = load_csv_splits(load_config(
        config, ['data.split_seed=1', f'data.root={tmp_path / "b"}'])['data'])
    assert result['split_sizes'] == [len(splits.train), len(splits.val),
                                     len(splits.test)]


def test_writes_json_and_table(probe_csv, tmp_path, monkeypatch):
    module = script_module('descriptor_probe')
    monkeypatch.setitem(module.SETS, 'clintox',
                        toy_config(probe_csv, tmp_path))
    out = tmp_path / 'out'
    assert module.main(['--sets', 'clintox', '--seeds', '0', '1',
                        '--output', str(out)]) == 0
    results = json.loads((out / 'probe.json').read_text())
    runs = results['sets']['clintox']
    assert [r['seed'] for r in runs] == [0, 1]
    mean = 100 * np.mean([r['test_rocauc'] for r in runs])
    assert f'| {mean:.2f} ± ' in (out / 'probe.md').read_text()
    monkeypatch.setitem(module.SETS, 'sider', str(tmp_path / 'none.yaml'))
    assert module.main(['--sets', 'sider']) == 2
