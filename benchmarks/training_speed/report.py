r"""The markdown report of ``benchmarks/train_throughput.py``: the command,
the machine and one row per setting."""
from __future__ import annotations

import os
import platform
import time
from typing import Optional

import torch

from .baseline import without_option


def _seconds(value: Optional[float]) -> str:
    return '—' if value is None else f'{value:.1f}'


def report_markdown(results: list[dict], argv: list[str]) -> str:
    r"""A markdown report of :obj:`results`: the command, the machine and
    one row per setting (with the baseline's median and the ratio when
    measured against one)."""
    first = results[0] if results else {}
    baseline = first.get('baseline')
    command = ' '.join(['python benchmarks/train_throughput.py',
                        *without_option(argv, '--json', '--markdown')])
    lines = [
        '# Training throughput', '',
        f'`{command}`', '',
        f"* Hardware: {first.get('device_name', '?')}; torch "
        f"{torch.__version__}, Python {platform.python_version()}; measured "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} (load average "
        f"{os.getloadavg()[0]:.1f} at the end).",
        '* A step = batch fetch (collation and layout included) + forward + '
        'loss + backward + clip + AdamW; median over the measured steps after '
        'the warm-up; the first step (loader start, compilation) apart'
        + (f', in alternating rounds of this code and `{baseline}` (the '
           f'median of the per-round medians)' if baseline else '') + '.',
        '']
    header = ('| dataset | device | batch | buckets | precision | compiled | '
              'first step (s) | median step (s) | graphs/s |')
    rule = '| --- | --- | --- | --- | --- | --- | --- | --- | --- |'
    if baseline:
        header += f' `{baseline}` median step (s) | speed-up |'
        rule += ' --- | --- |'
    lines += [header, rule]
    for r in results:
        row = (f"| {r['dataset']} | {r['device']} | {r['batch_size']} | "
               f"{r.get('buckets', '?')} | {r['precision']} | "
               f"{r.get('compile_scope', 'model') if r.get('compiled') else 'no'} | "
               f"{_seconds(r.get('first_step_s'))} | {r['median_step_s']:.3f} | "
               f"{r['batch_size'] / r['median_step_s']:.0f} |")
        if baseline:
            row += (f" {r['baseline_median_step_s']:.3f} | "
                    f"{r['speedup_vs_baseline']:.2f}x |")
        lines.append(row)
    return '\n'.join(lines) + '\n'
