r"""Learning-curve plots (matplotlib, Agg backend: no display needed)."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence, Union

from .metrics import HIGHER_IS_BETTER

__all__ = ['plot_curves']


def plot_curves(history: Sequence[dict], path: Union[str, Path],
                metric: str, title: str = '') -> Path:
    r"""Writes a two-panel figure: training loss and learning rate per
    epoch, and the validation and test metric per epoch (the best
    validation epoch marked; the test curve only if the rows have one)."""
    import matplotlib
    matplotlib.use('Agg', force=False)
    import matplotlib.pyplot as plt

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
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
