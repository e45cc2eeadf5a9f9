r"""The table of tuning trials: every trial's overrides and its best
validation metric per norm and seed (test is never read in a trial)."""
from __future__ import annotations

import statistics
from typing import Sequence

from .formatting import mean_std
from .runs import NORM_LABELS, dataset_of


def trials_table(runs: Sequence[dict]) -> str:
    r"""Markdown, one section per dataset, one row per trial (runs carry the
    ``protocol`` entry of ``benchmarks/cpu_protocol.py``), best mean
    validation metric over both norms and all seeds first."""
    by_dataset: dict[str, dict[str, list[dict]]] = {}
    for run in runs:
        trial = run.get('protocol', {}).get('trial', '?')
        dataset = dataset_of(run) + (f", {run['variant']}"
                                     if run.get('variant') else '')
        by_dataset.setdefault(dataset, {}).setdefault(trial, []).append(run)
    sections = []
    for dataset, trials in sorted(by_dataset.items()):
        metric = next(iter(trials.values()))[0]['metric']
        higher = metric == 'rocauc'
        scale, digits = (100.0, 2) if higher else (1.0, 3)

        def overall(members: list[dict]) -> float:
            return statistics.fmean(r['best_val_metric'] for r in members)

        ordered = sorted(trials.items(), key=lambda item: overall(item[1]),
                         reverse=higher)
        name = 'ROC-AUC (%)' if higher else metric.upper()
        lines = [f'### {dataset}: best validation {name} per trial', '',
                 '| trial | overrides | steps | '
                 + ' | '.join(f'{label} (seeds)' for label in
                              NORM_LABELS.values())
                 + ' | mean over all runs | test read |',
                 '| --- | --- | --- | ' + '--- | ' * len(NORM_LABELS)
                 + '--- | --- |']
        for trial, members in ordered:
            cells = []
            for norm in NORM_LABELS:
                runs_of_norm = sorted((r for r in members
                                       if r.get('norm') == norm),
                                      key=lambda r: r['seed'])
                values = [r['best_val_metric'] for r in runs_of_norm]
                per_seed = ', '.join(f"{r['seed']}: "
                                     f"{r['best_val_metric'] * scale:.{digits}f}"
                                     for r in runs_of_norm)
                cells.append(f'{mean_std(values, scale, digits)} ({per_seed})'
                             if values else '—')
            overrides = ' '.join(f'`{o}`' for o in members[0].get(
                'protocol', {}).get('overrides', [])) or '(config values)'
            steps = sorted({r['steps'] for r in members})
            test_read = any(r.get('test_metric_at_best_val') is not None
                            for r in members)
            lines.append(f'| {trial} | {overrides} | '
                         f'{"/".join(f"{s:,}" for s in steps)} | '
                         + ' | '.join(cells)
                         + f' | {overall(members) * scale:.{digits}f} | '
                         f'{"yes" if test_read else "no"} |')
        sections.append('\n'.join(lines) + '\n')
    return '\n'.join(sections)
