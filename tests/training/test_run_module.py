"""metrics.csv is appended at each validation, not rewritten, and after a
resume still holds the rows of the checkpoint (and only those);
train.compile compiles the network in place (checkpoint keys unchanged)."""
import csv
import os
from types import SimpleNamespace

import pytest

from graphormer_sepnorm.training.run_module import RunModule

COLUMNS = ['epoch', 'step', 'val_mae']


def _module(path) -> RunModule:
    module = RunModule({}, metrics_file=str(path))
    module._trainer = SimpleNamespace(is_global_zero=True)
    return module


def _rows(path) -> list[list[str]]:
    with open(path, newline='') as f:
        return list(csv.reader(f))


def test_a_second_validation_appends_its_row(tmp_path):
    path = tmp_path / 'metrics.csv'
    module = _module(path)
    module.append_history({'epoch': 0, 'step': 4, 'val_mae': 0.5}, COLUMNS)
    first, inode = path.read_bytes(), os.stat(path).st_ino
    module.append_history({'epoch': 1, 'step': 8, 'val_mae': float('nan')},
                          COLUMNS)
    # The same file (a rewrite replaces it), the first bytes untouched.
    assert os.stat(path).st_ino == inode
    assert path.read_bytes().startswith(first)
    assert _rows(path) == [COLUMNS, ['0', '4', '0.5'], ['1', '8', '']]


def test_a_resumed_run_keeps_the_checkpoints_rows_only(tmp_path):
    path = tmp_path / 'metrics.csv'
    before = _module(path)
    for epoch in range(3):
        before.append_history({'epoch': epoch, 'step': 4 * (epoch + 1),
                               'val_mae': 1.0 / (epoch + 1)}, COLUMNS)
    # Killed after epoch 2's row but before its checkpoint: the resumed
    # process starts from the history of epochs 0 and 1 and validates
    # epoch 2 again.
    resumed = _module(path)
    resumed.history = [dict(r) for r in before.history[:2]]
    resumed.append_history({'epoch': 2, 'step': 12, 'val_mae': 0.25},
                           COLUMNS)
    resumed.append_history({'epoch': 3, 'step': 16, 'val_mae': 0.2},
                           COLUMNS)
    assert _rows(path) == [COLUMNS, ['0', '4', '1.0'], ['1', '8', '0.5'],
                           ['2', '12', '0.25'], ['3', '16', '0.2']]


def test_a_replaced_row_rewrites_the_file(tmp_path):
    path = tmp_path / 'metrics.csv'
    module = _module(path)
    module.append_history({'epoch': 0, 'step': 4, 'val_mae': 0.5}, COLUMNS)
    module.append_history({'epoch': 1, 'step': 8, 'val_mae': 0.4}, COLUMNS)
    module.append_history({'epoch': 1, 'step': 8, 'val_mae': 0.3}, COLUMNS)
    assert _rows(path) == [COLUMNS, ['0', '4', '0.5'], ['1', '8', '0.3']]


@pytest.mark.parametrize('scope', ['regions', 'model'])
def test_compile_keeps_the_checkpoint_keys(tmp_path, scope):
    import torch
    from graphormer_sepnorm.training.config import load_config
    from graphormer_sepnorm.training.lit_module import GraphormerLitModule
    from training_helpers import CONFIGS, TINY_MODEL
    config = load_config(CONFIGS / 'zinc_subset_sepnorm.yaml',
                         ['train.compile=true',
                          f'train.compile_scope={scope}', *TINY_MODEL],
                         env={}, check_paths=False)
    compiled, plain = GraphormerLitModule(config), GraphormerLitModule(config)
    compiled.on_fit_start()
    # In place: the whole forward, or each region (the layers among them).
    compiled_modules = [name for name, module in compiled.model.named_modules()
                        if module._compiled_call_impl is not None]
    assert compiled_modules == (
        [''] if scope == 'model' else
        ['node_encoder', 'attention_bias',
         *(f'layers.{i}' for i in range(len(compiled.model.layers)))])
    assert all(module._compiled_call_impl is None
               for module in plain.model.modules())
    state = compiled.state_dict()
    assert list(state) == list(plain.state_dict())
    assert not any('_orig_mod' in key for key in state)
    # Round trip through a file into a module that was never compiled.
    torch.save(state, tmp_path / 'state.pt')
    plain.load_state_dict(torch.load(tmp_path / 'state.pt',
                                     weights_only=True))
    for key, value in plain.state_dict().items():
        assert torch.equal(value, state[key]), key


def test_compile_is_off_by_default():
    from graphormer_sepnorm.training.config import load_config
    from graphormer_sepnorm.training.lit_module import GraphormerLitModule
    from training_helpers import CONFIGS, TINY_MODEL
    module = GraphormerLitModule(load_config(
        CONFIGS / 'zinc_subset_sepnorm.yaml', TINY_MODEL, env={},
        check_paths=False))
    module.on_fit_start()
    assert module.model._compiled_call_impl is None
