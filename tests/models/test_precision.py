"""GraphormerSepNorm under bf16 autocast on the CPU: training and
evaluation run (evaluation under bf16 used to crash, reading a bf16 table
into NumPy) and stay within a stated tolerance of fp32: predictions within
2% of the largest fp32 prediction
(a few bf16 steps: bf16 keeps 8 significant bits). tests/gpu checks the same on CUDA."""
import pytest
import torch
from conftest import laid_out, load_real_zinc
from torch_geometric.data import Batch

from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm


@pytest.mark.parametrize('norm', ['sep', 'share'])
def test_bf16_autocast_is_within_tolerance_of_fp32(norm):
    graphs = [AddShortestPaths()(g) for g in load_real_zinc('val', limit=64)]
    torch.manual_seed(0)
    model = GraphormerSepNorm(num_layers=3, norm=norm)
    batch, _ = laid_out(Batch.from_data_list(graphs),
                        **model.layout_options())
    model.train()
    with torch.autocast('cpu', dtype=torch.bfloat16):
        loss = (model(batch).float().squeeze(-1) - batch.y).abs().mean()
    loss.backward()
    assert torch.isfinite(loss)
    model.eval()
    with torch.no_grad():
        fp32 = model(batch)
        with torch.autocast('cpu', dtype=torch.bfloat16):
            bf16 = model(batch).float()
    assert (bf16 - fp32).abs().max() <= 0.02 * fp32.abs().max()
