"""Tests for graphormer_sepnorm.predict.predictor (values, order, per-row
errors, checkpoints, bundled models), with small random models saved by
save_model."""
import math
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file
from torch_geometric.data import Batch, Data

from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm
from graphormer_sepnorm.bundled import (BUNDLED_MODELS, ENV_VAR,
                                        BundledModelNotInstalled,
                                        available_bundled_models)
from graphormer_sepnorm.checkpoint import CheckpointError
from graphormer_sepnorm.data.featurize import (smiles_to_ogb_graph,
                                               smiles_to_zinc_graph)
from graphormer_sepnorm.predict import (Prediction, PredictionError,
                                        Predictor, collate)
from graphormer_sepnorm.predict import running as running_module

from conftest import load_real_zinc, shared_path
from predict_helpers import (MAX_NODES, MEAN, STD, ogb, ogb_ckpt,  # noqa
                             one_thread, save_ogb_model, zinc, zinc_ckpt,
                             zinc_smiles)


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
        assert torch.equal(getattr(fast, key), reference[key]), key
        assert getattr(fast, key).dtype == reference[key].dtype, key
    assert fast.num_graphs == reference.num_graphs
    assert fast.num_nodes == reference.num_nodes


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
    original = running_module.collate

    def recording_collate(graphs, layout=None):
        batch_sizes.append([g[0].shape[0] for g in graphs])
        return original(graphs, layout)

    monkeypatch.setattr(running_module, 'collate', recording_collate)
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
    real_encoder = zinc.model.graph_embedding

    def encoder(batch):
        if (batch.ptr[1:] - batch.ptr[:-1]).eq(1).any():
            raise ValueError('single atoms rejected for this test')
        return real_encoder(batch)

    monkeypatch.setattr(zinc.model, 'graph_embedding', encoder)
    predictions = zinc.predict(zinc_smiles[:5] + ['C'] + zinc_smiles[5:9],
                               num_workers=0)
    assert [p.ok for p in predictions] == [True] * 5 + [False] + [True] * 4
    assert 'single atoms rejected' in predictions[5].error


@pytest.mark.parametrize('error', [
    RuntimeError('CUDA error: device-side assert triggered\nCUDA kernel '
                 'errors might be asynchronously reported'),
    torch.cuda.OutOfMemoryError('CUDA out of memory. Tried to allocate 2 GiB'),
    RuntimeError('CUBLAS_STATUS_EXECUTION_FAILED when calling cublasSgemm'),
])
def test_a_device_error_stops_instead_of_retrying_each_molecule(
        zinc, zinc_smiles, monkeypatch, error):
    calls = []

    def encoder(batch):
        calls.append(batch.num_graphs)
        raise error

    monkeypatch.setattr(zinc.model, 'graph_embedding', encoder)
    with pytest.raises(PredictionError) as raised:
        zinc.predict(zinc_smiles[:6], batch_size=8, num_workers=0)
    message = str(raised.value)
    assert '\n' not in message and 'stopped' in message
    assert str(error).splitlines()[0] in message
    assert calls == [6]  # no molecule-by-molecule retry


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
            f'{BUNDLED_MODELS["zinc"].train_config}') in msg
    assert '--checkpoint runs/<run>/model.safetensors' in msg
    assert isinstance(exc.value, CheckpointError)
    with pytest.raises(ValueError,
                       match='molhiv, molhiv-single, zinc, zinc-single'):
        Predictor.from_bundled('qm9', directory=tmp_path)


def test_bundled_drop_in(zinc_ckpt, ogb_ckpt, tmp_path, monkeypatch):
    # The bundled ZINC model takes OGB features (trained from SMILES).
    regression = save_ogb_model(tmp_path / 'regression.safetensors',
                                task='regression')
    (tmp_path / 'zinc_seed0.safetensors').write_bytes(
        regression.read_bytes())
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    assert available_bundled_models() == ['zinc', 'zinc-single']
    predictor = Predictor.from_bundled('ZINC')
    direct = Predictor.from_checkpoint(regression).predict(['CCO'])[0].value
    assert predictor.predict(['CCO'])[0].value == direct
    # A checkpoint of the wrong kind under a bundled name is refused.
    (tmp_path / 'molhiv_seed0.safetensors').write_bytes(
        zinc_ckpt.read_bytes())
    with pytest.raises(CheckpointError, match="featurizer='zinc'"):
        Predictor.from_bundled('molhiv')
    (tmp_path / 'molhiv_seed0.safetensors').write_bytes(
        ogb_ckpt.read_bytes())
    assert Predictor.from_bundled('molhiv').predict(['CCO'])[0].ok


# Training checkpoints given to predict (issue 12, item 5) ###################


def _training_run(tmp_path: Path, zinc_ckpt: Path, finished: bool) -> Path:
    """A run directory as scripts/train.py leaves it: a Lightning-style
    checkpoint (torch.save's zip archive, here with a payload that would
    write a marker if it were ever unpickled), config.yaml and, once
    training ended, model.safetensors."""
    run = tmp_path / 'runs' / 'zinc_seed0'
    (run / 'checkpoints').mkdir(parents=True)
    (run / 'config.yaml').write_text('seed: 0\n')
    marker = tmp_path / 'unpickled.txt'
    for name in ('last.ckpt', 'best.ckpt'):
        torch.save({'state_dict': {}, 'payload': _Exploit(str(marker))},
                   run / 'checkpoints' / name)
    if finished:
        (run / 'model.safetensors').write_bytes(zinc_ckpt.read_bytes())
    return run


@pytest.mark.parametrize('name', ['last.ckpt', 'best.ckpt'])
def test_training_checkpoint_of_a_finished_run_names_the_run(
        name, zinc_ckpt, tmp_path):
    run = _training_run(tmp_path, zinc_ckpt, finished=True)
    with pytest.raises(CheckpointError) as exc:
        Predictor.from_checkpoint(run / 'checkpoints' / name)
    message = str(exc.value)
    assert 'is a Lightning training checkpoint' in message
    assert 'not loaded' in message
    assert f'pass the run directory {run}' in message
    assert '\n' not in message
    assert not (tmp_path / 'unpickled.txt').exists()
    # What the message says to pass works, and so does the checkpoints/
    # folder itself.
    assert Predictor.from_checkpoint(run).source == str(
        run / 'model.safetensors')
    assert Predictor.from_checkpoint(run / 'checkpoints').source == str(
        run / 'model.safetensors')


def test_training_checkpoint_of_an_unfinished_run(zinc_ckpt, tmp_path):
    run = _training_run(tmp_path, zinc_ckpt, finished=False)
    for path in (run / 'checkpoints' / 'last.ckpt', run,
                 run / 'checkpoints'):
        with pytest.raises(CheckpointError) as exc:
            Predictor.from_checkpoint(path)
        message = str(exc.value)
        assert f'The training run {run} has no model.safetensors yet' \
            in message, message
        # The command that continues the run from any working directory
        # (--config <run>/config.yaml --resume would look for the run under
        # its output_dir, relative to where training started)
        assert f'continue it with scripts/train.py --resume {run})' \
            in message and '\n' not in message
    assert not (tmp_path / 'unpickled.txt').exists()


def test_folder_without_a_model(tmp_path):
    with pytest.raises(CheckpointError, match='folder without '
                       'model.safetensors'):
        Predictor.from_checkpoint(tmp_path)


# Fingerprint and streaming ###################################################


def test_fingerprint_identifies_model_and_card(zinc_ckpt, zinc):
    again = Predictor.from_checkpoint(zinc_ckpt)
    assert again.fingerprint == zinc.fingerprint
    assert len(zinc.fingerprint) == 64
    changed = Predictor.from_checkpoint(zinc_ckpt)
    with torch.no_grad():
        next(changed.model.parameters()).view(-1)[0] += 1e-3
    changed._fingerprint = None
    assert changed.fingerprint != zinc.fingerprint
    other_card = Predictor.from_checkpoint(zinc_ckpt)
    other_card.card.target_mean += 1
    other_card._fingerprint = None
    assert other_card.fingerprint != zinc.fingerprint


def test_predict_iter_streams_lazily_in_order(zinc, zinc_smiles):
    consumed = []

    def source():
        for s in zinc_smiles[:100]:
            consumed.append(s)
            yield s

    stream = zinc.predict_iter(source(), batch_size=8, num_workers=0,
                               chunk_size=10)
    first = next(stream)
    # Two chunks are read ahead to decide on worker processes; no more.
    assert first.smiles == zinc_smiles[0] and len(consumed) <= 20
    rest = list(stream)
    assert [p.smiles for p in [first] + rest] == zinc_smiles[:100]
    listed = zinc.predict(zinc_smiles[:100], batch_size=8, num_workers=0,
                          chunk_size=10)
    assert [p.value for p in [first] + rest] == [p.value for p in listed]
