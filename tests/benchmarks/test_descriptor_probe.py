"""benchmarks/descriptor_probe.py on real ZINC molecules with made-up tasks
whose answer is known: a label that is a descriptor's threshold is probed
perfectly, a task with one class in a split is not scored, and the split is
the one a training run on the CSV gets."""
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


def test_known_answers(probe_csv, tmp_path):
    module = script_module('descriptor_probe')
    result = module.probe_set(probe_csv, 0, tmp_path / 'cache')
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
    """The probe's split is load_csv_splits' for data.split_seed 1."""
    from graphormer_sepnorm.data.csv_splits import load_csv_splits
    from graphormer_sepnorm.training.config import load_config
    module = script_module('descriptor_probe')
    _, _, _, parts = module.set_molecules(probe_csv, 1, tmp_path / 'a')
    config = load_config(None, [
        'data.name=csv', f'data.path={probe_csv}',
        f'data.root={tmp_path / "b"}', 'data.task=binary',
        'data.target_columns=[big,rare,noise]', 'data.split_seed=1',
        'train.max_steps=1'])
    splits = load_csv_splits(config['data'])
    assert [len(p) for p in parts] == [len(splits.train), len(splits.val),
                                       len(splits.test)]


def test_writes_json_and_table(probe_csv, tmp_path, monkeypatch):
    module = script_module('descriptor_probe')
    monkeypatch.setitem(module.SETS, 'clintox', probe_csv.name)
    out = tmp_path / 'out'
    assert module.main(['--sets', 'clintox', '--seeds', '0', '1',
                        '--source', str(probe_csv.parent),
                        '--output', str(out)]) == 0
    results = json.loads((out / 'probe.json').read_text())
    runs = results['sets']['clintox']
    assert [r['seed'] for r in runs] == [0, 1]
    mean = 100 * np.mean([r['test_rocauc'] for r in runs])
    assert f'| {mean:.2f} ± ' in (out / 'probe.md').read_text()
    assert module.main(['--sets', 'sider', '--source',
                        str(tmp_path / 'none')]) == 2
