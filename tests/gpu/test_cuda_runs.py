"""Training, resuming, evaluating and predicting on CUDA, through the same
entry points as users: the CUDA random state survives --resume (dropout on),
evaluate and Predictor give the CPU's numbers, and two data-parallel
processes on one GPU compute the one-process gradient with global
batch-norm statistics."""
import csv
import os
import sys

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from conftest import laid_out, load_real_zinc
from torch_geometric.data import Batch

from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm
from graphormer_sepnorm.predict import Predictor
from graphormer_sepnorm.cli.train import evaluate_main, train_main

# CI has no GPU: everything here skips there; benchmarks/gpu_check.py runs
# it on a lent GPU. Where the same logic runs on the CPU, its test lives
# beside the code's other tests (tests/models/test_host_syncs.py, ...).
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason='needs a CUDA GPU (run by '
                                'benchmarks/gpu_check.py on one)')

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'training'))
from training_helpers import (assert_rows_close, metric_values,  # noqa
                              metrics_rows, without_time, zinc_args)

GPU = ('train.accelerator=gpu', 'train.devices=1')


def test_resume_on_cuda_continues_the_random_stream(zinc_root, tmp_path):
    """Dropout on: if the CUDA generator were not restored, the resumed
    steps would draw other masks and the metrics would move by ~1e-2; they
    agree to float noise (atomic adds on the GPU are unordered)."""
    common = ('optim.total_steps=16', 'train.checkpoint_every_n_steps=5',
              *GPU)
    assert train_main(zinc_args(zinc_root, tmp_path, 'A', *common,
                                'train.max_steps=16')) == 0
    args = zinc_args(zinc_root, tmp_path, 'B', *common)
    assert train_main([*args, 'train.max_steps=6']) == 0
    assert train_main(['--resume', str(tmp_path / 'B'),
                       'train.max_steps=16']) == 0
    whole, resumed = (metric_values(without_time(metrics_rows(tmp_path /
                                                              name)))
                      for name in ('A', 'B'))
    assert_rows_close(whole, resumed, rel=1e-4, abs=1e-6)


def test_evaluate_on_cuda_equals_cpu(zinc_root, tmp_path):
    assert train_main(zinc_args(zinc_root, tmp_path, 'run', *GPU,
                                'train.max_steps=8')) == 0
    rows = {}
    for device in ('cpu', 'cuda'):
        out = tmp_path / f'{device}.csv'
        assert evaluate_main(['--checkpoint', str(tmp_path / 'run'),
                              '--device', device, '--predictions',
                              str(out)]) == 0
        with open(out) as f:
            rows[device] = list(csv.DictReader(f))
    assert len(rows['cpu']) == len(rows['cuda']) > 0
    for a, b in zip(rows['cpu'], rows['cuda']):
        for key, value in a.items():
            try:
                expected = float(value)
            except ValueError:
                assert b[key] == value, key
            else:
                assert float(b[key]) == pytest.approx(expected, rel=1e-4,
                                                      abs=1e-5), key


def test_predictor_on_cuda_equals_cpu(molhiv_smiles):
    smiles = molhiv_smiles[:300]
    cpu = Predictor.from_bundled('zinc', device='cpu').predict(smiles)
    gpu = Predictor.from_bundled('zinc', device='cuda').predict(smiles)
    for a, b in zip(cpu, gpu):
        assert a.error == b.error
        if a.error is None:
            assert b.value == pytest.approx(a.value, rel=1e-4, abs=1e-5)


def _ddp_worker(rank, world_size, path, batch, state):
    from graphormer_sepnorm.training.sync_norm import GlobalBatchNorm1d
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT='29533')
    dist.init_process_group('gloo', rank=rank, world_size=world_size)
    model = GraphormerSepNorm(num_layers=2, dropout=0.0,
                              attention_dropout=0.0, activation_dropout=0.0)
    model.load_state_dict(state)
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, torch.nn.BatchNorm1d):
                swapped = GlobalBatchNorm1d(child.num_features)
                swapped.load_state_dict(child.state_dict())
                setattr(module, child_name, swapped)
    model = model.cuda().train()
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    graphs = batch.to_data_list()[rank::world_size]
    part, _ = laid_out(Batch.from_data_list(graphs), **model.layout_options())
    part = part.cuda()
    # The global mean loss: each process's sum over the global count.
    loss = (ddp(part).squeeze(-1) - part.y).abs().sum() / batch.num_graphs
    (loss * world_size).backward()  # DDP averages the gradients.
    if rank == 0:
        torch.save({n: p.grad.cpu() for n, p in model.named_parameters()},
                   path)
    dist.destroy_process_group()


def test_two_processes_on_one_gpu_equal_one(tmp_path):
    graphs = [AddShortestPaths()(g) for g in load_real_zinc('val', limit=32)]
    batch = Batch.from_data_list(graphs)
    torch.manual_seed(0)
    model = GraphormerSepNorm(num_layers=2, dropout=0.0, attention_dropout=0.0,
                              activation_dropout=0.0)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    mp.spawn(_ddp_worker, args=(2, str(tmp_path / 'grads.pt'), batch, state),
             nprocs=2, join=True)
    model = model.cuda().train()
    whole, _ = laid_out(Batch.from_data_list(graphs),
                        **model.layout_options())
    whole = whole.cuda()
    (model(whole).squeeze(-1) - whole.y).abs().mean().backward()
    grads = torch.load(tmp_path / 'grads.pt')
    scale = max(float(p.grad.abs().max()) for p in model.parameters())
    for name, p in model.named_parameters():
        torch.testing.assert_close(grads[name], p.grad.cpu(), rtol=1e-3,
                                   atol=1e-4 * scale, msg=name)
