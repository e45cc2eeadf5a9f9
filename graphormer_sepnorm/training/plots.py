r"""Learning-curve plots (matplotlib, Agg backend: no display needed).
matplotlib is the optional extra ``[plots]``: without it a run draws no
``curves.png`` and says so once; its numbers are all in ``metrics.csv``."""
from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Optional, Sequence, Union

from .metrics import HIGHER_IS_BETTER

__all__ = ['plot_curves', 'pyplot', 'save_figure']

#: Said once per process when matplotlib is missing.
NO_MATPLOTLIB = ("matplotlib is not installed, so no curves.png is drawn "
                 "(the numbers are in metrics.csv); to draw the curves: pip "
                 "install 'graphormer-sepnorm[plots]'")
_said_no_matplotlib = False


def pyplot():
    r"""matplotlib's :obj:`pyplot` on the Agg backend, or :obj:`None`
    without matplotlib (after :data:`NO_MATPLOTLIB` on stderr, the first
    time)."""
    global _said_no_matplotlib
    try:
        import matplotlib
    except ImportError:
        if not _said_no_matplotlib:
            print(NO_MATPLOTLIB, file=sys.stderr)
            _said_no_matplotlib = True
        return None
    matplotlib.use('Agg', force=False)
    import matplotlib.pyplot as plt
    return plt


def save_figure(fig, path: Union[str, Path], title: str = '') -> Path:
    r"""Titles (if :obj:`title`), lays out and writes :obj:`fig` to
    :obj:`path` (its folder made if needed), then closes it; returns the
    path."""
    import matplotlib.pyplot as plt
    path = Path(path)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_curves(history: Sequence[dict], path: Union[str, Path],
                metric: str, title: str = '') -> Optional[Path]:
    r"""Writes a two-panel figure: training loss and learning rate per
    epoch, and the validation and test metric per epoch (the best
    validation epoch marked; the test curve only if the rows have one).
    Returns its path, or :obj:`None` without matplotlib (:func:`pyplot`)."""
    plt = pyplot()
    if plt is None:
        return None

    path = Path(path)
    epochs = [row['epoch'] for row in history]
    fig, (ax_loss, ax_metric) = plt.subplots(1, 2, figsize=(10, 4))
    ax_loss.plot(epochs, [row['train_loss'] for row in history], 'o-',
                 label='train loss', markersize=3)
    ax_loss.set_xlabel('epoch')
    ax_loss.set_ylabel('train loss')
    ax_lr = ax_loss.twinx()
    ax_lr.plot(epochs, [row['lr'] for row in history], color='gray',
               alpha=0.6, label='lr')
    ax_lr.set_ylabel('learning rate')
    for split, style in (('val', 'o-'), ('test', 's--')):
        if history and f'{split}_{metric}' not in history[0]:
            continue
        ax_metric.plot(epochs, [row[f'{split}_{metric}'] for row in history],
                       style, label=f'{split} {metric}', markersize=3)
    values = [row[f'val_{metric}'] for row in history]
    finite = [(v, i) for i, v in enumerate(values) if not math.isnan(v)]
    if finite:
        best = (max if HIGHER_IS_BETTER[metric] else min)(finite)[1]
        ax_metric.axvline(epochs[best], color='k', alpha=0.3, linestyle=':',
                          label='best val')
    ax_metric.set_xlabel('epoch')
    ax_metric.set_ylabel(metric)
    ax_metric.legend()
    return save_figure(fig, path, title)
