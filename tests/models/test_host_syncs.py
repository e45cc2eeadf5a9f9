"""A training step of GraphormerSepNorm (forward, loss, backward) on a
prepared batch reads nothing back from the device: no operation that makes
a CUDA host wait, counted on the CPU with the branches a GPU takes.

The counter sees every ATen operation (a TorchDispatchMode) and flags those
that synchronize on CUDA: reading a value (``item``, ``bool``, ``int``,
``tolist``: ``_local_scalar_dense``), output shapes that depend on values
(``nonzero``, ``masked_select``, boolean-mask indexing, ``unique``,
``bincount``, ``repeat_interleave`` without ``output_size``) and copies to
the host."""
import pytest
import torch
from conftest import laid_out, load_real_zinc
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch_geometric.data import Batch

import graphormer_sepnorm.nn.attention as attention
import graphormer_sepnorm.nn.categorical_embedding as categorical
import graphormer_sepnorm.nn.dropout as dropout
from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm

aten = torch.ops.aten
SYNCING = {aten._local_scalar_dense.default, aten.nonzero.default,
           aten.masked_select.default, aten.bincount.default,
           aten._unique2.default, aten.unique_dim.default,
           aten.unique_consecutive.default, aten.masked_scatter.default,
           aten.repeat_interleave.Tensor, aten.equal.default,
           aten.is_nonzero.default}


#: Tensor methods that hand values to Python without an ATen operation on
#: the CPU (seen one level up, as torch functions).
READING = {torch.Tensor.tolist, torch.Tensor.numpy, torch.Tensor.item,
           torch.Tensor.__bool__, torch.Tensor.__int__,
           torch.Tensor.__float__, torch.Tensor.__index__}


class _ReadCounter(TorchFunctionMode):
    def __init__(self, syncs):
        super().__init__()
        self.syncs = syncs

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in READING:
            self.syncs.append(func.__name__)
        return func(*args, **(kwargs or {}))


class HostSyncCounter(TorchDispatchMode):
    """Records the operations that would make a CUDA host wait."""
    def __init__(self):
        super().__init__()
        self.syncs = []
        self._reads = _ReadCounter(self.syncs)

    def __enter__(self):
        self._reads.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        super().__exit__(*exc)
        return self._reads.__exit__(*exc)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self._syncs(func, args, kwargs):
            self.syncs.append(str(func))
        return func(*args, **kwargs)

    @staticmethod
    def _syncs(func, args, kwargs):
        if func in SYNCING:
            return not (func is aten.repeat_interleave.Tensor
                        and kwargs.get('output_size') is not None)
        if func in (aten.index.Tensor, aten.index_put.default,
                    aten.index_put_.default):
            indices = args[1]
            return any(i is not None and i.dtype == torch.bool
                       for i in indices)
        if func in (aten._to_copy.default, aten.copy_.default):
            target = kwargs.get('device')
            return target is not None and torch.device(target).type == 'cpu'
        return False


@pytest.fixture
def gpu_branches(monkeypatch):
    """The branches the model takes on a GPU, on the CPU: no host-side
    value checks, the fused attention, PyTorch's own dropout."""
    monkeypatch.setattr(categorical, 'reads_back_cheaply', lambda t: False)
    monkeypatch.setattr(attention, '_unfused_is_faster',
                        lambda qkv, length, dropout: False)
    monkeypatch.setattr(dropout.Dropout, 'forward',
                        lambda self, x: torch.nn.functional.dropout(
                            x, self.p, self.training))


def test_the_counter_sees_what_syncs():
    x = torch.arange(6.0)
    with HostSyncCounter() as counter:
        x.sum().item()
        bool(x.any())
        x[x > 2]
        x.nonzero()
        torch.bincount(x.long())
        x.tolist()
        x.numpy()
    for seen in ('item', '__bool__', 'aten.index.Tensor', 'tolist',
                 'aten.nonzero.default', 'aten.bincount.default', 'numpy'):
        assert seen in counter.syncs, (seen, counter.syncs)


@pytest.mark.parametrize('norm', ['sep', 'share'])
@pytest.mark.parametrize('num_buckets', [1, 4])
def test_training_step_makes_no_host_sync(gpu_branches, norm, num_buckets):
    graphs = [AddShortestPaths()(g) for g in load_real_zinc('val', limit=64)]
    model = GraphormerSepNorm(num_layers=2, hidden_channels=32,
                              ffn_channels=32, num_heads=4, norm=norm,
                              dropout=0.1, attention_buckets=num_buckets)
    batch, _ = laid_out(Batch.from_data_list(graphs),
                        **model.layout_options())
    model.train()
    with HostSyncCounter() as counter:
        loss = (model(batch).squeeze(-1) - batch.y).abs().mean()
        loss.backward()
    assert counter.syncs == []
    assert all(p.grad is not None for p in model.parameters())


def test_the_eager_cpu_path_still_checks_vocabularies():
    """Outside the GPU branches the ids are read back to give a clear error
    (the counter sees it), so the fixture above is what removes it."""
    graphs = [AddShortestPaths()(g) for g in load_real_zinc('val', limit=4)]
    model = GraphormerSepNorm(num_layers=1, hidden_channels=16,
                              ffn_channels=16, num_heads=2)
    batch, _ = laid_out(Batch.from_data_list(graphs),
                        **model.layout_options())
    with HostSyncCounter() as counter:
        model(batch)
    assert '__bool__' in counter.syncs
