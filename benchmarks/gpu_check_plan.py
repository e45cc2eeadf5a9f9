r"""The plan of the GPU check (``benchmarks/gpu_check.py``): its steps, each
step's time limit on a GPU and in the CPU rehearsal, and the sizes the
steps run at."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: The recipe's model, shrunk for the rehearsal.
TINY_MODEL = ['model.num_layers=1', 'model.hidden_channels=16',
              'model.ffn_channels=16', 'model.num_heads=2']

#: Each step's time limit (s) on the GPU, in the order they run; they add
#: up to the default ``--budget-seconds``. Measured on the H200 of
#: 2026-11-28: env 23 s, the tests over 80 s, speed 35 s, predict 9 s;
#: compiling the recipe took over 140 s (90 to over 190 s before).
LIMITS = {'env': 30, 'tests': 120, 'speed': 45, 'train': 130,
          'compiled': 155, 'pretrain': 40, 'predict': 20}
#: The rehearsal's limits (``--tiny``): caps for two CPU cores that other
#: jobs may share (at a load of 8 to 10 on two cores the env step took over
#: 90 s and the tests 120 s), not what it takes.
TINY_LIMITS = {'env': 150, 'tests': 240, 'speed': 240, 'train': 300,
               'compiled': 300, 'pretrain': 240, 'predict': 120}
#: The steps of :data:`LIMITS` that each method of
#: :class:`gpu_check_steps.Check` runs.
STEPS = {'env': ('env', ), 'tests': ('tests', ), 'speed': ('speed', ),
         'train': ('train', ), 'compiled': ('compiled', ),
         'pipelines': ('pretrain', 'predict')}
#: ZINC batch sizes of the speed step: the goal's 128 and the ZINC-subset
#: recipe's (configs/base/zinc_subset.yaml).
ZINC_BATCH_SIZES = (128, 256)
#: Training time of the pretraining step (s), within its limit.
PRETRAIN_SECONDS = 20


def recipe_batch_size(config: str) -> int:
    r"""``data.batch_size`` of the shipped config :obj:`config`."""
    from graphormer_sepnorm.training.config import load_config
    return int(load_config(REPO / 'configs' / config, [], env={})['data']
               ['batch_size'])
