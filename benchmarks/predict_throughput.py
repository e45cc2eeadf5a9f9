#!/usr/bin/env python
r"""SMILES-to-prediction speed and memory on CPU: per stage, end to end in
steady state, start-up, peak memory against input size, and chemprop's
``predict`` side by side.

Sections (``--sections``, all by default):

* ``stages``: each stage of :class:`graphormer_sepnorm.predict.Predictor`
  on its own (featurization, shortest paths, batching, the model forward on
  1 and all threads), with the PyG reference path beside it;
* ``steady``: ``scripts/predict.py`` on two sizes of input; the difference
  gives the steady-state rate (start-up excluded), in wall-clock time and in
  CPU time of all its processes. Molecules per CPU-second times the number
  of cores is the rate with the cores to itself (on a shared machine the
  wall clock measures the share it got);
* ``startup``: wall time of ``scripts/predict.py --smiles CCO``;
* ``memory``: peak resident memory (VmHWM) of the main process and of each
  worker for ``--memory-rows`` rows (ZINC SMILES repeated), streamed to a
  file;
* ``chemprop``: chemprop's ``predict`` (random-weight default D-MPNN) and
  ours on the same molecules, 1 thread and all cores, wall time with
  start-up and peak memory; skipped with a note when chemprop is missing
  (``pip install -e ".[baselines]"``, or ``--chemprop-python`` naming an
  interpreter that has it).

The model is ``--checkpoint`` or, by default, the ZINC slim
GraphormerSepNorm (12 layers, hidden 80, 8 heads) with random weights (speed
does not depend on them). Molecules: real ZINC250k SMILES
(``../shared/data/zinc250k``).

    python benchmarks/predict_throughput.py \
        --output benchmarks/results/predict_throughput.md
"""
import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from benchmarks.analysis.benchmark_report import write_report  # noqa: E402
from benchmarks.throughput.chemprop_peer import (  # noqa: E402
    chemprop_side_by_side, chemprop_version)
from benchmarks.throughput.measure import portable  # noqa: E402
from benchmarks.throughput.report import report  # noqa: E402
from benchmarks.throughput.sections import (ZINC250K, memory,  # noqa: E402
                                            startup, stages, steady,
                                            zinc_smiles)
from graphormer_sepnorm import GraphormerSepNorm  # noqa: E402
from graphormer_sepnorm.checkpoint import ModelCard, save_model  # noqa: E402
from graphormer_sepnorm.predict import Predictor  # noqa: E402

SECTIONS = ('stages', 'steady', 'startup', 'memory', 'chemprop')


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description='Prediction speed and memory on CPU: per stage, steady '
        'state end to end, start-up, peak memory against input size, and '
        'chemprop predict side by side.')
    parser.add_argument('--checkpoint', type=Path,
                        help='model to measure (default: the ZINC slim model '
                        'with random weights)')
    parser.add_argument('--smiles-dir', type=Path, default=ZINC250K,
                        help='folder of jtvae_*.txt SMILES files (default: '
                        'shared zinc250k)')
    parser.add_argument('--sections', default=','.join(SECTIONS),
                        help=f'comma-separated subset of {", ".join(SECTIONS)}'
                        f' (default: all)')
    parser.add_argument('--stage-molecules', type=int, default=2000,
                        help='molecules of the per-stage figures (default: '
                        '2000)')
    parser.add_argument('--repeats', type=int, default=5,
                        help='runs per per-stage and start-up figure; the '
                        'median is reported (default: 5)')
    parser.add_argument('--steady-rows', type=int, nargs=2,
                        default=[5000, 30000], metavar=('SMALL', 'LARGE'),
                        help='the two input sizes of the steady-state figure '
                        '(default: 5000 30000)')
    parser.add_argument('--memory-rows', type=int, nargs='+',
                        default=[10000, 300000],
                        help='input sizes of the peak-memory figure '
                        '(default: 10000 300000)')
    parser.add_argument('--chemprop-rows', type=int, default=30000,
                        help='molecules of the chemprop comparison '
                        '(default: 30000)')
    parser.add_argument('--chemprop-python', default=None,
                        help='a Python interpreter with chemprop installed '
                        '(default: this one, if it has chemprop)')
    parser.add_argument('--output', type=Path,
                        help='also write the results as markdown here')
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    # As given (absolute paths relative to the repository), so that the
    # report says how to measure it again.
    args.command = shlex.join(
        ['python', 'benchmarks/predict_throughput.py',
         *map(portable, sys.argv[1:] if argv is None else argv)])
    sections = set(args.sections.split(','))
    unknown = sections - set(SECTIONS)
    if unknown:
        print(f'error: unknown section(s) {", ".join(sorted(unknown))}; '
              f'choose from {", ".join(SECTIONS)}', file=sys.stderr)
        return 2
    chemprop_python = args.chemprop_python or sys.executable
    version = (chemprop_version(chemprop_python) if 'chemprop' in sections
               else None)
    if args.chemprop_python and 'chemprop' in sections and version is None:
        print(f'error: --chemprop-python {args.chemprop_python} cannot '
              f'import chemprop; name a Python interpreter that has it '
              f'(pip install -e ".[baselines]" in its environment)',
              file=sys.stderr)
        return 2
    load_before = os.getloadavg()
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.checkpoint is None:
            torch.manual_seed(0)
            checkpoint = work / 'zinc_slim_random.safetensors'
            save_model(checkpoint, GraphormerSepNorm(),
                       ModelCard({}, 'zinc', 'regression'))
            model_name = ('ZINC slim GraphormerSepNorm (12 layers, hidden '
                          '80, 8 heads, SepNorm) with **random weights** '
                          '(speed does not depend on them)')
        else:
            checkpoint = args.checkpoint
            # The file may be replaced later: the commit says which it was.
            model_name = (f'`{portable(str(checkpoint))}` (the file at the '
                          f'commit above)')
        predictor = Predictor.from_checkpoint(checkpoint)
        if 'stages' in sections:
            results['stages'] = stages(
                predictor, zinc_smiles(args.smiles_dir,
                                       args.stage_molecules), args.repeats)
        if 'steady' in sections:
            results['steady'] = steady(
                checkpoint, zinc_smiles(args.smiles_dir,
                                        max(args.steady_rows)),
                sorted(args.steady_rows), work)
        if 'startup' in sections:
            results['startup'] = startup(checkpoint, args.repeats)
        if 'memory' in sections:
            results['memory'] = memory(checkpoint, args.smiles_dir,
                                       sorted(args.memory_rows), work)
        if 'chemprop' in sections:
            if version is None:
                results['chemprop'] = (
                    'Not run: chemprop is not installed here (`pip install '
                    '-e ".[baselines]"`, or pass `--chemprop-python` naming '
                    'an interpreter that has it).')
            else:
                results['chemprop'] = (version, chemprop_side_by_side(
                    checkpoint, zinc_smiles(args.smiles_dir,
                                            args.chemprop_rows),
                    chemprop_python, work))
    text = report(args, results, model_name, load_before,
                  os.getloadavg())
    write_report(text, args.output)
    return 0


if __name__ == '__main__':
    sys.exit(main())
