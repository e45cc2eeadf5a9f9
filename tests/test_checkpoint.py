"""Checkpoints: exact round trip, clear errors, no pickle."""
import pickle

import pytest
import torch
from conftest import load_real_zinc
from safetensors.torch import save_file
from torch_geometric.data import Batch

from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm
from graphormer_sepnorm.checkpoint import (CheckpointError, ModelCard,
                                           load_model, read_card, save_model)


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
    assert loaded_card.model_config == model.config
    assert (loaded_card.target_mean, loaded_card.target_std) == (0.5, 2.0)
    assert loaded_card.extra == {'seed': 3} and not loaded.training
    batch = Batch.from_data_list(
        [AddShortestPaths()(g) for g in load_real_zinc('val', limit=5)])
    with torch.no_grad():
        torch.testing.assert_close(model(batch), loaded(batch), rtol=0,
                                   atol=0)


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
    with pytest.raises(ValueError, match="'regression' or 'binary'"):
        save_model(tmp_path / 'm.safetensors', small_model(),
                   ModelCard({}, 'zinc', 'classification'))
