r"""Plots of the results: validation curves (mean and band over seeds) and
time to accuracy (best validation so far against CPU minutes)."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence, Union

import numpy as np

from .results import Group, best_so_far, common_threshold

PathLike = Union[str, Path]

_COLOURS = {'sep': 'tab:red', 'share': 'tab:blue'}


def _pyplot():
    import matplotlib
    matplotlib.use('Agg', force=False)
    import matplotlib.pyplot as plt
    return plt


def _validation_points(run: dict) -> dict[int, float]:
    key = f"val_{run['metric']}"
    points = {}
    for row in run['history']:
        value = row.get(key)
        if value not in (None, '') and not math.isnan(float(value)):
            points[int(row['step'])] = float(value)
    return points


def plot_validation_curves(groups: Sequence[Group], folder: PathLike
                           ) -> list[Path]:
    r"""One figure per dataset, ``val_curves_<dataset>.png``: the validation
    metric against training steps of each Graphormer model, the mean over
    seeds as a line and mean ± one standard deviation as a band (at the
    steps every seed validated)."""
    plt = _pyplot()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for dataset in sorted({g.dataset for g in groups}):
        members = [g for g in groups if g.dataset == dataset and
                   g.is_graphormer]
        if not members:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        for g in members:
            curves = [_validation_points(r) for r in g.runs]
            steps = sorted(set.intersection(*(set(c) for c in curves)))
            if not steps:
                continue
            values = np.array([[c[s] for s in steps] for c in curves])
            scale = 100.0 if g.higher_is_better else 1.0
            mean, std = values.mean(0) * scale, values.std(0) * scale
            colour = _COLOURS.get(g.model, 'gray')
            ax.plot(steps, mean, color=colour,
                    label=f'{g.label} (n={len(g.runs)})')
            if len(g.runs) > 1:
                ax.fill_between(steps, mean - std, mean + std, color=colour,
                                alpha=0.2)
        ax.set_xlabel('training step')
        ax.set_ylabel('validation ' + ('ROC-AUC (%)' if members[0]
                                       .higher_is_better else
                                       members[0].metric.upper()))
        ax.set_title(f'{dataset}: validation, mean ± std over seeds')
        if not members[0].higher_is_better:
            ax.set_yscale('log')
        ax.legend()
        fig.tight_layout()
        path = folder / f'val_curves_{dataset}.png'
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def plot_time_to_accuracy(groups: Sequence[Group], folder: PathLike
                          ) -> list[Path]:
    r"""One figure per dataset, ``time_to_accuracy_<dataset>.png``: the best
    validation metric so far against CPU minutes, every model (other model
    families included), mean over seeds on a common time grid, with the
    level every model reaches (the threshold of the time-to-accuracy
    table)."""
    plt = _pyplot()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for dataset in sorted({g.dataset for g in groups}):
        members = [g for g in groups if g.dataset == dataset]
        higher = members[0].higher_is_better
        scale = 100.0 if higher else 1.0
        fig, ax = plt.subplots(figsize=(6, 4))
        for g in members:
            curves = [best_so_far(r) for r in g.runs]
            curves = [c for c in curves if c]
            if not curves:
                continue
            start = max(c[0][0] for c in curves)
            end = min(c[-1][0] for c in curves)
            grid = np.linspace(start, end, 100) if end > start else \
                np.array([start])
            # Step interpolation: the best value known at each minute.
            values = [[c[max(0, np.searchsorted([m for m, _ in c], t,
                                                'right') - 1)][1]
                       for t in grid] for c in curves]
            mean = np.mean(values, axis=0) * scale
            ax.step(grid, mean, where='post',
                    color=_COLOURS.get(g.model, 'tab:green'),
                    label=f'{g.label} (n={len(curves)})')
        threshold = common_threshold(members) * scale
        ax.axhline(threshold, color='k', linestyle=':', alpha=0.6,
                   label='level every model reaches')
        ax.set_xlabel('CPU minutes (one core)')
        ax.set_ylabel('best validation ' + ('ROC-AUC (%)' if higher else
                                            members[0].metric.upper()))
        ax.set_title(f'{dataset}: time to accuracy, mean over seeds')
        if not higher:
            ax.set_yscale('log')
        ax.legend()
        fig.tight_layout()
        path = folder / f'time_to_accuracy_{dataset}.png'
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
