#!/usr/bin/env python
r"""SMILES-to-prediction throughput on CPU (molecules per second).

Measures, on real ZINC SMILES (JT-VAE test split), each stage of
:class:`graphormer_sepnorm.predict.Predictor` on its own and end to end:

* featurization (SMILES -> ZINC graph arrays; and the public
  :func:`smiles_to_zinc_graph`, which also builds a PyG ``Data``),
* preprocessing (all-pairs shortest paths, as in ``AddShortestPaths``),
* batching (the predictor's collate),
* the model's eval forward under ``torch.inference_mode`` (batches in input
  order vs sorted by size; 1 thread and all threads),
* end to end: ``Predictor.predict`` in one process and with worker
  processes (pool start-up included).

The model is the ZINC slim GraphormerSepNorm (12 layers, hidden 80, 8 heads)
with **random weights** (speed does not depend on the weights). Every figure
is the median over ``--repeats`` runs.

    python benchmarks/predict_throughput.py --num-molecules 2000 \
        --output benchmarks/results/predict_throughput.md
"""
import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch_geometric.data import Batch  # noqa: E402

from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm  # noqa
from graphormer_sepnorm.checkpoint import ModelCard  # noqa: E402
from graphormer_sepnorm.data.featurize import (  # noqa: E402
    _zinc_graph_arrays, smiles_to_zinc_graph)
from graphormer_sepnorm.predict import Predictor, collate  # noqa: E402
from graphormer_sepnorm.transforms.shortest_paths import \
    shortest_paths  # noqa: E402

DEFAULT_SMILES = (REPO.parent / 'shared' / 'data' / 'zinc250k' /
                  'jtvae_test.txt')


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description='SMILES-to-prediction throughput (molecules/s) of the '
        'ZINC slim model on CPU, per stage and end to end (random weights).')
    parser.add_argument('--smiles-file', type=Path, default=DEFAULT_SMILES,
                        help='one SMILES per line (default: shared ZINC '
                        'jtvae_test.txt)')
    parser.add_argument('--num-molecules', type=int, default=2000,
                        help='molecules per run (default: 2000)')
    parser.add_argument('--batch-size', type=int, default=128,
                        help='molecules per forward pass (default: 128)')
    parser.add_argument('--repeats', type=int, default=5,
                        help='runs per measurement; the median is reported '
                        '(default: 5)')
    parser.add_argument('--num-workers', type=int, default=None,
                        help='workers of the end-to-end multi-process run '
                        '(default: the predictor\'s choice, one per core)')
    parser.add_argument('--output', type=Path,
                        help='also write the results as markdown here')
    return parser.parse_args(argv)


def cpu_seconds() -> float:
    r"""CPU time of this process and of its finished children (the worker
    processes of a prediction are joined before it returns)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def median_rate(fn, count: int,
                repeats: int) -> tuple[float, float, list[float]]:
    r"""Median molecules per wall-clock second and per CPU second."""
    rates, cpu_rates = [], []
    for _ in range(repeats):
        cpu = cpu_seconds()
        start = time.perf_counter()
        fn()
        rates.append(count / (time.perf_counter() - start))
        cpu_rates.append(count / max(cpu_seconds() - cpu, 1e-9))
    return statistics.median(rates), statistics.median(cpu_rates), rates


def cpu_model() -> str:
    try:
        out = subprocess.run(['lscpu'], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            if line.startswith('Model name:'):
                return line.split(':', 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return platform.processor() or 'unknown'


def main(argv=None) -> int:
    args = parse_args(argv)
    smiles = args.smiles_file.read_text().split()[:args.num_molecules]
    n, bs, reps = len(smiles), args.batch_size, args.repeats
    threads = torch.get_num_threads()
    load_before = os.getloadavg()

    torch.manual_seed(0)
    model = GraphormerSepNorm().eval()  # ZINC slim, random weights.
    predictor = Predictor(model, ModelCard({}, 'zinc', 'regression'))
    rows = []  # (stage, mol/s, note)

    def record(stage, fn, count=n):
        rate, cpu_rate, rates = median_rate(fn, count, reps)
        rows.append((stage, rate, cpu_rate))
        print(f'{stage:<72} {rate:8.0f} mol/s {cpu_rate:8.0f} mol/CPU-s '
              f'(runs: {", ".join(f"{r:.0f}" for r in rates)})', flush=True)
        return rate

    # Stages, one process, one core for the Python-bound ones.
    record('featurize: SMILES -> arrays (predictor path)',
           lambda: [_zinc_graph_arrays(s) for s in smiles])
    record('featurize: smiles_to_zinc_graph (public, PyG Data)',
           lambda: [smiles_to_zinc_graph(s) for s in smiles])
    arrays = [_zinc_graph_arrays(s) for s in smiles]
    record('preprocess: shortest paths (AddShortestPaths function)',
           lambda: [shortest_paths(ei, x.shape[0]) for x, ei, _ in arrays])
    data = [smiles_to_zinc_graph(s) for s in smiles]
    transform = AddShortestPaths()
    record('preprocess: AddShortestPaths on Data (reference)',
           lambda: [transform(d.clone()) for d in data])
    prepared = [predictor._prepare(s) for s in smiles]
    order = sorted(range(n), key=lambda k: prepared[k][0].shape[0])
    sorted_graphs = [prepared[k] for k in order]
    record(f'batching: collate, batch {bs}',
           lambda: [collate(sorted_graphs[i:i + bs])
                    for i in range(0, n, bs)])
    reference = [transform(d.clone()) for d in data]
    record(f'batching: Batch.from_data_list, batch {bs} (reference)',
           lambda: [Batch.from_data_list(reference[i:i + bs])
                    for i in range(0, n, bs)])

    def model_run(graphs):
        batches = [collate(graphs[i:i + bs]) for i in range(0, n, bs)]

        def run():
            with torch.inference_mode():
                for batch in batches:
                    model(batch)
        return run

    for num_threads in sorted({1, threads}):
        torch.set_num_threads(num_threads)
        model_run(sorted_graphs)()  # Warm-up.
        record(f'model: eval forward, batch {bs}, input order, '
               f'{num_threads} thread(s)', model_run(prepared))
        record(f'model: eval forward, batch {bs}, sorted by size, '
               f'{num_threads} thread(s)', model_run(sorted_graphs))
    torch.set_num_threads(threads)

    # End to end.
    for num_threads in sorted({1, threads}):
        torch.set_num_threads(num_threads)
        record(f'end to end: predict(), one process, {num_threads} '
               f'thread(s)', lambda: predictor.predict(smiles, bs,
                                                       num_workers=0))
    torch.set_num_threads(threads)
    workers = predictor._num_workers(n, args.num_workers)
    e2e = record(f'end to end: predict(), {workers} worker processes x 1 '
                 f'thread (pool start included)',
                 lambda: predictor.predict(smiles, bs,
                                           num_workers=args.num_workers))
    load_after = os.getloadavg()

    sizes = np.array([g[0].shape[0] for g in prepared])
    header = [
        '# Prediction throughput (SMILES to prediction, CPU)', '',
        f'- Command: `python benchmarks/predict_throughput.py '
        f'--num-molecules {args.num_molecules} --batch-size {bs} '
        f'--repeats {reps}`',
        f'- Hardware: {cpu_model()}, {os.cpu_count()} CPU cores '
        f'(torch threads: {threads}); {platform.platform()}',
        f'- Software: Python {platform.python_version()}, torch '
        f'{torch.__version__}',
        f'- Molecules: the first {n} SMILES of {args.smiles_file.name} '
        f'(real ZINC; {sizes.min()}-{sizes.max()} heavy atoms, mean '
        f'{sizes.mean():.1f})',
        '- Model: ZINC slim GraphormerSepNorm (12 layers, hidden 80, 8 heads,'
        ' SepNorm) with **random weights** (speed does not depend on them)',
        f'- Figures: median of {reps} runs each; molecules per second',
        f'- Load average (1/5/15 min) before: '
        f'{" / ".join(f"{v:.2f}" for v in load_before)}, after: '
        f'{" / ".join(f"{v:.2f}" for v in load_after)} (other processes '
        f'on the machine lower the figures)', '',
        '- "molecules/CPU-s": molecules per second of CPU time used (this '
        'process and its worker processes), less sensitive to other load; a '
        'stage that keeps both cores busy can reach at most twice it', '',
        '| stage | molecules/s (wall clock) | molecules/CPU-s |',
        '| --- | ---: | ---: |']
    lines = header + [f'| {stage} | {rate:,.0f} | {cpu_rate:,.0f} |'
                      for stage, rate, cpu_rate in rows]
    lines += ['', f'End to end with worker processes: **{e2e:,.0f} '
              f'molecules/s** (target: 1,000).']
    text = '\n'.join(lines) + '\n'
    print()
    print(text)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
