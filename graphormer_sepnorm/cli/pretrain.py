r"""Command-line entry point behind ``scripts/pretrain.py``: the options of
``scripts/train.py`` (config, dotted overrides, ``--resume``), for a
pretraining configuration."""
from __future__ import annotations

import argparse
from typing import Optional, Sequence

from .train import run_main, train_parser

PRETRAIN_EPILOG = """\
overrides:
  Any config key as dotted.key=value, value parsed as YAML, e.g.
    train.max_steps=20000 pretrain.mask_rate=0.2 data.num_workers=2
  List every key with --list-options (the pretrain.* keys are pretraining's).

examples:
  %(prog)s --config configs/pretrain/cpu_sepnorm.yaml data.root=data
  %(prog)s --resume runs/pretrain_cpu_sepnorm
  torchrun --nproc_per_node 4 -m graphormer_sepnorm pretrain \\
      --config configs/pretrain/sepnorm.yaml train.strategy=ddp train.devices=4
  srun python -m graphormer_sepnorm pretrain \\
      --config configs/pretrain/sepnorm.yaml train.strategy=ddp \\
      train.devices=4 train.num_nodes=2       # inside an sbatch allocation

The corpus comes first: python scripts/make_pretraining_corpus.py
--data-root data. Fine-tune from the backbone.safetensors a run writes with
model.init_from=<file> in any training config.
"""


def pretrain_parser(prog: str = 'pretrain.py') -> argparse.ArgumentParser:
    r"""The parser of ``scripts/pretrain.py``: that of ``scripts/train.py``
    (without ``--csv``, which trains on labels) with its own description
    and examples; :obj:`prog` names the program."""
    parser = train_parser(prog, own_csv=False)
    parser.description = (
        'Pretrain GraphormerSepNorm without labels on a SMILES corpus '
        '(masked atoms + RDKit descriptors from the graph token; Lightning): '
        'writes config.yaml, checkpoints/{last,best}.ckpt, '
        'backbone.safetensors, metrics.csv, curves.png and results.json '
        'into <output_dir>/<run_name>.')
    parser.epilog = PRETRAIN_EPILOG
    return parser


def _pretrain(config: dict, resume: bool) -> Optional[dict]:
    from ..pretraining.run import pretrain
    return pretrain(config, resume=resume)


def pretrain_main(argv: Optional[Sequence[str]] = None,
                  prog: str = 'pretrain.py') -> int:
    r"""Runs ``scripts/pretrain.py`` with :obj:`argv`; returns the exit
    status (2: bad config or data, 3: the loss diverged)."""
    return run_main(pretrain_parser(prog).parse_args(argv), _pretrain, (
        'norm', 'seed', 'steps', 'graphs_seen', 'cpu_time_s',
        'throughput_graphs_per_s', 'run_dir', 'backbone'))
