"""Checkpoints: exact round trip, clear errors, no pickle."""
import os
import pickle
import stat

import pytest
import torch
from conftest import load_real_zinc
from safetensors import safe_open
from safetensors.torch import save_file
from torch_geometric.data import Batch

from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm
from graphormer_sepnorm.checkpoint import (CheckpointError, ModelCard,
                                           load_model, read_card,
                                           resolve_model_file, save_model)


def small_model():
    torch.manual_seed(0)
    model = GraphormerSepNorm(num_layers=2, hidden_channels=16,
                              ffn_channels=16, num_heads=2, max_degree=8)
    for module in model.modules():  # non-default running statistics
        if isinstance(module, torch.nn.BatchNorm1d):
            module.running_mean.uniform_(-1, 1)
            module.running_var.uniform_(0.5, 2)
    return model.eval()


def test_round_trip_is_exact(tmp_path):
    model = small_model()
    card = ModelCard({}, featurizer='zinc', task='regression',
                     target_mean=0.5, target_std=2.0, dataset='zinc_subset',
                     extra={'seed': 3})
    path = save_model(tmp_path / 'model.safetensors', model, card)
    loaded, loaded_card = load_model(path)
    # A model built as 'custom' is saved with its card's featurizer.
    assert loaded_card.model_config == dict(model.config,
                                            featurization='zinc')
    assert (loaded_card.target_mean, loaded_card.target_std) == (0.5, 2.0)
    assert loaded_card.extra == {'seed': 3} and not loaded.training
    batch = Batch.from_data_list(
        [AddShortestPaths()(g) for g in load_real_zinc('val', limit=5)])
    with torch.no_grad():
        torch.testing.assert_close(model(batch), loaded(batch), rtol=0,
                                   atol=0)


@pytest.mark.parametrize('umask, mode', [(0o022, 0o644), (0o077, 0o600),
                                         (0o002, 0o664)])
def test_written_with_the_mode_of_any_new_file(tmp_path, umask, mode):
    """safetensors alone writes 0600: a model shared on a cluster would be
    unreadable by the group."""
    old = os.umask(umask)
    try:
        path = save_model(tmp_path / 'model.safetensors', small_model(),
                          ModelCard({}, featurizer='zinc',
                                    task='regression'))
        assert stat.S_IMODE(path.stat().st_mode) == mode
        assert os.umask(umask) == umask  # the mask is left as it was
    finally:
        os.umask(old)


def test_loading_never_unpickles(tmp_path, monkeypatch):
    path = save_model(tmp_path / 'model.safetensors', small_model(),
                      ModelCard({}, 'zinc', 'regression'))

    def forbidden(*args, **kwargs):
        raise AssertionError('checkpoint loading must not unpickle')

    monkeypatch.setattr(pickle, 'loads', forbidden)
    monkeypatch.setattr(pickle, 'load', forbidden)
    monkeypatch.setattr(torch, 'load', forbidden)
    load_model(path)


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match='does not exist'):
        load_model(tmp_path / 'nope.safetensors')


@pytest.mark.parametrize('given', ['run', 'run/model.safetensors'])
def test_kept_run_without_weights_names_the_commit_holding_them(
        tmp_path, monkeypatch, given):
    """A run kept without its weights (benchmarks/results/ since run
    weights left git): the one-line message says how to restore them from
    the commit that still holds them."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'run').mkdir()
    (tmp_path / 'run' / 'results.json').write_text('{}')
    # resolve_model_file takes a run directory too, load_model the file only.
    loaders = [resolve_model_file] + (
        [load_model] if given.endswith('.safetensors') else [])
    for load in loaders:
        with pytest.raises(CheckpointError) as error:
            load(given)
        assert str(error.value) == (
            "run holds a finished run's results but not its model.safetensors "
            "(run weights are not kept in git): pass the run directory it was "
            "trained in, or restore the weights of a run committed under "
            "benchmarks/results/ from commit cabb7a1 with: git restore "
            "--source=cabb7a1 -- 'run/model.safetensors'")


def test_pickled_torch_file_is_rejected(tmp_path):
    path = tmp_path / 'model.pt'
    torch.save(small_model().state_dict(), path)
    with pytest.raises(CheckpointError, match=r'is a PyTorch pickle '
                       r'\(torch.save\), not a graphormer-sepnorm model '
                       r'checkpoint; it was not loaded'):
        load_model(path)


def test_foreign_safetensors_file_is_rejected(tmp_path):
    path = tmp_path / 'other.safetensors'
    save_file({'weight': torch.zeros(2)}, str(path))
    with pytest.raises(CheckpointError, match='not a graphormer-sepnorm'):
        read_card(path)


def test_newer_format_asks_for_an_upgrade(tmp_path):
    path = tmp_path / 'future.safetensors'
    save_file({'weight': torch.zeros(2)}, str(path),
              metadata={'format': 'graphormer-sepnorm',
                        'format_version': '99', 'package_version': '9.0',
                        'card': '{}'})
    with pytest.raises(CheckpointError, match='upgrade graphormer-sepnorm'):
        load_model(path)


def test_weights_that_do_not_fit_the_config(tmp_path):
    model = small_model()
    path = save_model(tmp_path / 'model.safetensors', model,
                      ModelCard({}, 'zinc', 'regression'))
    tensors = {k: v for k, v in model.state_dict().items()
               if not k.startswith('head.')}
    _, metadata = read_card(path)
    save_file(tensors, str(path), metadata=metadata)
    with pytest.raises(CheckpointError, match='do not match'):
        load_model(path)


def test_invalid_task_is_refused(tmp_path):
    with pytest.raises(ValueError, match="task must be one of 'regression', "
                       "'binary', 'pretraining', got 'classification'"):
        save_model(tmp_path / 'm.safetensors', small_model(),
                   ModelCard({}, 'zinc', 'classification'))


def test_float16_storage_loads_as_float32(tmp_path):
    model = small_model()
    with torch.no_grad():  # Outputs that vary from graph to graph.
        for parameter in model.parameters():
            if parameter.dim() > 1:
                parameter.normal_(0, 0.3)
    fp32 = save_model(tmp_path / 'fp32.safetensors', model,
                      ModelCard({}, 'zinc', 'regression'))
    fp16 = save_model(tmp_path / 'fp16.safetensors', model,
                      ModelCard({}, 'zinc', 'regression'),
                      dtype=torch.float16)
    assert read_card(fp16)[1]['dtype'] == 'float16'
    assert read_card(fp32)[1]['dtype'] == 'float32'
    with safe_open(str(fp16), framework='pt') as f:
        stored = {name: f.get_tensor(name).dtype for name in f.keys()}
    # Every tensor is float16 but batch norm's step counters (int64).
    assert {dtype for name, dtype in stored.items()
            if not name.endswith('num_batches_tracked')} == {torch.float16}
    assert {stored[name] for name in stored
            if name.endswith('num_batches_tracked')} == {torch.int64}
    loaded, _ = load_model(fp16)
    original = model.state_dict()
    for name, tensor in loaded.state_dict().items():
        if original[name].is_floating_point():
            assert tensor.dtype == torch.float32, name
            torch.testing.assert_close(
                tensor, original[name].half().float(), rtol=0, atol=0)
        else:
            assert tensor.dtype == original[name].dtype, name
            assert torch.equal(tensor, original[name]), name
    batch = Batch.from_data_list(
        [AddShortestPaths()(g) for g in load_real_zinc('val', limit=64)])
    with torch.no_grad():
        exact, rounded = model(batch), loaded(batch)
    assert rounded.dtype == torch.float32
    # float16 keeps 11 significant bits (relative rounding <= 2**-11): the
    # outputs move by less than 0.1% of the largest (measured: 0.04%).
    scale = exact.abs().max().item()
    assert (rounded - exact).abs().max().item() < 1e-3 * scale


def test_float16_out_of_range_is_refused(tmp_path):
    model = small_model()
    with torch.no_grad():
        next(model.parameters()).view(-1)[0] = 1e6
    with pytest.raises(ValueError, match='outside the range of '
                       'torch.float16.*dtype=torch.float32'):
        save_model(tmp_path / 'm.safetensors', model,
                   ModelCard({}, 'zinc', 'regression'), dtype=torch.float16)
