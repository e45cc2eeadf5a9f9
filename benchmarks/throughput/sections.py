r"""The sections of ``benchmarks/predict_throughput.py`` measured with our
own predictor: per stage (:func:`stages`), steady state end to end
(:func:`steady`), start-up (:func:`startup`) and peak memory against input
size (:func:`memory`), on real ZINC250k SMILES (:func:`zinc_smiles`)."""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from graphormer_sepnorm.predict import Predictor, collate

from .measure import REPO, env_with, run_measured

ZINC250K = REPO.parent / 'shared' / 'data' / 'zinc250k'
PREDICT = REPO / 'scripts' / 'predict.py'


def zinc_smiles(folder: Path, count: int) -> list[str]:
    r"""The first :obj:`count` SMILES of the ZINC250k files, repeated as
    needed."""
    pool = []
    for name in ('jtvae_valid.txt', 'jtvae_test.txt'):
        pool += (folder / name).read_text().split()
    reps = -(-count // len(pool))
    return (pool * reps)[:count]


def predict_cmd(checkpoint: Path, source: Path, output: Path, *extra: str
                ) -> list[str]:
    r"""The command line of ``scripts/predict.py`` from :obj:`source` to
    :obj:`output`, quiet, with :obj:`extra` arguments."""
    return [sys.executable, str(PREDICT), '--checkpoint', str(checkpoint),
            '--input', str(source), '--output', str(output), '--quiet',
            *extra]


def stages(predictor: Predictor, smiles: list[str], repeats: int) -> list:
    r"""Per-stage molecules per second (wall) and per CPU-second."""
    from torch_geometric.data import Batch

    from graphormer_sepnorm import AddShortestPaths
    from graphormer_sepnorm.data.featurize import get_featurizer
    from graphormer_sepnorm.data.featurize.ogb import ogb_graph_arrays
    from graphormer_sepnorm.data.featurize.zinc import zinc_graph_arrays
    from graphormer_sepnorm.transforms import shortest_paths

    # The model's own featurizer: the predictor path reads its arrays, the
    # public path builds PyG Data.
    name = predictor.featurizer_name
    graph_arrays = {'zinc': zinc_graph_arrays, 'ogb': ogb_graph_arrays}[name]
    featurizer = get_featurizer(name)

    n, bs, rows = len(smiles), 128, []
    model = predictor.model

    def record(stage, fn):
        rates, cpu_rates = [], []
        for _ in range(repeats):
            cpu, start = time.process_time(), time.perf_counter()
            fn()
            rates.append(n / (time.perf_counter() - start))
            cpu_rates.append(n / max(time.process_time() - cpu, 1e-9))
        rows.append((stage, statistics.median(rates),
                     statistics.median(cpu_rates)))
        print(f'{stage:<66} {rows[-1][1]:8.0f} mol/s {rows[-1][2]:8.0f} '
              f'mol/CPU-s', flush=True)

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    record(f'featurize: SMILES -> arrays, {name} (predictor path)',
           lambda: [graph_arrays(s) for s in smiles])
    record(f'featurize: {featurizer.__name__} (public, PyG Data)',
           lambda: [featurizer(s) for s in smiles])
    arrays = [graph_arrays(s) for s in smiles]
    record('preprocess: shortest paths (AddShortestPaths function)',
           lambda: [shortest_paths(ei, x.shape[0]) for x, ei, _ in arrays])
    data = [featurizer(s) for s in smiles]
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
    torch.set_num_threads(1)
    record('worker path: predict_chunk (featurize, sort, batch, model), '
           '1 thread', lambda: [predictor.predict_chunk(smiles[i:i + 1024],
                                                        bs)
                                for i in range(0, n, 1024)])
    torch.set_num_threads(threads)
    return rows


def steady(checkpoint: Path, smiles: list[str], sizes: list[int],
           work: Path) -> dict:
    r"""Steady state of ``scripts/predict.py`` (default workers): the rate
    on the rows between the two input sizes."""
    runs = {}
    for size in sizes:
        source = work / f'steady_{size}.smi'
        source.write_text('\n'.join(smiles[:size]) + '\n')
        runs[size] = run_measured(
            predict_cmd(checkpoint, source, work / f'steady_{size}.csv'),
            env_with(1))
        print(f'steady: {size} rows in {runs[size]["wall"]:.1f} s wall, '
              f'{runs[size]["cpu"]:.1f} CPU-s', flush=True)
    small, large = sizes
    rows = large - small
    wall = runs[large]['wall'] - runs[small]['wall']
    cpu = runs[large]['cpu'] - runs[small]['cpu']
    cores = len(os.sched_getaffinity(0))
    return {'rows': rows, 'wall_rate': rows / wall,
            'cpu_ms': 1e3 * cpu / rows, 'cores': cores,
            'dedicated_rate': cores * rows / cpu, 'runs': runs,
            'sizes': sizes}


def startup(checkpoint: Path, repeats: int) -> list[float]:
    r"""Wall times of :obj:`repeats` runs of ``scripts/predict.py`` on one
    SMILES."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, str(PREDICT), '--checkpoint',
                        str(checkpoint), '--smiles', 'CCO'], check=True,
                       capture_output=True, env=env_with(1))
        times.append(time.perf_counter() - start)
    return times


def memory(checkpoint: Path, smiles_dir: Path, sizes: list[int],
           work: Path) -> list[dict]:
    r"""Peak memory of ``scripts/predict.py`` (main process and largest
    worker) for each input size, streamed to a gzipped CSV."""
    results = []
    for size in sizes:
        source = work / f'memory_{size}.smi'
        source.write_text('\n'.join(zinc_smiles(smiles_dir, size)) + '\n')
        run = run_measured(predict_cmd(checkpoint, source,
                                       work / f'memory_{size}.csv.gz'),
                           env_with(1))
        run.update(rows=size, rate=size / run['wall'])
        results.append(run)
        print(f'memory: {size} rows: main {run["main_mb"]:.0f} MB, largest '
              f'worker {run["child_mb"]:.0f} MB, {run["wall"]:.0f} s',
              flush=True)
        source.unlink()
    return results
