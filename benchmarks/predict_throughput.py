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
import csv
import datetime
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from benchmarks.analysis.benchmark_report import write_report  # noqa: E402
from graphormer_sepnorm import GraphormerSepNorm  # noqa: E402
from graphormer_sepnorm.checkpoint import ModelCard, save_model  # noqa: E402
from graphormer_sepnorm.predict import Predictor, collate  # noqa: E402

ZINC250K = REPO.parent / 'shared' / 'data' / 'zinc250k'
PREDICT = REPO / 'scripts' / 'predict.py'
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


# Helpers #####################################################################


def zinc_smiles(folder: Path, count: int) -> list[str]:
    r"""The first :obj:`count` SMILES of the ZINC250k files, repeated as
    needed."""
    pool = []
    for name in ('jtvae_valid.txt', 'jtvae_test.txt'):
        pool += (folder / name).read_text().split()
    reps = -(-count // len(pool))
    return (pool * reps)[:count]


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


def memory_gb() -> str:
    r"""The machine's memory (MemTotal)."""
    total = _kb_field('/proc/meminfo', 'MemTotal')
    return f'{total / 1024 ** 2:.0f} GiB' if total else 'unknown'


def portable(argument: str) -> str:
    r"""An absolute path (alone or after ``--option=``) written relative to
    the repository, so that a report names no folder of the machine that
    wrote it (``../shared/data/...`` for the shared data beside the
    checkout); other arguments as they are."""
    option, sep, value = argument.rpartition('=')
    if not value.startswith('/'):
        return argument
    relative = Path(os.path.relpath(value, REPO)).as_posix()
    return f'{option}{sep}{relative}'


def commit() -> str:
    try:
        return subprocess.run(['git', 'rev-parse', '--short', 'HEAD'],
                              cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return 'unknown'


def _tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        path = Path(f'/proc/{current}/task/{current}/children')
        try:
            todo += [int(c) for c in path.read_text().split()]
        except OSError:
            pass
    return pids


def _kb_field(path: str, field: str) -> int:
    r"""A field in kB of a ``/proc`` file such as ``/proc/meminfo`` (0 if
    it cannot be read)."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(f'{field}:'):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_measured(cmd: list[str], env: dict) -> dict:
    r"""Runs :obj:`cmd` and returns its wall time, its CPU time (the process
    and the children it waited for, as :func:`os.wait4` reports them) and
    the peak resident memory of the main process and of its largest child,
    polled from ``/proc`` (VmHWM)."""
    with tempfile.TemporaryFile(mode='w+') as errors:
        started = time.perf_counter()
        process = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                   stderr=errors)
        peaks: dict[int, int] = {}
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            for child in _tree(process.pid):
                peak = _kb_field(f'/proc/{child}/status', 'VmHWM')
                peaks[child] = max(peaks.get(child, 0), peak)
            time.sleep(0.2)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        stderr = errors.read()
    if process.returncode != 0:
        raise RuntimeError(f'{cmd} failed: {stderr[-2000:]}')
    main_peak = peaks.pop(process.pid, 0)
    return {'wall': wall, 'cpu': usage.ru_utime + usage.ru_stime,
            'main_mb': main_peak / 1024,
            'child_mb': max(peaks.values(), default=0) / 1024,
            'children': len(peaks), 'stderr': stderr}


def predict_cmd(checkpoint: Path, source: Path, output: Path, *extra: str
                ) -> list[str]:
    return [sys.executable, str(PREDICT), '--checkpoint', str(checkpoint),
            '--input', str(source), '--output', str(output), '--quiet',
            *extra]


def env_with(threads: int) -> dict:
    return {**os.environ, 'PYTHONPATH': str(REPO), 'OMP_NUM_THREADS':
            str(threads), 'MKL_NUM_THREADS': str(threads)}


# Sections ####################################################################


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


# chemprop's CLI as its console script runs it: `python -m chemprop.cli.main`
# imports the module and exits 0 without predicting (no __main__ guard), which
# once made chemprop look 4x faster here. The row counts are checked too.
_CHEMPROP_CLI = ('import sys; from chemprop.cli.main import main; '
                 "sys.argv[0] = 'chemprop'; sys.exit(main())")

_CHEMPROP_MODEL = r'''
import sys
from chemprop import models, nn
model = models.MPNN(nn.BondMessagePassing(), nn.MeanAggregation(),
                    nn.RegressionFFN())
models.save_model(sys.argv[1], model)
'''


def chemprop_version(python: str) -> Optional[str]:
    r"""The version of chemprop that the interpreter :obj:`python` imports,
    or :obj:`None` if it cannot."""
    try:
        check = subprocess.run([python, '-c', 'import chemprop; print('
                                'chemprop.__version__)'],
                               capture_output=True, text=True)
    except OSError:  # Not a program that runs.
        return None
    return check.stdout.strip() if check.returncode == 0 else None


def chemprop_side_by_side(checkpoint: Path, smiles: list[str], python: str,
                          work: Path) -> list[dict]:
    r"""chemprop predict and ours on the same molecules (CSV with a smiles
    column), 1 thread and all cores, start-up included."""
    source = work / 'chemprop_in.csv'
    source.write_text('smiles\n' + '\n'.join(smiles) + '\n')
    model = work / 'chemprop_model.pt'
    subprocess.run([python, '-c', _CHEMPROP_MODEL, str(model)], check=True,
                   env=env_with(1))
    cores = len(os.sched_getaffinity(0))
    results = []
    outputs = {'chemprop': work / 'chemprop_out.csv',
               'ours': work / 'ours_out.csv'}
    for threads in sorted({1, cores}):
        chemprop = run_measured(
            [python, '-c', _CHEMPROP_CLI, 'predict', '-i', str(source),
             '-o', str(outputs['chemprop']), '--model-paths', str(model),
             '-n', '0', '--accelerator', 'cpu'], env_with(threads))
        ours_extra = ['--num-workers', '0'] if threads == 1 else []
        ours = run_measured(predict_cmd(checkpoint, source, outputs['ours'],
                                        *ours_extra),
                            env_with(1 if threads > 1 else threads))
        for name, output in outputs.items():
            rows = _data_rows(output)
            if rows != len(smiles):
                raise RuntimeError(f'{name} wrote {rows} prediction rows for '
                                   f'{len(smiles)} molecules ({output})')
            output.unlink()
        for name, run in (('chemprop', chemprop), ('ours', ours)):
            run.update(name=name, threads=threads)
            results.append(run)
            print(f'chemprop comparison: {name}, {threads} thread(s)/cores: '
                  f'{run["wall"]:.1f} s, peak {run["main_mb"]:.0f} MB main '
                  f'/ {run["child_mb"]:.0f} MB largest child', flush=True)
    return results


def _data_rows(path: Path) -> int:
    r"""Rows of a CSV file after its header (0 if it was not written)."""
    if not path.is_file():
        return 0
    with open(path, newline='') as f:
        return max(sum(1 for _ in csv.reader(f)) - 1, 0)


# Report ######################################################################


def report(args, sections: set, results: dict, model_name: str,
           load_before, load_after) -> str:
    lines = [
        '# Prediction throughput and memory (SMILES to prediction, CPU)', '',
        f'- Command: `{args.command}`',
        f'- Date: {datetime.date.today().isoformat()}; commit {commit()}',
        f'- Hardware: {cpu_model()}, {os.cpu_count()} CPU cores '
        f'(torch threads: {torch.get_num_threads()}), {memory_gb()} of '
        f'memory; {platform.platform()}',
        f'- Software: Python {platform.python_version()}, torch '
        f'{torch.__version__}',
        f'- Model: {model_name}',
        '- Molecules: real ZINC250k SMILES (JT-VAE valid + test splits, '
        '29,445 molecules, repeated for larger inputs)',
        f'- Load average (1/5/15 min) before: '
        f'{" / ".join(f"{v:.2f}" for v in load_before)}, after: '
        f'{" / ".join(f"{v:.2f}" for v in load_after)} (other processes '
        f'share the cores: wall-clock rates are the share this run got; '
        f'CPU-time rates are less sensitive to that)', '']
    if 'stages' in results:
        lines += [f'## Stages ({args.stage_molecules} molecules, median of '
                  f'{args.repeats} runs)', '',
                  '| stage | molecules/s (wall clock) | molecules/CPU-s |',
                  '| --- | ---: | ---: |']
        lines += [f'| {stage} | {rate:,.0f} | {cpu_rate:,.0f} |'
                  for stage, rate, cpu_rate in results['stages']]
        lines.append('')
    if 'steady' in results:
        s = results['steady']
        small, large = s['sizes']
        lines += [
            '## Steady state, end to end', '',
            f'`scripts/predict.py` (default: one worker process per core, '
            f'one thread each), SMILES file to CSV, {small:,} and {large:,} '
            f'rows; the {s["rows"]:,} rows between the two runs, start-up '
            f'excluded:', '',
            f'- wall clock: **{s["wall_rate"]:,.0f} molecules/s** (the share '
            f'of the {s["cores"]} cores this run got);',
            f'- CPU time of all its processes: {s["cpu_ms"]:.3f} ms per '
            f'molecule, i.e. **{s["dedicated_rate"]:,.0f} molecules/s with '
            f'the {s["cores"]} cores to itself** (target: 1,500);',
            f'- whole runs: {small:,} rows in {s["runs"][small]["wall"]:.1f} '
            f's, {large:,} rows in {s["runs"][large]["wall"]:.1f} s.', '']
    if 'startup' in results:
        times = results['startup']
        lines += ['## Start-up', '',
                  f'`scripts/predict.py --checkpoint X --smiles CCO`, wall '
                  f'time over {len(times)} runs: median '
                  f'**{statistics.median(times):.2f} s** (runs: '
                  f'{", ".join(f"{t:.2f}" for t in times)}).', '']
    if 'memory' in results:
        lines += ['## Peak memory against input size', '',
                  '`scripts/predict.py`, SMILES file to `.csv.gz`, default '
                  'workers; peak resident memory (VmHWM) of each process:',
                  '', '| rows | wall time (s) | molecules/s (wall) | main '
                  'process (MB) | largest worker (MB) |',
                  '| ---: | ---: | ---: | ---: | ---: |']
        for run in results['memory']:
            lines.append(f'| {run["rows"]:,} | {run["wall"]:.0f} | '
                         f'{run["rate"]:,.0f} | {run["main_mb"]:.0f} | '
                         f'{run["child_mb"]:.0f} |')
        runs = results['memory']
        if len(runs) > 1:
            growth = (runs[-1]['main_mb'] + runs[-1]['child_mb'] -
                      runs[0]['main_mb'] - runs[0]['child_mb'])
            lines += ['', f'Growth from {runs[0]["rows"]:,} to '
                      f'{runs[-1]["rows"]:,} rows (main + largest worker): '
                      f'**{growth:+.0f} MB** (goal: within 100 MB).']
        lines.append('')
    if 'chemprop' in results:
        found = results['chemprop']
        lines += ['## Side by side with chemprop', '']
        if isinstance(found, str):
            lines += [found, '']
        else:
            version, runs = found
            lines += [
                f'The same {args.chemprop_rows:,} molecules (CSV), wall time '
                f'including start-up; chemprop {version} `predict` with its '
                f'default D-MPNN (random weights), ours with the model '
                f'above. "1 thread": one process, one thread '
                f'(`--num-workers 0` for ours); "all cores": '
                f'OMP_NUM_THREADS={len(os.sched_getaffinity(0))} for '
                f'chemprop, one worker per core for ours.', '',
                '| | threads | wall time (s) | molecules/s | peak memory, '
                'main (MB) | largest child (MB) |',
                '| --- | --- | ---: | ---: | ---: | ---: |']
            for run in runs:
                label = '1 thread' if run['threads'] == 1 else 'all cores'
                lines.append(
                    f'| {run["name"]} | {label} | {run["wall"]:.1f} | '
                    f'{args.chemprop_rows / run["wall"]:,.0f} | '
                    f'{run["main_mb"]:.0f} | {run["child_mb"]:.0f} |')
            lines.append('')
    return '\n'.join(lines) + '\n'


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
    text = report(args, sections, results, model_name, load_before,
                  os.getloadavg())
    write_report(text, args.output)
    return 0


if __name__ == '__main__':
    sys.exit(main())
