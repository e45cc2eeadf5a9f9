r"""Plots of the results: validation curves (mean and band over seeds),
time to accuracy (best validation so far against CPU minutes), and the test
predictions (parity plots for regression, ROC curves for binary tasks)."""
from __future__ import annotations

import io
import itertools
import math
import textwrap
from pathlib import Path
from typing import Sequence, Union

import numpy as np

from .runs import Group, best_so_far, common_threshold
from .test_predictions import common_molecules, read_test_predictions

PathLike = Union[str, Path]

_COLOURS = {'sep': 'tab:red', 'share': 'tab:blue'}
#: Colours of the other models of a figure, in turn: Graphormer variants
#: first, then other model families (:func:`~.runs.group_runs`' order).
_OTHER_COLOURS = ('tab:purple', 'tab:green', 'tab:orange', 'tab:brown',
                  'tab:pink', 'tab:olive', 'tab:cyan', 'tab:gray', 'gold',
                  'navy', 'lime', 'maroon')
#: Characters per line of a legend entry (the long variant names wrap).
_LEGEND_WIDTH = 80


def _colours(members: Sequence[Group]) -> dict[str, str]:
    r"""A colour per model of one figure: the recipe's two norms keep
    theirs in every figure, each other model gets its own."""
    others = itertools.cycle(_OTHER_COLOURS)
    return {g.model: _COLOURS.get(g.model) or next(others) for g in members}


def _legend_below(fig, ax) -> None:
    r"""The legend under the axes, its long entries wrapped, the figure
    made taller to hold it."""
    handles, labels = ax.get_legend_handles_labels()
    labels = [textwrap.fill(label, _LEGEND_WIDTH) for label in labels]
    lines = sum(label.count('\n') + 1 for label in labels)
    width, height = fig.get_size_inches()
    legend_height = 0.14 * lines + 0.15  # 7-point lines, in inches
    fig.set_size_inches(width, height + legend_height)
    fig.legend(handles, labels, loc='lower left', fontsize=7,
               frameon=False, bbox_to_anchor=(0.02, 0.0))
    fig.tight_layout(rect=(0, legend_height / (height + legend_height),
                           1, 1))


def _pyplot():
    import matplotlib
    matplotlib.use('Agg', force=False)
    import matplotlib.pyplot as plt
    return plt


def _by_dataset(groups: Sequence[Group]) -> list[tuple[str, list[Group]]]:
    return [(dataset, [g for g in groups if g.dataset == dataset])
            for dataset in sorted({g.dataset for g in groups})]


#: Colours of a saved figure's palette: a plot's few colours and their
#: anti-aliased edges fit, at about a third of the bytes of a true-colour
#: PNG (the committed figures count towards the tracked tree's limit,
#: tests/test_tree_size.py).
PALETTE_COLOURS = 256


def save_figure(fig, path: PathLike, dpi: int = 110) -> Path:
    r"""Writes a matplotlib figure to :obj:`path` as a palette PNG of
    :data:`PALETTE_COLOURS` colours, and closes it: every figure the
    benchmark scripts commit."""
    plt = _pyplot()
    buffer = io.BytesIO()
    fig.savefig(buffer, format='png', dpi=dpi)
    plt.close(fig)
    return quantize_png(buffer.getvalue(), path)


def quantize_png(image_bytes: bytes, path: PathLike) -> Path:
    r"""Writes the PNG :obj:`image_bytes` to :obj:`path` with a palette of
    :data:`PALETTE_COLOURS` colours (median cut, no dithering: flat areas
    and lines stay flat)."""
    from PIL import Image
    path = Path(path)
    with Image.open(io.BytesIO(image_bytes)) as image:
        image.convert('RGB').quantize(
            PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT,
            dither=Image.Dither.NONE).save(path, optimize=True)
    return path


def _save(fig, folder: PathLike, name: str) -> Path:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if not fig.legends:  # _legend_below laid out its figure already
        fig.tight_layout()
    return save_figure(fig, folder / name)


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
    paths = []
    for dataset, members in _by_dataset(groups):
        members = [g for g in members if g.is_graphormer]
        if not members:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        colours = _colours(members)
        for g in members:
            curves = [_validation_points(r) for r in g.runs]
            steps = sorted(set.intersection(*(set(c) for c in curves)))
            if not steps:
                continue
            values = np.array([[c[s] for s in steps] for c in curves])
            scale = 100.0 if g.higher_is_better else 1.0
            mean, std = values.mean(0) * scale, values.std(0) * scale
            colour = colours[g.model]
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
        _legend_below(fig, ax)
        paths.append(_save(fig, folder, f'val_curves_{dataset}.png'))
    return paths


def plot_time_to_accuracy(groups: Sequence[Group], folder: PathLike
                          ) -> list[Path]:
    r"""One figure per dataset, ``time_to_accuracy_<dataset>.png``: the best
    validation metric so far against CPU minutes, every model (other model
    families included), mean over seeds on a common time grid, with the
    level every model reaches (the threshold of the time-to-accuracy
    table)."""
    plt = _pyplot()
    paths = []
    for dataset, members in _by_dataset(groups):
        higher = members[0].higher_is_better
        scale = 100.0 if higher else 1.0
        fig, ax = plt.subplots(figsize=(6, 4))
        colours = _colours(members)
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
                    color=colours[g.model],
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
        _legend_below(fig, ax)
        paths.append(_save(fig, folder, f'time_to_accuracy_{dataset}.png'))
    return paths


def plot_test_predictions(groups: Sequence[Group], folder: PathLike
                          ) -> list[Path]:
    r"""One figure per dataset whose runs kept test predictions,
    ``test_predictions_<dataset>.png``, one panel per model, on the test
    molecules every run of the dataset predicted: for regression a parity
    plot (the seed ensemble's mean prediction against the label, with the
    ensemble's MAE), for binary tasks the ROC curve of each seed."""
    import torch
    from torchmetrics.functional.classification import binary_roc
    plt = _pyplot()
    paths = []
    for dataset, members in _by_dataset(groups):
        ids = common_molecules([r for g in members for r in g.runs])
        if not ids:
            continue
        fig, axes = plt.subplots(1, len(members), squeeze=False,
                                 figsize=(4 * len(members), 4))
        colours = _colours(members)
        for ax, g in zip(axes[0], members):
            tables = [read_test_predictions(r) for r in g.runs]
            labels = np.array([tables[0][i][0] for i in ids])
            values = np.array([[t[i][1] for i in ids] for t in tables])
            if g.higher_is_better:
                for seed, row in zip(g.seeds, values):
                    fpr, tpr, _ = binary_roc(torch.from_numpy(row),
                                             torch.from_numpy(labels).long())
                    ax.plot(fpr, tpr, lw=1, label=f'seed {seed}')
                ax.plot([0, 1], [0, 1], 'k:', lw=1)
                ax.set_xlabel('false positive rate')
                ax.set_ylabel('true positive rate')
                ax.legend(loc='lower right', fontsize=8)
            else:
                mean = values.mean(0)
                low, high = min(labels.min(), mean.min()), max(
                    labels.max(), mean.max())
                ax.scatter(labels, mean, s=4, alpha=0.5,
                           color=colours[g.model])
                ax.plot([low, high], [low, high], 'k:', lw=1)
                ax.set_xlabel('label')
                ax.set_ylabel(f'mean prediction of {len(tables)} seeds')
                ax.text(0.05, 0.92, f'MAE {np.abs(mean - labels).mean():.3f}',
                        transform=ax.transAxes)
            ax.set_title(g.label, fontsize=10)
        fig.suptitle(f'{dataset}: {len(ids):,} test molecules')
        paths.append(_save(fig, folder, f'test_predictions_{dataset}.png'))
    return paths
