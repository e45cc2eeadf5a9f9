r"""The table of bundled models in ``scripts/README.md``, generated from
the model cards of the installed members, so that every number it shows
(scores, steps, CPU time, file sizes) is read from the files that ship and
never typed."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Union

from graphormer_sepnorm.checkpoint import read_card
from graphormer_sepnorm.models import NORM_NAMES
from graphormer_sepnorm.bundled import BUNDLED_MODELS, bundled_dir, member_paths

__all__ = ['bundled_models_markdown']

_METRIC_NAMES = {'mae': 'MAE', 'rocauc': 'ROC-AUC'}


def _score(evaluation: Any) -> str:
    r"""A split's evaluation from a card: its metric and value, or the
    card's reason why it was not measured."""
    if not isinstance(evaluation, dict):
        return str(evaluation) if evaluation else 'not recorded'
    metric = _METRIC_NAMES.get(evaluation['metric'], evaluation['metric'])
    return (f"{metric} {evaluation['value']:.4f} "
            f"({evaluation['num_graphs']:,} graphs)")


def _member_row(name: str, path: Path) -> str:
    card, _ = read_card(path)
    extra = card.extra
    evaluation = extra.get('evaluation', {})
    norm = NORM_NAMES.get(extra.get('norm'), extra.get('norm'))
    training = (f"{extra.get('kind', 'run')}, {norm}, seed "
                f"{extra.get('seed')}: {extra.get('epochs')} epochs, "
                f"{extra.get('steps'):,} steps, "
                f"{extra.get('cpu_time_s', 0) / 60:.1f} CPU minutes "
                f"({extra.get('hardware', {}).get('device_name', '?')})")
    backbone = extra.get('init_from')
    if backbone:
        training += f", fine-tuned from the pretrained {backbone['source']}"
    cells = [f'`{name}`', BUNDLED_MODELS[name].description,
             extra.get('dataset', '?'),
             f'`{path.name}`, {path.stat().st_size / 1e6:.2f} MB',
             training, _score(evaluation.get('val')),
             _score(evaluation.get('test')), extra.get('note') or '']
    return '| ' + ' | '.join(cell.replace('|', '\\|') for cell in cells) + ' |'


def bundled_models_markdown(
        directory: Optional[Union[str, Path]] = None) -> str:
    r"""A markdown table with one row per member file of every registered
    bundled model (and one row per model with none): its file and size, how
    it was trained, its validation and test scores as measured with the
    stored float16 weights when it was bundled, and the card's note.

    Args:
        directory (str or Path, optional): Folder of the member files
            (default: the installed one, see
            :func:`~graphormer_sepnorm.bundled.bundled_dir`).
    """
    folder = bundled_dir(directory)
    lines = ['| name | predicts | dataset | member file | training | '
             'validation (float16 weights) | test (float16 weights) | note |',
             '| --- | --- | --- | --- | --- | --- | --- | --- |']
    for name, entry in BUNDLED_MODELS.items():
        paths = member_paths(name, folder)
        if not paths:
            lines.append(f'| `{name}` | {entry.description} '
                         f'| {entry.dataset} | none shipped yet: '
                         f'`--model {name}` says how to train and bundle '
                         f'one | | | | |')
        lines.extend(_member_row(name, path) for path in paths)
    return '\n'.join(lines) + '\n'
