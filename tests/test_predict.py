"""Tests for graphormer_sepnorm.predict, the bundled-model registry and
scripts/predict.py, with small random models saved by save_model."""
import csv
import gzip
import importlib.util
import math
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file
from torch_geometric.data import Batch, Data

from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm
from graphormer_sepnorm import predict as predict_module
from graphormer_sepnorm.bundled import (ENV_VAR, BundledModelNotInstalled,
                                        available_bundled_models)
from graphormer_sepnorm.checkpoint import CheckpointError, ModelCard, save_model
from graphormer_sepnorm.data.featurize import (smiles_to_ogb_graph,
                                               smiles_to_zinc_graph)
from graphormer_sepnorm.predict import (Prediction, PredictionError,
                                        Predictor, collate)

from conftest import REPO, load_real_zinc, shared_path

SCRIPT = REPO / 'scripts' / 'predict.py'
MAX_NODES = 40  # The ZINC test model's limit (ZINC molecules have <= 38).
MEAN, STD = 1.5, 2.0


@pytest.fixture(autouse=True, scope='module')
def _one_thread():
    """Tiny test models gain nothing from intra-op threads, which cost a lot
    when the cores are shared with other processes."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _randomize_norm_stats(model: GraphormerSepNorm, seed: int) -> None:
    """Random batch-norm running statistics, so that evaluation mode and
    batching independence are really exercised."""
    gen = torch.Generator().manual_seed(seed)
    for name, buf in model.named_buffers():
        if name.endswith('running_mean'):
            buf.copy_(torch.randn(buf.shape, generator=gen) * 0.1)
        elif name.endswith('running_var'):
            buf.copy_(torch.rand(buf.shape, generator=gen) + 0.5)


def _small_model(seed: int, **kwargs) -> GraphormerSepNorm:
    torch.manual_seed(seed)
    model = GraphormerSepNorm(num_layers=2, hidden_channels=16,
                              ffn_channels=16, num_heads=4, **kwargs)
    # Larger weights than Graphormer's std=0.02 init: distinct outputs.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0, 0.3)
    _randomize_norm_stats(model, seed)
    return model.eval()


@pytest.fixture(scope='module')
def zinc_ckpt(tmp_path_factory) -> Path:
    model = _small_model(0, max_nodes=MAX_NODES)
    path = tmp_path_factory.mktemp('zinc') / 'model.safetensors'
    save_model(path, model, ModelCard({}, 'zinc', 'regression', MEAN, STD,
                                      'zinc_subset'))
    return path


@pytest.fixture(scope='module')
def ogb_ckpt(tmp_path_factory) -> Path:
    from ogb.utils.features import (get_atom_feature_dims,
                                    get_bond_feature_dims)
    model = _small_model(1, atom_vocab_sizes=get_atom_feature_dims(),
                         bond_vocab_sizes=get_bond_feature_dims())
    path = tmp_path_factory.mktemp('ogb') / 'model.safetensors'
    save_model(path, model, ModelCard({}, 'ogb', 'binary', dataset='molhiv'))
    return path


@pytest.fixture(scope='module')
def zinc(zinc_ckpt) -> Predictor:
    return Predictor.from_checkpoint(zinc_ckpt)


@pytest.fixture(scope='module')
def ogb(ogb_ckpt) -> Predictor:
    return Predictor.from_checkpoint(ogb_ckpt)


@pytest.fixture(scope='module')
def zinc_smiles() -> list[str]:
    path = shared_path('zinc250k', 'jtvae_test.txt')
    return path.read_text().split()[:300]


def _raw_output(model: GraphormerSepNorm, graphs: list[Data]) -> torch.Tensor:
    """The model's raw output on PyG graphs batched the standard way."""
    transform = AddShortestPaths(model.max_nodes)
    batch = Batch.from_data_list([transform(g.clone()) for g in graphs])
    with torch.no_grad():
        return model(batch).view(-1)


# Values ######################################################################


def test_real_zinc_smiles(zinc, zinc_smiles):
    predictions = zinc.predict(zinc_smiles[:60], batch_size=32)
    assert [p.smiles for p in predictions] == zinc_smiles[:60]
    assert all(p.ok and p.error is None for p in predictions)
    values = np.array([p.value for p in predictions])
    assert np.isfinite(values).all() and values.std() > 0


def test_batched_equals_one_at_a_time(zinc, zinc_smiles):
    smiles = zinc_smiles[:40]
    batched = zinc.predict(smiles, batch_size=16, num_workers=0)
    single = [zinc.predict([s], num_workers=0)[0] for s in smiles]
    for b, s in zip(batched, single):
        assert b.value == pytest.approx(s.value, abs=1e-5)


def test_worker_processes_equal_in_process(zinc, zinc_smiles):
    smiles = zinc_smiles[:120] + ['bad smiles', 'CC[Se]C']
    local = zinc.predict(smiles, batch_size=64, num_workers=0)
    pooled = zinc.predict(smiles, batch_size=64, num_workers=2)
    assert [p.smiles for p in pooled] == smiles
    assert [p.error for p in pooled] == [p.error for p in local]
    for a, b in zip(local, pooled):
        if a.ok:
            assert b.value == pytest.approx(a.value, abs=1e-5)
    assert not pooled[-1].ok and not pooled[-2].ok
    assert zinc._num_workers(len(smiles), 2) == 2


def test_regression_denormalization_by_hand(zinc, zinc_smiles):
    smiles = zinc_smiles[:20]
    raw = _raw_output(zinc.model, [smiles_to_zinc_graph(s) for s in smiles])
    values = [p.value for p in zinc.predict(smiles)]
    expected = (raw.double() * STD + MEAN).tolist()
    assert values == pytest.approx(expected, abs=1e-5)
    # The raw outputs differ from the values (the mapping was applied).
    assert not np.allclose(values, raw.tolist(), atol=1e-3)


def test_binary_sigmoid_by_hand(ogb, molhiv_smiles):
    smiles = molhiv_smiles[:40]
    predictions = ogb.predict(smiles, batch_size=8)
    ok = [(s, p) for s, p in zip(smiles, predictions) if p.ok]
    assert len(ok) >= 38
    raw = _raw_output(ogb.model, [smiles_to_ogb_graph(s) for s, _ in ok])
    expected = [1 / (1 + math.exp(-v)) for v in raw.tolist()]
    assert [p.value for _, p in ok] == pytest.approx(expected, abs=1e-6)
    assert all(0 < p.value < 1 for _, p in ok)


def test_fast_collate_equals_from_data_list(zinc, zinc_smiles):
    graphs = [zinc._prepare(s) for s in zinc_smiles[:10] + ['CCO.CC', 'C']]
    fast = collate(graphs)
    transform = AddShortestPaths(MAX_NODES)
    reference = Batch.from_data_list([
        transform(smiles_to_zinc_graph(s))
        for s in zinc_smiles[:10] + ['CCO.CC', 'C']])
    for key in ('x', 'edge_index', 'edge_attr', 'spd', 'path_next', 'batch',
                'ptr'):
        assert torch.equal(fast[key], reference[key]), key
    assert fast.num_graphs == reference.num_graphs


def test_matches_real_zinc_graphs(zinc):
    """Featurized JT-VAE SMILES whose graph equals the real PyG ZINC graph
    exactly (same atom order) must give the model's output on the real
    graph."""
    real = load_real_zinc('val', limit=100)
    index_text = shared_path('ZINC', 'raw', 'val.index').read_text()
    index = [int(i) for i in index_text.strip().split(',')]
    lines = shared_path('zinc250k', 'jtvae_valid.txt').read_text().split()
    same, smiles = [], []
    for k, graph in enumerate(real):
        s = lines[index[k]]
        mine = smiles_to_zinc_graph(s)
        if (torch.equal(mine.x, graph.x.view(-1, 1)) and
                torch.equal(mine.edge_index, graph.edge_index) and
                torch.equal(mine.edge_attr, graph.edge_attr.view(-1))):
            same.append(graph)
            smiles.append(s)
    assert len(same) >= 15, len(same)
    raw = _raw_output(zinc.model, [
        Data(x=g.x.view(-1, 1), edge_index=g.edge_index,
             edge_attr=g.edge_attr.view(-1)) for g in same])
    values = [p.value for p in zinc.predict(smiles, batch_size=16)]
    assert values == pytest.approx((raw.double() * STD + MEAN).tolist(),
                                   abs=1e-5)


# Order and batching ##########################################################


def test_order_preserved_with_mixed_rows_and_size_sorting(zinc, zinc_smiles,
                                                          monkeypatch):
    good = zinc_smiles[:30]
    bad = ['', 'C1CC', 'CC[Si](C)C', 'C' * (MAX_NODES + 1), '   ', 'xyz']
    smiles = []
    for i, s in enumerate(good):
        smiles.append(s)
        if i % 5 == 0:
            smiles.append(bad[i // 5])
    batch_sizes = []
    original = predict_module.collate

    def recording_collate(graphs):
        batch_sizes.append([g[0].shape[0] for g in graphs])
        return original(graphs)

    monkeypatch.setattr(predict_module, 'collate', recording_collate)
    predictions = zinc.predict(smiles, batch_size=8, num_workers=0)
    monkeypatch.undo()
    assert [p.smiles for p in predictions] == smiles
    assert [p.ok for p in predictions] == [s in good for s in smiles]
    # Batches were filled in order of size:
    flat = [n for sizes in batch_sizes for n in sizes]
    assert flat == sorted(flat) and len(flat) == len(good)
    singles = {s: zinc.predict([s])[0].value for s in good}
    for s, p in zip(smiles, predictions):
        if p.ok:
            assert p.value == pytest.approx(singles[s], abs=1e-5)


def test_table_and_prediction_object(zinc):
    table = zinc.predict_table(['CCO', 'nonsense'])
    assert table[0]['smiles'] == 'CCO' and table[0]['error'] is None
    assert isinstance(table[0]['prediction'], float)
    assert table[1]['prediction'] is None and 'nonsense' in table[1]['error']
    assert Prediction('C', 1.0).ok and not Prediction('C', error='x').ok
    with pytest.raises(PredictionError, match='sequence'):
        zinc.predict('CCO')
    with pytest.raises(PredictionError, match='batch_size'):
        zinc.predict(['CCO'], batch_size=0)
    assert zinc.predict([]) == []


# Bad input, per row ##########################################################


@pytest.mark.parametrize('smiles,message', [
    ('C1CC', 'could not be parsed'),
    ('CXC', 'not valid SMILES syntax'),
    ('C(C)(C)(C)(C)C', 'valence'),
    ('', 'empty'),
    ('  ', 'empty'),
    (None, 'Expected a SMILES string'),
    ('CC[Si](C)C', "atom 2 is 'Si'"),
    ('CC[B-](F)(F)F', 'ZINC vocabulary'),
    ('C[Se]C', "'Se'"),
    ('CC(=O)[O-].[Na+]', "'Na +'"),
    ('[Fe+2]', 'ZINC vocabulary'),
    ('C' * (MAX_NODES + 1), f'max_nodes={MAX_NODES}'),
])
def test_per_row_errors(zinc, smiles, message):
    predictions = zinc.predict(['CCO', smiles, 'c1ccccc1O'])
    assert predictions[0].ok and predictions[2].ok
    assert predictions[1].value is None
    assert message in predictions[1].error
    assert predictions[1].smiles == smiles


def test_disconnected_molecules_are_predicted(zinc, ogb):
    salt = 'C[NH3+].CC(=O)[O-]'  # Both ions are in the ZINC vocabulary.
    p = zinc.predict([salt])[0]
    assert p.ok
    raw = _raw_output(zinc.model, [smiles_to_zinc_graph(salt)])
    assert smiles_to_zinc_graph(salt).num_nodes == 6  # Both fragments kept.
    assert p.value == pytest.approx(float(raw[0]) * STD + MEAN, abs=1e-5)
    # Not the same as either fragment alone:
    alone = [q.value for q in zinc.predict(salt.split('.'))]
    assert all(abs(p.value - v) > 1e-6 for v in alone)
    # Sodium acetate: outside the ZINC vocabulary, fine for the OGB model.
    assert not zinc.predict(['CC(=O)[O-].[Na+]'])[0].ok
    assert ogb.predict(['CC(=O)[O-].[Na+]'])[0].ok


def test_model_failure_is_per_row(zinc, zinc_smiles, monkeypatch):
    """A molecule the model itself rejects loses only its own row."""
    real_forward = zinc.model.forward

    def forward(batch):
        if (batch.ptr[1:] - batch.ptr[:-1]).eq(1).any():
            raise ValueError('single atoms rejected for this test')
        return real_forward(batch)

    monkeypatch.setattr(zinc.model, 'forward', forward)
    predictions = zinc.predict(zinc_smiles[:5] + ['C'] + zinc_smiles[5:9],
                               num_workers=0)
    assert [p.ok for p in predictions] == [True] * 5 + [False] + [True] * 4
    assert 'single atoms rejected' in predictions[5].error


# CSV #########################################################################


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with open(path, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_predict_csv(zinc, zinc_smiles, tmp_path):
    smiles = [zinc_smiles[0], 'bad', '', zinc_smiles[1], 'CC[Si](C)C']
    src = _write_csv(tmp_path / 'in.csv', ['id', 'mol'],
                     [[str(i), s] for i, s in enumerate(smiles)])
    out = tmp_path / 'out' / 'pred.csv'
    predictions = zinc.predict_csv(src, out, smiles_column='mol')
    with open(out, newline='') as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ['id', 'mol', 'prediction', 'error']
    assert [r['id'] for r in rows] == ['0', '1', '2', '3', '4']
    assert [r['mol'] for r in rows] == smiles
    assert [bool(r['prediction']) for r in rows] == [True, False, False,
                                                     True, False]
    assert [bool(r['error']) for r in rows] == [False, True, True, False,
                                                True]
    assert float(rows[0]['prediction']) == pytest.approx(
        predictions[0].value, abs=1e-12)


def test_predict_gzipped_csv(zinc, tmp_path):
    src = tmp_path / 'in.csv.gz'
    with gzip.open(src, 'wt', newline='') as f:
        f.write('smiles,label\nCCO,1\nc1ccccc1,0\n')
    predictions = zinc.predict_csv(src, tmp_path / 'out.csv')
    assert [p.ok for p in predictions] == [True, True]


def test_csv_errors(zinc, tmp_path):
    src = _write_csv(tmp_path / 'in.csv', ['id', 'SMILES'], [['0', 'CCO']])
    with pytest.raises(PredictionError) as exc:
        zinc.predict_csv(src, tmp_path / 'out.csv', smiles_column='smiles')
    assert "no column 'smiles'" in str(exc.value)
    assert "'id', 'SMILES'" in str(exc.value)
    with pytest.raises(PredictionError, match='does not exist'):
        zinc.predict_csv(tmp_path / 'missing.csv', tmp_path / 'out.csv')
    binary = tmp_path / 'binary.csv'
    binary.write_bytes(b'\xff\xfe\x00\x81' * 100)
    with pytest.raises(PredictionError, match='Cannot read'):
        zinc.predict_csv(binary, tmp_path / 'out.csv')
    with pytest.raises(PredictionError, match='does not exist'):
        zinc.predict_csv(tmp_path, tmp_path / 'out.csv')
    empty = tmp_path / 'empty.csv'
    empty.write_text('')
    with pytest.raises(PredictionError, match="columns present: none"):
        zinc.predict_csv(empty, tmp_path / 'out.csv')


# Checkpoints #################################################################


def test_checkpoint_errors(tmp_path):
    with pytest.raises(CheckpointError, match='does not exist'):
        Predictor.from_checkpoint(tmp_path / 'missing.safetensors')
    text = tmp_path / 'notes.safetensors'
    text.write_text('not a checkpoint at all')
    with pytest.raises(CheckpointError, match='not a readable safetensors'):
        Predictor.from_checkpoint(text)
    foreign = tmp_path / 'foreign.safetensors'
    save_file({'weight': torch.zeros(2, 2)}, str(foreign))
    with pytest.raises(CheckpointError, match='not a graphormer-sepnorm'):
        Predictor.from_checkpoint(foreign)
    with pytest.raises(CheckpointError):
        Predictor.from_checkpoint(tmp_path)  # A directory without a model.


def test_run_directory(zinc_ckpt):
    predictor = Predictor.from_checkpoint(zinc_ckpt.parent)
    assert predictor.source == str(zinc_ckpt)


class _Exploit:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (Path(self.marker), 'pwned'))


def test_malicious_pickle_checkpoint_is_rejected(tmp_path):
    marker = tmp_path / 'marker.txt'
    path = tmp_path / 'model.safetensors'
    with open(path, 'wb') as f:
        pickle.dump({'state_dict': _Exploit(str(marker))}, f)
    torch.save({'model': _Exploit(str(marker))}, tmp_path / 'model.pt')
    for candidate in (path, tmp_path / 'model.pt'):
        with pytest.raises(CheckpointError):
            Predictor.from_checkpoint(candidate)
    assert not marker.exists()


def test_loading_and_predicting_never_unpickle(zinc_ckpt, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError('unpickling during checkpoint loading')

    for module, name in ((pickle, 'load'), (pickle, 'loads'),
                         (pickle, 'Unpickler'), (torch, 'load')):
        monkeypatch.setattr(module, name, forbidden)
    predictor = Predictor.from_checkpoint(zinc_ckpt)
    assert predictor.predict(['CCO'], num_workers=0)[0].ok


def test_bad_device(zinc_ckpt):
    with pytest.raises(PredictionError, match='device'):
        Predictor.from_checkpoint(zinc_ckpt, device='no_such_device')


# Bundled models ##############################################################


def test_bundled_not_installed(tmp_path):
    with pytest.raises(BundledModelNotInstalled) as exc:
        Predictor.from_bundled('zinc', directory=tmp_path)
    msg = str(exc.value)
    assert 'No bundled' in msg
    assert ('python scripts/train.py --config '
            'configs/zinc_subset_sepnorm.yaml') in msg
    assert '--checkpoint runs/<run>/model.safetensors' in msg
    assert isinstance(exc.value, CheckpointError)
    with pytest.raises(ValueError, match='molhiv, zinc'):
        Predictor.from_bundled('qm9', directory=tmp_path)


def test_bundled_drop_in(zinc_ckpt, ogb_ckpt, tmp_path, monkeypatch):
    (tmp_path / 'zinc_subset_sepnorm.safetensors').write_bytes(
        zinc_ckpt.read_bytes())
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    assert available_bundled_models() == ['zinc']
    predictor = Predictor.from_bundled('ZINC')
    direct = Predictor.from_checkpoint(zinc_ckpt).predict(['CCO'])[0].value
    assert predictor.predict(['CCO'])[0].value == direct
    # A checkpoint of the wrong kind under a bundled name is refused.
    (tmp_path / 'molhiv_sepnorm.safetensors').write_bytes(
        zinc_ckpt.read_bytes())
    with pytest.raises(CheckpointError, match="featurizer='zinc'"):
        Predictor.from_bundled('molhiv')
    (tmp_path / 'molhiv_sepnorm.safetensors').write_bytes(
        ogb_ckpt.read_bytes())
    assert Predictor.from_bundled('molhiv').predict(['CCO'])[0].ok


# CLI #########################################################################


def _cli_module():
    spec = importlib.util.spec_from_file_location('predict_cli', SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_cli(*args: str, env: dict = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}, cwd=REPO)


def test_cli_smiles_table(zinc_ckpt, zinc):
    result = _run_cli('--checkpoint', str(zinc_ckpt), '--smiles', 'CCO',
                      'c1ccccc1O', 'C1CC')
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ['smiles', 'prediction', 'error']
    assert lines[1].startswith('CCO ')
    value = float(lines[1].split()[1])
    assert value == pytest.approx(zinc.predict(['CCO'])[0].value, rel=1e-5)
    assert lines[3].startswith('C1CC') and 'could not be parsed' in lines[3]
    assert 'Traceback' not in result.stderr


def test_cli_csv_roundtrip(zinc_ckpt, zinc_smiles, tmp_path):
    smiles = zinc_smiles[:5] + ['', 'CC[Si](C)C']
    src = _write_csv(tmp_path / 'in.csv', ['name', 'smi'],
                     [[f'm{i}', s] for i, s in enumerate(smiles)])
    out = tmp_path / 'pred.csv'
    result = _run_cli('--checkpoint', str(zinc_ckpt), '--input', str(src),
                      '--smiles-column', 'smi', '--output', str(out),
                      '--batch-size', '4', '--device', 'cpu')
    assert result.returncode == 0, result.stderr
    with open(out, newline='') as f:
        rows = list(csv.DictReader(f))
    assert [r['name'] for r in rows] == [f'm{i}' for i in range(7)]
    assert all(r['prediction'] and not r['error'] for r in rows[:5])
    assert 'empty' in rows[5]['error'] and "'Si'" in rows[6]['error']
    assert 'Wrote 7 rows' in result.stderr


def test_cli_per_call_errors_subprocess(tmp_path):
    result = _run_cli('--model', 'zinc', '--smiles', 'CCO',
                      env={ENV_VAR: str(tmp_path)})
    assert result.returncode == 2
    assert result.stderr.count('\n') == 1 and 'Traceback' not in result.stderr
    assert 'No bundled' in result.stderr
    assert 'configs/zinc_subset_sepnorm.yaml' in result.stderr


@pytest.mark.parametrize('case', ['missing_checkpoint', 'text_checkpoint',
                                  'foreign_safetensors', 'missing_column',
                                  'missing_csv', 'bad_device',
                                  'bad_batch_size'])
def test_cli_per_call_errors(case, zinc_ckpt, tmp_path, capsys):
    cli = _cli_module()
    csv_path = _write_csv(tmp_path / 'in.csv', ['id', 'mol'], [['0', 'C']])
    text = tmp_path / 'x.safetensors'
    text.write_text('hello')
    foreign = tmp_path / 'f.safetensors'
    save_file({'w': torch.zeros(1)}, str(foreign))
    ckpt = ['--checkpoint', str(zinc_ckpt)]
    args, expected = {
        'missing_checkpoint': (['--checkpoint', str(tmp_path / 'none'),
                                '--smiles', 'C'], 'does not exist'),
        'text_checkpoint': (['--checkpoint', str(text), '--smiles', 'C'],
                            'not a readable safetensors'),
        'foreign_safetensors': (['--checkpoint', str(foreign), '--smiles',
                                 'C'], 'not a graphormer-sepnorm'),
        'missing_column': (ckpt + ['--input', str(csv_path)],
                           "no column 'smiles' (columns present: 'id', "
                           "'mol')"),
        'missing_csv': (ckpt + ['--input', str(tmp_path / 'none.csv')],
                        'does not exist'),
        'bad_device': (ckpt + ['--smiles', 'C', '--device', 'nonsense'],
                       'device'),
        'bad_batch_size': (ckpt + ['--smiles', 'C', '--batch-size', '0'],
                           'batch-size'),
    }[case]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: ') and err.count('\n') == 1
    assert expected in err


def test_cli_help(capsys):
    with pytest.raises(SystemExit) as exc:
        _cli_module().main(['--help'])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for flag in ('--checkpoint', '--model', '--smiles', '--input',
                 '--smiles-column', '--output', '--batch-size', '--device'):
        assert flag in out
