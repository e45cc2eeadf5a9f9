#!/usr/bin/env python
r"""The GPU check: one prepared run on a fresh single-GPU machine that says
whether this library works there and how fast it is.

``benchmarks/device_run.sh`` is the device command: it installs the carried
wheels and runs this script. Steps, in this order, each a subprocess with
its own time limit (:data:`gpu_check_plan.LIMITS`, which add up to the
540 s budget of a call of ``timeout_s`` 570; a step that fails or runs out
of time loses nothing of the others), each writing its figures as it goes:

1. ``env``: the machine (``nvidia-smi``, CPU, versions, the reference's
   transformers on its own path); ``tests``: ``tests/gpu`` and
   ``tests/models/test_host_syncs.py``; on a GPU a skipped test fails the
   step;
2. ``speed``: training steps/s (forward, backward, clipping, AdamW) at each
   recipe's batch size (ZINC 128 and the ZINC-subset recipe's 256, MolHIV
   128), fp32 and bf16, ours beside the Hugging Face reference on the same
   batches (``benchmarks/compare_reference.py --devices cuda``, with the
   reference's transformers first on its path: ``--reference-path``);
3. ``train``: a timed real ZINC-subset training of the recipe
   (``configs/zinc_subset_sepnorm.yaml``) for ``--train-seconds``
   (``train.max_minutes``; the schedule spans the steps that fit at the
   rate step 2 measured), with validation and test MAE;
4. ``compiled``: the ZINC-subset recipe eager, then with its regions
   compiled (bf16, ``GraphormerSepNorm.compile_regions``), compile time
   apart from the steady steps/s;
5. ``pretrain`` and ``predict``: pretraining and prediction molecules/s,
   with the GPU's and the CPU cores' utilization and what bounds them
   (``benchmarks/device_load.py``).

Everything goes to ``--out`` as at most 8 files: ``env.txt``,
``tests_gpu.txt``, ``reference.md`` (rewritten after every row),
``train_results.json``, ``train_metrics.csv``, ``throughput.json`` (step
4), ``pipelines.json`` and ``gpu_check.json`` (each step's status,
seconds, limit, command and the tail of its output, rewritten after every
step).

The machine has no internet and lacks rdkit, ogb and the Hugging Face
reference: ``python benchmarks/gpu_bundle.py`` packs them as wheels and the
data (see :data:`device_data.DATA_PATHS`) as one ``data.tar.xz`` into
``.whl/`` and ``.device-data/`` (both ignored by git), which the call
carries.

``--device cpu --tiny`` is the rehearsal: every step on the CPU with a tiny
model and a few steps (:data:`gpu_check_plan.TINY_LIMITS`), as
``benchmarks/device_rehearsal.sh`` runs it in CI on a copy of what travels.

This file is the command line; the check's other modules lie beside it in
``benchmarks/``: ``gpu_check_plan.py`` (the steps, their limits and
sizes), ``gpu_check_runner.py`` (a step's subprocess within its limit, and
``gpu_check.json``), ``gpu_check_steps.py`` (each step's command and
figures), ``device_data.py`` (the data) and ``device_load.py`` (what bounds
a pipeline).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The package is not installed on the device machine: the check imports it
# from the tree (recipe_batch_size), like its steps do; its own modules lie
# beside it (benchmarks/).
sys.path[:0] = [str(Path(__file__).resolve().parent), str(REPO)]
from gpu_check_plan import STEPS  # noqa: E402
from gpu_check_steps import Check  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--out', type=Path, required=True,
                        help='Output folder (at most 8 files).')
    parser.add_argument('--data', type=Path,
                        default=REPO.parent / 'shared' / 'data',
                        help='Data folder laid out as ../shared/data, or '
                        'holding the data.tar.xz of gpu_bundle.py.')
    parser.add_argument('--device', default='cuda', choices=['cuda', 'cpu'])
    parser.add_argument('--tiny', action='store_true',
                        help='Rehearsal: tiny model, a few steps.')
    parser.add_argument('--steps', default=None,
                        help=f"Only these steps, comma-separated, of "
                        f"{', '.join(STEPS)}.")
    parser.add_argument('--train-seconds', type=float, default=90.0,
                        help='Training time of the timed ZINC-subset run.')
    parser.add_argument('--budget-seconds', type=float, default=None,
                        help='Wall time for all steps (default: the sum of '
                        'the step limits, 540 s on a GPU): each step gets '
                        'at most what is left, and a step with under 10 s '
                        'left is skipped (recorded as such).')
    parser.add_argument('--spent-seconds', type=float, default=0.0,
                        help='Seconds of the budget spent before the check '
                        '(device_run.sh: installing the wheels).')
    parser.add_argument('--workers', type=int, default=None,
                        help='Loader workers (default: CPUs - 2, at most 8).')
    parser.add_argument('--reference-path', default=os.environ.get(
        'GRAPHORMER_REFERENCE_PATH'), help='Folder holding the reference\'s '
        'transformers 4.57 (device_run.sh installs .whl/reference/ there), '
        'put first on the speed step\'s PYTHONPATH alone (default: '
        '$GRAPHORMER_REFERENCE_PATH; none: the environment\'s '
        'transformers).')
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    chosen = (tuple(STEPS) if args.steps is None else
              tuple(args.steps.split(',')))
    unknown = set(chosen) - set(STEPS)
    if unknown:
        raise SystemExit(f"Unknown steps {sorted(unknown)}; choose from "
                         f"{', '.join(STEPS)}")
    with tempfile.TemporaryDirectory() as work:
        check = Check(args, Path(work))
        for step in STEPS:
            if step in chosen:
                getattr(check, step)()
        check.report['finished'] = time.strftime('%Y-%m-%d %H:%M:%S')
        check.save()
    failed = [name for name, runs in check.report['steps'].items()
              if any(run['status'] != 'ok' for run in runs)]
    print(f"{len(check.report['steps']) - len(failed)} steps ok"
          + (f"; failed: {', '.join(failed)}" if failed else ''))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
