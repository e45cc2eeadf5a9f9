r"""The markdown report of ``benchmarks/predict_throughput.py``: the
command, the machine and the code, then one section per measurement."""
from __future__ import annotations

import datetime
import os
import platform
import statistics

import torch

from graphormer_sepnorm.training.hardware import cpu_model

from .measure import commit, memory_gb


def report(args, results: dict, model_name: str, load_before,
           load_after) -> str:
    r"""The report of the measured :obj:`results` (one entry per section
    run) as markdown."""
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
