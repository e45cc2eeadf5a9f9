"""Helpers of the pretraining tests: a tiny corpus of real molecules and the
arguments of a tiny pretraining run."""
from pathlib import Path

from rdkit import Chem

from conftest import REPO, shared_path
from script_helpers import TINY_MODEL as TINY_ENCODER

PRETRAIN = str(REPO / 'scripts' / 'pretrain.py')
CONFIG = str(REPO / 'configs' / 'pretrain' / 'sepnorm.yaml')

#: A model small enough for CPU tests.
TINY_MODEL = [*TINY_ENCODER, 'model.multi_hop_max_dist=3']


def write_corpus(folder: Path, train: int = 200, val: int = 40) -> Path:
    """train.smi and val.smi of real ZINC250k molecules (canonical SMILES,
    as the corpus builder writes them)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = shared_path('zinc250k', 'jtvae_test.txt').read_text().split()
    smiles = [Chem.MolToSmiles(Chem.MolFromSmiles(s))
              for s in lines[:train + val]]
    (folder / 'train.smi').write_text('\n'.join(smiles[:train]) + '\n')
    (folder / 'val.smi').write_text('\n'.join(smiles[train:]) + '\n')
    return folder


def pretrain_args(corpus: Path, out: Path, name: str, *extra: str) -> list:
    """pretrain.py arguments of a tiny run ``<out>/<name>``: batches of 16,
    validation every 8 steps on 32 molecules."""
    return ['--config', CONFIG, f'pretrain.corpus={corpus}',
            f'output_dir={out}', f'run_name={name}', 'data.batch_size=16',
            'data.eval_batch_size=16', 'data.limit_val=32',
            'pretrain.val_every_n_steps=8', 'pretrain.scaler_molecules=100',
            'train.max_epochs=null', 'train.max_steps=24',
            'optim.total_steps=24', 'optim.lr=1e-3',
            'train.checkpoint_every_n_steps=4', 'train.progress_bar=false',
            'train.log_every_n_steps=4', *TINY_MODEL, *extra]
