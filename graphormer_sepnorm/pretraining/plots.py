r"""Pretraining curves (matplotlib, Agg backend: no display needed; without
the optional matplotlib a run draws none and says so once)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence, Union

from ..training.plots import pyplot, save_figure

__all__ = ['plot_pretraining_curves']

#: (panel title, [(column, label)]) of the four panels.
_PANELS = [
    ('loss', [('train_loss', 'train (weighted sum)'),
              ('val_loss', 'validation (weighted sum)'),
              ('val_atom_loss', 'validation masked atoms (CE)'),
              ('val_descriptor_mse', 'validation descriptors (MSE)')]),
    ('masked atoms', [('val_element_accuracy', 'element accuracy'),
                      ('val_atom_feature_accuracy',
                       'all-feature accuracy')]),
    ('descriptors', [('val_descriptor_r2', 'mean R²')]),
    ('graph token geometry', [('val_graph_token_uniformity',
                               'uniformity (lower: more uniform)'),
                              ('val_graph_token_anisotropy',
                               'anisotropy (lower: less collapsed)')]),
]


def plot_pretraining_curves(history: Sequence[dict], path: Union[str, Path],
                            title: str = '') -> Optional[Path]:
    r"""Writes a four-panel figure of a pretraining run against the
    optimizer step: losses, masked-atom accuracy, descriptor :math:`R^2`
    and the validation graph tokens' uniformity and anisotropy. Returns its
    path, or :obj:`None` without matplotlib
    (:func:`~graphormer_sepnorm.training.plots.pyplot`)."""
    plt = pyplot()
    if plt is None:
        return None

    path = Path(path)
    steps = [row['step'] for row in history]
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    for ax, (name, columns) in zip(axes.flat, _PANELS):
        for column, label in columns:
            ax.plot(steps, [float(row.get(column, 'nan')) for row in history],
                    'o-', markersize=3, label=label)
        ax.set_title(name)
        ax.set_xlabel('optimizer step')
        ax.legend(fontsize=8)
    return save_figure(fig, path, title)
