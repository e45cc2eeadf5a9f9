"""Helpers and fixtures of the prediction tests: small random models saved
with save_model, real ZINC SMILES, the command lines. Test modules import the
fixtures they use (not a conftest.py, so that ``from conftest import ...``
keeps finding tests/conftest.py)."""
import csv
import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from graphormer_sepnorm import GraphormerSepNorm
from graphormer_sepnorm.checkpoint import ModelCard, save_model
from graphormer_sepnorm.predict import Predictor

from conftest import REPO, shared_path

PREDICT = REPO / 'scripts' / 'predict.py'
MERGE = REPO / 'scripts' / 'merge_predictions.py'
MAX_NODES = 40  # The ZINC test model's limit (ZINC molecules have <= 38).
MEAN, STD = 1.5, 2.0


@pytest.fixture(autouse=True, scope='module')
def one_thread():
    """Tiny test models gain nothing from intra-op threads, which cost a lot
    when the cores are shared with other processes."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def randomize_norm_stats(model: GraphormerSepNorm, seed: int) -> None:
    """Random batch-norm running statistics, so that evaluation mode and
    batching independence are really exercised."""
    gen = torch.Generator().manual_seed(seed)
    for name, buf in model.named_buffers():
        if name.endswith('running_mean'):
            buf.copy_(torch.randn(buf.shape, generator=gen) * 0.1)
        elif name.endswith('running_var'):
            buf.copy_(torch.rand(buf.shape, generator=gen) + 0.5)


def small_model(seed: int, **kwargs) -> GraphormerSepNorm:
    torch.manual_seed(seed)
    model = GraphormerSepNorm(num_layers=2, hidden_channels=16,
                              ffn_channels=16, num_heads=4, **kwargs)
    # Larger weights than Graphormer's std=0.02 init: distinct outputs.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0, 0.3)
    randomize_norm_stats(model, seed)
    return model.eval()


def save_zinc_model(path: Path, seed: int = 0, task: str = 'regression',
                    mean: float = MEAN, std: float = STD,
                    target_names: tuple = (), **kwargs) -> Path:
    model = small_model(seed, **{'max_nodes': MAX_NODES, **kwargs})
    save_model(path, model, ModelCard({}, 'zinc', task, mean, std,
                                      'zinc_subset',
                                      target_names=list(target_names)))
    return path


def save_ogb_model(path: Path, seed: int = 1, task: str = 'binary'
                   ) -> Path:
    from ogb.utils.features import (get_atom_feature_dims,
                                    get_bond_feature_dims)
    model = small_model(seed, atom_vocab_sizes=get_atom_feature_dims(),
                        bond_vocab_sizes=get_bond_feature_dims())
    save_model(path, model, ModelCard({}, 'ogb', task, dataset='molhiv'))
    return path


@pytest.fixture(scope='module')
def zinc_ckpt(tmp_path_factory) -> Path:
    return save_zinc_model(tmp_path_factory.mktemp('zinc') /
                           'model.safetensors')


@pytest.fixture(scope='module')
def ogb_ckpt(tmp_path_factory) -> Path:
    return save_ogb_model(tmp_path_factory.mktemp('ogb') /
                          'model.safetensors')


@pytest.fixture(scope='module')
def zinc_members(tmp_path_factory) -> list[Path]:
    """Three ZINC regression models for an ensemble, each with its own
    target normalization (so that averaging the models' outputs before
    mapping them back would give other values)."""
    folder = tmp_path_factory.mktemp('members')
    return [save_zinc_model(folder / f'member{seed}.safetensors', seed=seed,
                            mean=mean, std=std)
            for seed, mean, std in ((10, 1.5, 2.0), (11, -3.0, 0.5),
                                    (12, 0.25, 4.0))]


@pytest.fixture(scope='module')
def zinc(zinc_ckpt) -> Predictor:
    return Predictor.from_checkpoint(zinc_ckpt)


@pytest.fixture(scope='module')
def ogb(ogb_ckpt) -> Predictor:
    return Predictor.from_checkpoint(ogb_ckpt)


@pytest.fixture(scope='module')
def zinc_smiles() -> list[str]:
    """300 real ZINC SMILES (JT-VAE test split)."""
    path = shared_path('zinc250k', 'jtvae_test.txt')
    return path.read_text().split()[:300]


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    opener = gzip.open if path.suffix == '.gz' else open
    with opener(path, 'wt', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def read_csv(path: Path) -> list[dict[str, str]]:
    opener = gzip.open if path.suffix == '.gz' else open
    with opener(path, 'rt', newline='') as f:
        return list(csv.DictReader(f))


def run_script(script: Path, *args: str, stdin: str = None,
               env: dict = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args],
                          capture_output=True, text=True, timeout=300,
                          input=stdin, cwd=REPO,
                          env={**os.environ, 'OMP_NUM_THREADS': '1',
                               **(env or {})})
