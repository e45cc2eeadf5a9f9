r"""The table of bundled models in ``scripts/README.md``, generated from
the model cards of the installed members, so that every number it shows
(scores, steps, CPU time, file sizes) is read from the files that ship and
never typed."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Union

from graphormer_sepnorm.checkpoint import read_card
from graphormer_sepnorm.models import NORM_NAMES
from graphormer_sepnorm.bundled import (BUNDLED_MODELS, bundled_dir,
                                        bundled_model_paths, member_paths)

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


def _member_row(name: str, path: Path, with_note: bool = True) -> str:
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
    dataset = extra.get('dataset', '?')
    if dataset == 'csv':  # A CSV of the benchmark's splits, from SMILES.
        dataset = f'{BUNDLED_MODELS[name].dataset}, from SMILES (CSV)'
    cells = [f'`{name}`', BUNDLED_MODELS[name].description, dataset,
             f'`{path.name}`, {path.stat().st_size / 1e6:.2f} MB',
             training, _score(evaluation.get('val')),
             _score(evaluation.get('test')),
             (extra.get('note') or '') if with_note else 'as above']
    return '| ' + ' | '.join(cell.replace('|', '\\|') for cell in cells) + ' |'


def bundled_models_markdown(
        directory: Optional[Union[str, Path]] = None) -> str:
    r"""A markdown table with one row per member file of every registered
    bundled model (and one row per model with none): its file and size, how
    it was trained, its validation and test scores as measured with the
    stored float16 weights when it was bundled, and the card's note (once
    per model); a single model names the member of its ensemble it is.

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
        paths = member_paths(entry.files_name, folder)
        if not paths:
            lines.append(f'| `{name}` | {entry.description} '
                         f'| {entry.dataset} | none shipped yet: '
                         f'`--model {name}` says how to train and bundle '
                         f'one | | | | |')
        elif entry.single_of is not None:
            best = bundled_model_paths(name, folder)[0]
            lines.append(f'| `{name}` | {entry.description} '
                         f'| {entry.dataset} | `{best.name}` of '
                         f'`{entry.single_of}` (the best validation score '
                         f'of its members, row above) | | | | |')
        else:
            lines.extend(_member_row(name, path, i == 0)
                         for i, path in enumerate(paths))
    return '\n'.join(lines) + '\n'
