#!/usr/bin/env python
r"""The BatchNorm decision before the new rows, read from the committed
trials of ``benchmarks/plans/tune_precise_bn.yaml``: the same SepNorm runs
(same seeds, same training, weight for weight) validated with the running
BatchNorm statistics and with statistics re-estimated on 16 training
batches (``train.precise_bn_batches``). Validation only; test is never
read.

Per trial and seed it prints the best validation MAE and its epoch, the
largest rise of the validation MAE from one epoch to the next (a spike that
best-epoch selection can fall into, or be rescued by), the mean validation
MAE over the epochs, and the CPU minutes; it writes the table as
``SUMMARY.md`` and the validation curves as ``validation_curves.png``
beside the trials::

    python benchmarks/precise_bn_summary.py \
        --trials benchmarks/results/tuning/precise_bn
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Optional, Sequence

# The research tooling (benchmarks/) is imported from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.analysis.result_plots import save_figure
from benchmarks.analysis.runs import load_runs


def validation_curve(run: dict) -> list[float]:
    r"""The validation metric after each epoch of a run."""
    key = f"val_{run['metric']}"
    return [float(row[key]) for row in run['history'] if row.get(key)]


def largest_rise(curve: Sequence[float]) -> float:
    r"""The largest increase from one validation to the next (0 if the
    curve never rises)."""
    return max([b - a for a, b in zip(curve, curve[1:])] + [0.0])


def summary_rows(runs: Sequence[dict]) -> list[dict]:
    r"""One row per run: trial, seed, best validation and its epoch, the
    largest rise, the mean over epochs and the CPU minutes."""
    rows = []
    for run in runs:
        curve = validation_curve(run)
        rows.append({
            'trial': run['protocol']['trial'], 'seed': run['seed'],
            'best': run['best_val_metric'], 'best_epoch': run['best_epoch'],
            'largest_rise': largest_rise(curve),
            'mean': statistics.fmean(curve), 'epochs': len(curve),
            'cpu_minutes': run['cpu_time_s'] / 60, 'curve': curve})
    return sorted(rows, key=lambda r: (r['trial'], r['seed']))


def summary_markdown(rows: Sequence[dict]) -> str:
    r"""The table of :func:`summary_rows` with the per-trial means."""
    lines = ['| trial | seed | best val MAE (epoch) | largest rise between '
             'epochs | mean val MAE over epochs | CPU min |',
             '| --- | --- | --- | --- | --- | --- |']
    for row in rows:
        lines.append(f"| {row['trial']} | {row['seed']} | {row['best']:.4f} "
                     f"({row['best_epoch']}) | {row['largest_rise']:.3f} | "
                     f"{row['mean']:.3f} | {row['cpu_minutes']:.1f} |")
    for trial in sorted({r['trial'] for r in rows}):
        members = [r for r in rows if r['trial'] == trial]
        lines.append(
            f"| **{trial}, mean** | {len(members)} seeds | "
            f"{statistics.fmean(r['best'] for r in members):.4f} | "
            f"{statistics.fmean(r['largest_rise'] for r in members):.3f} | "
            f"{statistics.fmean(r['mean'] for r in members):.3f} | "
            f"{statistics.fmean(r['cpu_minutes'] for r in members):.1f} |")
    return '\n'.join(lines) + '\n'


def plot_curves(rows: Sequence[dict], path: Path) -> None:
    r"""Validation MAE against epoch, one line per run, one colour per
    trial."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 4))
    trials = sorted({r['trial'] for r in rows})
    for row in rows:
        colour = f"C{trials.index(row['trial'])}"
        ax.plot(range(len(row['curve'])), row['curve'], color=colour,
                marker='o', linestyle='-' if row['seed'] == 0 else '--',
                label=f"{row['trial']}, seed {row['seed']}")
    ax.set_xlabel('epoch')
    ax.set_ylabel('validation MAE')
    ax.set_title('SepNorm, ZINC-subset, quarter budget: validation with '
                 'running vs re-estimated BatchNorm statistics', fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0].replace('\n', ' '),
        epilog=__doc__.split('\n\n', 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--trials',
                        default='benchmarks/results/tuning/precise_bn',
                        help='folder of the trials (default: %(default)s)')
    args = parser.parse_args(argv)
    try:
        runs = load_runs(args.trials)
    except FileNotFoundError as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    rows = summary_rows(runs)
    text = summary_markdown(rows)
    folder = Path(args.trials)
    (folder / 'SUMMARY.md').write_text(text)
    plot_curves(rows, folder / 'validation_curves.png')
    print(text)
    print(f'wrote {folder / "SUMMARY.md"} and '
          f'{folder / "validation_curves.png"}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
