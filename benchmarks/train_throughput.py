#!/usr/bin/env python
r"""Training throughput of GraphormerSepNorm: graphs per second and time per
epoch, for ZINC-subset and OGB MolHIV, with the recipe model and batch size
of each config (or overrides), on CPU and, when available, CUDA.

Each measured step is one optimizer update as in training (batch fetch from
the loader, forward, L1/BCE loss, backward, gradient clipping, AdamW) timed
end to end (CUDA synchronized); the first ``--warmup`` steps are dropped and
medians over ``--steps`` steps are printed. Time per epoch = median step
time x updates per epoch of the full training split. Batches come from the
training loader with their layout prepared as in training
(:func:`~graphormer_sepnorm.transforms.batch_layout.layout_options_for`:
the model's size buckets on the CPU, one on a GPU), in ``--workers``
processes.

``--precision``, ``--compile``, ``--batch-sizes`` and ``--buckets`` take
several values and measure every combination (``--compile`` compiles the
model's regions, :meth:`GraphormerSepNorm.compile_regions`, or its whole
forward with ``torch.compile(dynamic=True)``; the compile time is reported
apart, not in the steps; ``--buckets`` overrides the number of attention
size buckets the loader prepares). ``--json`` is rewritten after every
setting, so a run stopped by a time limit keeps the settings it finished. ``--baseline REV`` measures the same settings with the code of
git revision ``REV`` (its own copy of this script, in a temporary git
worktree) in the same run, alternating rounds of the two, and prints both
medians and their ratio: before/after comparisons on one machine in one
sitting.

Example (offline, shared data)::

    python benchmarks/train_throughput.py --data-root /tmp/data \
        --zinc-source ../shared/data/ZINC-proxy \
        --molhiv-source ../shared/data/ogbg_molhiv --steps 5
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.training_speed.baseline import (  # noqa: E402
    compare_with_baseline)
from benchmarks.training_speed.report import report_markdown  # noqa: E402
from benchmarks.training_speed.steps import measure_all  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--datasets', nargs='+',
                        default=['zinc_subset', 'molhiv'],
                        choices=['zinc_subset', 'zinc', 'molhiv'])
    parser.add_argument('--norm', default='sep', choices=['sep', 'share'])
    parser.add_argument('--devices', nargs='+', default=None,
                        help='cpu and/or cuda (default: cpu, plus cuda when '
                        'available).')
    parser.add_argument('--data-root', default=os.environ.get(
        'GRAPHORMER_DATA_ROOT', 'data'), help='Writable data root.')
    parser.add_argument('--zinc-source', default=None,
                        help='data.raw_source for ZINC (e.g. '
                        '../shared/data/ZINC-proxy).')
    parser.add_argument('--molhiv-source', default=None,
                        help='data.raw_source for MolHIV (e.g. '
                        '../shared/data/ogbg_molhiv).')
    parser.add_argument('--steps', type=int, default=5,
                        help='Measured steps per setting (default: 5).')
    parser.add_argument('--warmup', type=int, default=2,
                        help='Unmeasured first steps (default: 2).')
    parser.add_argument('--on-device', action='store_true',
                        help='Batch on the accelerator (data.on_device).')
    parser.add_argument('--threads', type=int, default=None,
                        help='torch.set_num_threads (default: torch).')
    parser.add_argument('--precision', nargs='+', default=['auto'],
                        choices=['auto', '32', 'bf16'],
                        help='auto: bf16 on a GPU that has it, else fp32.')
    parser.add_argument('--compile', nargs='+', default=['off'],
                        choices=['off', 'regions', 'model'],
                        help='torch.compile (dynamic shapes) the model\'s '
                        'regions (GraphormerSepNorm.compile_regions) or its '
                        'whole forward (several: each).')
    parser.add_argument('--compile-backend', default='inductor',
                        help='torch.compile backend of --compile '
                        '(default: inductor).')
    parser.add_argument('--batch-sizes', type=int, nargs='+', default=None,
                        help='Override the config batch size (several: '
                        'each).')
    parser.add_argument('--buckets', nargs='+', default=['auto'],
                        type=_buckets,
                        help='Attention size buckets of the batches: auto '
                        '(the loader\'s choice for the device: the model\'s '
                        'on the CPU, 1 on a GPU) or a number (several: '
                        'each).')
    parser.add_argument('--workers', type=int, default=0,
                        help='DataLoader worker processes (default: 0).')
    parser.add_argument('--baseline', default=None, metavar='REV',
                        help='Also measure git revision REV in the same run '
                        '(alternating rounds) and print the ratio.')
    parser.add_argument('--rounds', type=int, default=3,
                        help='Alternating rounds with --baseline.')
    parser.add_argument('--json', default=None,
                        help='Also write the results to this JSON file.')
    parser.add_argument('--markdown', default=None,
                        help='Also write a markdown report of the results '
                        '(with the command line) to this file.')
    parser.add_argument('overrides', nargs='*', metavar='KEY=VALUE',
                        help='Config overrides (e.g. model.num_layers=6).')
    return parser.parse_args(argv)


def _buckets(value: str) -> str:
    if value == 'auto' or value.isdigit() and int(value) > 0:
        return value
    raise argparse.ArgumentTypeError(
        f"--buckets takes 'auto' or a positive number, not {value!r}")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    results = (compare_with_baseline(argv, args) if args.baseline else
               measure_all(args))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    if args.markdown:
        Path(args.markdown).write_text(report_markdown(results, argv))
    return 0


if __name__ == '__main__':
    sys.exit(main())
