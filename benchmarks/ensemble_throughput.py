#!/usr/bin/env python
r"""Prediction speed of the bundled seed ensembles beside their single
best-validation member: ``scripts/predict.py --model NAME`` against
``--model NAME-single``, side by side in one run, on the same real ZINC250k
SMILES.

Each model predicts two input sizes; the rows between them give the
steady-state rate with start-up excluded, in wall-clock time and in CPU
time of all its processes (molecules per CPU-second times the cores: the
rate with the cores to itself). The median over ``--repeats`` runs is
reported, with the ratio single / ensemble.

    python benchmarks/ensemble_throughput.py \
        --output benchmarks/results/ensemble_throughput.md
"""
import argparse
import datetime
import os
import platform
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from benchmarks.analysis.benchmark_report import write_report  # noqa: E402
from benchmarks.throughput.measure import (commit, env_with,  # noqa: E402
                                           run_measured)
from benchmarks.throughput.sections import (PREDICT, ZINC250K,  # noqa: E402
                                            zinc_smiles)
from graphormer_sepnorm.bundled import (BUNDLED_MODELS,  # noqa: E402
                                        bundled_model_paths)
from graphormer_sepnorm.training.hardware import cpu_model  # noqa: E402

#: The ensembles measured, each beside its single member.
ENSEMBLES = tuple(name for name, entry in BUNDLED_MODELS.items()
                  if entry.single_of is None)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--models', nargs='+', default=list(ENSEMBLES),
                        choices=ENSEMBLES,
                        help='bundled ensembles to measure, each beside its '
                        '-single member (default: %(default)s)')
    parser.add_argument('--rows', type=int, nargs=2, default=[1000, 5000],
                        metavar=('SMALL', 'LARGE'),
                        help='the two input sizes; their difference gives '
                        'the steady rate (default: %(default)s)')
    parser.add_argument('--repeats', type=int, default=3,
                        help='runs per model and size; medians are '
                        'reported (default: %(default)s)')
    parser.add_argument('--smiles-dir', type=Path, default=ZINC250K,
                        help='folder of the ZINC250k SMILES (default: '
                        '../shared/data/zinc250k)')
    parser.add_argument('--output', type=Path,
                        help='markdown report to write (default: print '
                        'only)')
    return parser.parse_args(argv)


def measure(name: str, sources: dict[int, Path], work: Path,
            repeats: int) -> dict:
    r"""Median wall and CPU seconds of ``scripts/predict.py --model name``
    per input size, and the steady rates between the two sizes."""
    medians = {}
    for size, source in sources.items():
        runs = [run_measured(
            [sys.executable, str(PREDICT), '--model', name, '--input',
             str(source), '--output', str(work / f'{name}_{size}.csv'),
             '--quiet'], env_with(1)) for _ in range(repeats)]
        medians[size] = {key: statistics.median(r[key] for r in runs)
                         for key in ('wall', 'cpu')}
        print(f'{name}: {size} rows in {medians[size]["wall"]:.1f} s wall, '
              f'{medians[size]["cpu"]:.1f} CPU-s (median of {repeats})',
              flush=True)
    small, large = sorted(sources)
    rows = large - small
    cores = len(os.sched_getaffinity(0))
    return {
        'members': len(bundled_model_paths(name)), 'medians': medians,
        'wall_rate': rows / (medians[large]['wall'] - medians[small]['wall']),
        'dedicated_rate': cores * rows / (medians[large]['cpu']
                                          - medians[small]['cpu'])}


def report(args, results: dict[str, dict], command: str,
           load: tuple[tuple, tuple]) -> str:
    small, large = sorted(args.rows)
    before, after = (' / '.join(f'{x:.2f}' for x in avg) for avg in load)
    lines = [
        '# Prediction speed: bundled seed ensembles beside one member',
        '',
        f'- Command: `{command}`',
        f'- Date: {datetime.date.today()}; commit {commit()}',
        f'- Hardware: {cpu_model()}, {len(os.sched_getaffinity(0))} CPU '
        f'cores; {platform.platform()}',
        f'- Software: Python {platform.python_version()}, torch '
        f'{torch.__version__}',
        f'- Input: real ZINC250k SMILES, {small:,} and {large:,} rows; '
        f'`scripts/predict.py` with its default workers; medians of '
        f'{args.repeats} runs per model and size. Steady rate: the '
        f'{large - small:,} rows between the two sizes, start-up excluded.',
        f'- Load average (1/5/15 min) before: {before}, after: {after} '
        f'(other processes share the cores: wall-clock rates are the share '
        f'this run got; CPU-time rates are less sensitive to that)',
        '',
        '| model | members | whole run, '
        f'{large:,} rows (s, wall) | molecules/s (wall clock) | molecules/s '
        'with the cores to itself (CPU time) | single / ensemble |',
        '| --- | ---: | ---: | ---: | ---: | ---: |']
    for name in args.models:
        single, ensemble = results[f'{name}-single'], results[name]
        for label, result in ((f'`{name}-single`', single),
                              (f'`{name}`', ensemble)):
            ratio = ('' if result is single else
                     f"{single['dedicated_rate'] / result['dedicated_rate']:.2f}x")
            lines.append(
                f"| {label} | {result['members']} "
                f"| {result['medians'][large]['wall']:.1f} "
                f"| {result['wall_rate']:,.0f} "
                f"| {result['dedicated_rate']:,.0f} | {ratio} |")
    return '\n'.join(lines) + '\n'


def main(argv=None) -> int:
    args = parse_args(argv)
    command = shlex.join(['python', 'benchmarks/ensemble_throughput.py',
                          *(sys.argv[1:] if argv is None else argv)])
    smiles = zinc_smiles(args.smiles_dir, max(args.rows))
    results = {}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sources = {}
        for size in sorted(args.rows):
            sources[size] = work / f'zinc_{size}.smi'
            sources[size].write_text('\n'.join(smiles[:size]) + '\n')
        for name in args.models:
            for model in (f'{name}-single', name):
                results[model] = measure(model, sources, work, args.repeats)
    text = report(args, results, command, (load_before, os.getloadavg()))
    write_report(text, args.output)
    return 0


if __name__ == '__main__':
    sys.exit(main())
