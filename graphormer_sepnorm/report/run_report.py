r"""The report of a training run (:func:`write_run_report`):
:obj:`report.html` beside :obj:`curves.png`, from the files the run leaves
(:obj:`results.json`, :obj:`metrics.csv`, :obj:`config.yaml`,
:obj:`test_predictions.csv`, plain or compressed as a kept run holds it,
:obj:`model.safetensors`): the curves,
the results in the words of the test protocol, predicted against measured
test values (binary: the ROC curve), the worst-predicted test molecules
drawn with their atom contributions (when the predictions carry SMILES),
and the configuration."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Optional, Union

from .contributions import atom_contributions, describe_method
from .drawing import drawing_html
from .page import Column, Row, esc, molecule_table, number, render_page
from .run_features import report_molecules
from .run_smiles import add_test_smiles
from .svg_plots import lines_svg, parity_svg, roc_svg

__all__ = ['write_run_report', 'REPORT_FILE']

#: The report's name in the run directory.
REPORT_FILE = 'report.html'


def write_run_report(run_dir: Union[str, Path],
                     path: Optional[Union[str, Path]] = None,
                     worst: int = 12, steps: int = 8) -> Path:
    r"""Writes the report of the run in :obj:`run_dir`; returns its path.

    Args:
        run_dir (str or Path): The run directory (its :obj:`results.json`
            is required; every other file is shown if present).
        path (str or Path, optional): Where to write it.
            (default: :obj:`run_dir/report.html`)
        worst (int, optional): Worst-predicted test molecules shown.
            (default: :obj:`12`)
        steps (int, optional): Integration steps their atom
            contributions start with (see
            :func:`~.contributions.atom_contributions`); :obj:`0`: none.
            (default: :obj:`8`)

    Raises:
        FileNotFoundError: If :obj:`run_dir` has no :obj:`results.json`.
    """
    from ..data.text_files import open_text
    run_dir = Path(run_dir)
    results_file = run_dir / 'results.json'
    if not results_file.is_file():
        raise FileNotFoundError(f'{run_dir} is not a finished training run: '
                                f'it has no results.json')
    results = json.loads(results_file.read_text())
    sections = [('Results', _results(results))]
    history = _read_csv(run_dir / 'metrics.csv', open_text)
    if history:
        sections.append(('Curves', _curves(history, results['metric'])))
    name = results.get('test_predictions')
    rows = _read_csv(run_dir / name, open_text) if name else []
    if rows:
        sections.append(('Test predictions', _test_plot(rows, results)))
        sections.append((f'The {worst} worst-predicted test molecules',
                         _worst(rows, results, run_dir, worst, steps)))
    config = run_dir / 'config.yaml'
    if config.is_file():
        sections.append(('Configuration', f'<pre>{esc(config.read_text())}'
                                          f'</pre>'))
    title = (f"Training run {run_dir.name}: {results.get('dataset_title')}, "
             f"norm={results.get('norm')}, seed={results.get('seed')}")
    out = Path(path) if path is not None else run_dir / REPORT_FILE
    out.write_text(render_page(title, sections), encoding='utf-8')
    return out


def _read_csv(path: Path, open_text) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with open_text(path, encoding='utf-8') as f:
        return list(csv.DictReader(f))


def _results(results: dict) -> str:
    metric = results['metric']
    protocol = (results['test_protocol'] or 'test split not scored'
                if 'test_protocol' in results else
                'protocol not recorded: a run older than results.json\'s '
                'test_protocol, scored at every validation')
    facts = [
        ('dataset', results.get('dataset_title')),
        ('task', results.get('task')),
        ('targets', ', '.join(results.get('targets') or [])),
        (f'best validation {metric}',
         f"{number(results.get('best_val_metric'))} at epoch "
         f"{results.get('best_epoch')} (step {results.get('best_step')})"),
        *_forest_facts(results),
        (f'test {metric}', f"{number(results.get('test_metric_at_best_val'))}"
                           f" ({protocol})"),
        ('epochs, steps', f"{results.get('epochs_completed')}, "
                          f"{results.get('steps')}"),
        ('split sizes', ', '.join(f'{k} {v:,}' for k, v in
                                  (results.get('split_sizes') or {}).items())),
        ('parameters', f"{results.get('num_parameters', 0):,}"),
        ('wall time', f"{results.get('wall_time_s', 0) / 60:.1f} min on "
                      f"{(results.get('hardware') or {}).get('device_name')}"),
        ('started from', results.get('init_from') or 'random weights')]
    items = ''.join(f'<dt>{esc(k)}</dt><dd>{esc(v)}</dd>' for k, v in facts)
    return f'<dl class="facts">{items}</dl>'


def _forest_facts(results: dict) -> list[tuple[str, str]]:
    r"""The blended forest of :obj:`model.forest_trees`, if the run has
    one: its trees, the network's share, and the validation metric of
    each part and of the blend (the best validation above is the
    blend's)."""
    forest = results.get('forest')
    if not forest:
        return []
    metric = results['metric']
    return [('blended forest',
             f"{forest['trees_per_target']} trees per target, the network's "
             f"share {forest['weight']:.2f} (chosen on validation); "
             f"validation {metric}: network "
             f"{number(forest['val_metric_network'])}, forest "
             f"{number(forest['val_metric_forest'])}, blend "
             f"{number(forest['val_metric_blend'])}; "
             f"{forest['cpu_time_s'] / 60:.1f} CPU min")]


def _curves(history: list[dict[str, str]], metric: str) -> str:
    epochs = [float(row['epoch']) for row in history]
    plots = [lines_svg(epochs, {'train loss': [_float(r.get('train_loss'))
                                               for r in history]},
                       'epoch', 'train loss')]
    series = {f'{split} {metric}': [_float(r.get(f'{split}_{metric}'))
                                    for r in history]
              for split in ('val', 'test')}
    plots.append(lines_svg(epochs, series, 'epoch', metric))
    return f'<div class="plots">{"".join(p for p in plots if p)}</div>'


def _pairs(rows: list[dict[str, str]]) -> tuple[str, str, str]:
    r"""The first target's label and prediction columns, and its name."""
    if 'prediction' in rows[0]:
        return 'target', 'prediction', 'target'
    first = next(k for k in rows[0] if k.endswith('_prediction'))
    name = first[:-len('_prediction')]
    return name, first, name


def _test_plot(rows: list[dict[str, str]], results: dict) -> str:
    label, predicted, name = _pairs(rows)
    y = [_float(r[label]) for r in rows]
    p = [_float(r[predicted]) for r in rows]
    plot = (roc_svg(y, p, name) if results.get('task') == 'binary' else
            parity_svg(y, p, name, name))
    return plot or '<p class="note">No labelled test molecule.</p>'


def _worst(rows: list[dict[str, str]], results: dict, run_dir: Path,
           worst: int, steps: int) -> str:
    label, predicted, name = _pairs(rows)
    scored = [(abs(_float(r[predicted]) - _float(r[label])), k)
              for k, r in enumerate(rows)
              if math.isfinite(_float(r[label]) - _float(r[predicted]))]
    chosen = [rows[k] for _, k in sorted(scored, reverse=True)[:worst]]
    smiles_key = next((k for k in rows[0] if k.lower() == 'smiles'), None)
    note = ''
    if smiles_key is None:
        smiles_key, note = add_test_smiles(rows, label, run_dir)
    contributions = [None] * len(chosen)
    model = run_dir / (results.get('model_file') or 'model.safetensors')
    if smiles_key is not None and steps and model.is_file():
        from ..predict import Predictor
        predictor = Predictor.from_checkpoint(model)
        molecules, found = report_molecules(chosen, smiles_key, run_dir,
                                            predictor.feature_columns)
        note += found
        if molecules is not None:
            contributions = atom_contributions(predictor, molecules,
                                               steps=steps)
            method = describe_method(predictor, steps, contributions)
            note += (f'<p class="note">Atom shading: {esc(method)}; red '
                     f'raises the prediction, blue lowers it.</p>')
    ids = [k for k in rows[0] if k not in (smiles_key, label, predicted)
           and not k.endswith('_prediction')
           and k not in (results.get('targets') or [])]
    header = ([Column(k, 'text', 'text') for k in ids] +
              ([Column('structure', None, 'mol'),
                Column('SMILES', 'text', 'smiles')] if smiles_key else []) +
              [Column(f'measured {name}'), Column(f'predicted {name}'),
               Column('error', title='predicted minus measured')])
    table = []
    for row, atoms in zip(chosen, contributions):
        y, p = _float(row[label]), _float(row[predicted])
        cells = [esc(row[k]) for k in ids]
        values: list[Optional[str]] = [None] * len(ids)
        if smiles_key:
            cells += [drawing_html(row[smiles_key],
                                   atoms.values if atoms else None),
                      esc(row[smiles_key])]
            values += [None, None]
        cells += [number(y), number(p), number(p - y)]
        values += [repr(y), repr(p), repr(p - y)]
        table.append(Row(cells, values))
    return note + molecule_table(header, table)


def _float(text: Optional[str]) -> float:
    try:
        return float(text) if text not in (None, '') else math.nan
    except ValueError:
        return math.nan
