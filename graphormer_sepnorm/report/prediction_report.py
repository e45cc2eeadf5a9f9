r"""The report of a prediction run (:func:`write_prediction_report`): the
distribution of all predictions, and a table of the top :obj:`K`, a random
sample and the first molecules that failed, each drawn with its atoms
shaded by their contribution (:mod:`.contributions`). However large the
input, only these rows are drawn, so the file stays small (about 10 kB a
molecule); the page says how many of how many it shows."""
from __future__ import annotations

import heapq
import math
import random
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Optional, Sequence, Union

from ..predict.molecules import WithColumns
from .contributions import atom_contributions, describe_method
from .drawing import NEGATIVE, POSITIVE, drawing_html
from .page import Column, Row, esc, molecule_table, number, render_page
from .svg_plots import histogram_svg, parity_svg, roc_svg

__all__ = ['ReportMolecule', 'ReportOptions', 'write_prediction_report',
           'molecules_from_csv']


@dataclass
class ReportMolecule:
    r"""One predicted molecule as the report reads it.

    Attributes:
        row (int): Its input row number (1-based).
        smiles (str): Its SMILES as given.
        values (list of float or None): One per prediction column
            (:obj:`None` on error).
        stds (list of float or None): An ensemble's spread per column,
            empty for a single model.
        error (str, optional): Why it was not predicted.
        target (float, optional): Its measured value, for a labelled input.
        features (list of str, optional): Its values of the feature
            columns the model reads, in the model's order (a model trained
            with :obj:`data.feature_columns`; its atom contributions need
            them).
    """
    row: int
    smiles: str
    values: list[Optional[float]]
    stds: list[Optional[float]] = field(default_factory=list)
    error: Optional[str] = None
    target: Optional[float] = None
    features: Optional[list[str]] = None


@dataclass
class ReportOptions:
    r"""What a prediction report shows.

    Attributes:
        top (int): The best molecules shown, ranked by :obj:`by`.
            (default: :obj:`50`)
        sample (int): Molecules drawn at random (seeded) from the rest.
            (default: :obj:`100`)
        failed (int): Failed molecules listed at most (the first ones).
            (default: :obj:`50`)
        by (int): The prediction column that ranks (its position).
            (default: :obj:`0`)
        ascending (bool): Lower values are better. (default: :obj:`False`)
        steps (int): Integration steps the contributions start with,
            doubled for a molecule whose contributions miss its prediction
            (see :func:`~.contributions.atom_contributions`); :obj:`0`:
            none.
            (default: :obj:`8`)
        seed (int): Seed of the random sample. (default: :obj:`0`)
        target_name (str, optional): The input column of measured values.
        title (str): The page's title.
        source (str): Where the molecules and the model came from, said
            under the title.
    """
    top: int = 50
    sample: int = 100
    failed: int = 50
    by: int = 0
    ascending: bool = False
    steps: int = 8
    seed: int = 0
    target_name: Optional[str] = None
    title: str = 'Predictions'
    source: str = ''


class _Selection:
    r"""One pass over the molecules: every ranked value (for the
    histogram) and measured value, the top K (a heap), a uniform random
    sample of the predicted molecules (a reservoir) and the first
    failures."""
    def __init__(self, options: ReportOptions) -> None:
        self.options = options
        self.values = array('d')
        self.targets = array('d')
        self.total = self.failures = 0
        self.top: list[tuple[float, int, ReportMolecule]] = []
        self.sample: list[ReportMolecule] = []
        self.failed: list[ReportMolecule] = []
        self._random = random.Random(options.seed)

    def add(self, molecule: ReportMolecule) -> None:
        options = self.options
        self.total += 1
        value = (molecule.values[options.by] if molecule.values else None)
        if molecule.error is not None or value is None:
            self.failures += 1
            if len(self.failed) < options.failed:
                self.failed.append(molecule)
            return
        self.values.append(value)
        self.targets.append(math.nan if molecule.target is None
                            else molecule.target)
        score = -value if options.ascending else value
        # Ties: the earlier row ranks first (the heap keeps the largest).
        entry = (score, -molecule.row, molecule)
        if len(self.top) < options.top:
            heapq.heappush(self.top, entry)
        elif options.top and entry[:2] > self.top[0][:2]:
            heapq.heapreplace(self.top, entry)
        # Reservoir sampling: a uniform sample of every predicted molecule.
        seen = len(self.values)
        if len(self.sample) < options.sample:
            self.sample.append(molecule)
        else:
            k = self._random.randrange(seen)
            if k < options.sample:
                self.sample[k] = molecule

    def ranked_top(self) -> list[ReportMolecule]:
        r"""The top molecules, best first."""
        return [m for _, _, m in sorted(self.top, key=lambda e: e[:2],
                                        reverse=True)]


def write_prediction_report(path: Union[str, Path],
                            molecules: Iterable[ReportMolecule],
                            columns: Sequence[str], predictor=None,
                            options: Optional[ReportOptions] = None,
                            task: str = 'regression') -> int:
    r"""Writes the report of :obj:`molecules` to :obj:`path` (one pass,
    in memory only the shown rows and one float or two per molecule);
    returns the number of molecules read.

    Args:
        path (str or Path): The HTML file.
        molecules (iterable of ReportMolecule): The predictions, in input
            order (e.g. :func:`molecules_from_csv`).
        columns (list of str): The prediction columns' names.
        predictor (PredictorBase, optional): The model that predicted them,
            for the atom contributions (none without it).
            (default: :obj:`None`)
        options (ReportOptions, optional): What to show.
        task (str, optional): :obj:`"regression"` or :obj:`"binary"` (the
            values are probabilities). (default: :obj:`"regression"`)
    """
    options = options or ReportOptions()
    selection = _Selection(options)
    for molecule in molecules:
        selection.add(molecule)
    shown = _shown_rows(selection)
    steps = options.steps if predictor is not None else 0
    contributions = (atom_contributions(
        predictor, [m.smiles if m.features is None
                    else WithColumns(m.smiles, m.features)
                    for m, _ in shown], steps=steps)
        if steps and shown else [None] * len(shown))
    method = (describe_method(predictor, steps, contributions) if steps
              else '')
    columns_read = predictor.feature_columns if steps else []
    if columns_read and any(m.features is None for m, _ in shown):
        method += (f'. Molecules without their values of the feature '
                   f'column(s) {", ".join(columns_read)} that the model reads '
                   f'are drawn unshaded')
    ranked = columns[options.by] if columns else 'prediction'
    sections = [('Distribution', _plots(selection, ranked, options, task)),
                ('Molecules', _table(shown, contributions, columns,
                                     options))]
    page = render_page(options.title, sections,
                       _intro(selection, columns, options, task, method))
    Path(path).write_text(page, encoding='utf-8')
    return selection.total


def _shown_rows(selection: _Selection
                ) -> list[tuple[ReportMolecule, list[str]]]:
    r"""Each shown molecule once, with its groups: the top (best first),
    then the sample, then the failures."""
    order: dict[int, tuple[ReportMolecule, list[str]]] = {}
    for rank, molecule in enumerate(selection.ranked_top(), 1):
        order[molecule.row] = (molecule, ['top', f'top{rank}'])
    for molecule in sorted(selection.sample, key=lambda m: m.row):
        order.setdefault(molecule.row, (molecule, []))[1].append('sample')
    for molecule in selection.failed:
        order[molecule.row] = (molecule, ['failed'])
    return list(order.values())


def _intro(selection: _Selection, columns: Sequence[str],
           options: ReportOptions, task: str, method: str) -> str:
    predicted = selection.total - selection.failures
    ranked = columns[options.by] if columns else 'prediction'
    meaning = ('the probability of the positive class' if task == 'binary'
               else 'in the units of the training targets')
    lines = [f'{esc(options.source)}' if options.source else '',
             f'{selection.total:,} molecules: {predicted:,} predicted, '
             f'{selection.failures:,} failed. Predictions are {meaning}.',
             f'Shown: the top {len(selection.top):,} by {esc(ranked)} '
             f'({"lowest" if options.ascending else "highest"} first), a '
             f'random sample of {len(selection.sample):,} of the '
             f'{predicted:,} predicted molecules (seed {options.seed}) and '
             f'{"the first " if selection.failures > len(selection.failed) else ""}'
             f'{len(selection.failed):,} of the {selection.failures:,} that '
             f'failed. The distribution covers every predicted molecule; '
             f'the table holds only the rows shown, so that the file stays '
             f'small however large the input.']
    if method:
        lines.append(
            f'Atom shading: {esc(method)}. '
            f'<span class="legend"><span style="background:{_css(POSITIVE)}">'
            f'</span>raises the prediction<span style="background:'
            f'{_css(NEGATIVE)}"></span>lowers it</span>')
    return ''.join(f'<p class="note">{line}</p>' for line in lines if line)


def _css(color: tuple[float, float, float]) -> str:
    return 'rgb({},{},{})'.format(*(round(255 * c) for c in color))


def _plots(selection: _Selection, label: str, options: ReportOptions,
           task: str) -> str:
    plots = [histogram_svg(selection.values, label)]
    facts = ''
    if options.target_name is not None:
        measured = list(selection.targets)
        if task == 'binary':
            plots.append(roc_svg(measured, selection.values, label))
        else:
            plots.append(parity_svg(measured, selection.values,
                                    options.target_name, label))
            pairs = [(t, v) for t, v in zip(measured, selection.values)
                     if math.isfinite(t)]
            if pairs:
                errors = [v - t for t, v in pairs]
                facts = (f'<p class="note">Against {esc(options.target_name)}'
                         f' ({len(pairs):,} labelled molecules): MAE '
                         f'{number(sum(map(abs, errors)) / len(errors))}, '
                         f'RMSE {number(math.sqrt(sum(e * e for e in errors) / len(errors)))}.</p>')
    drawn = [plot for plot in plots if plot is not None]
    if not drawn:
        return '<p class="note">No molecule was predicted.</p>'
    return f'<div class="plots">{"".join(drawn)}</div>{facts}'


def _table(shown: list[tuple[ReportMolecule, list[str]]],
           contributions: list, columns: Sequence[str],
           options: ReportOptions) -> str:
    with_std = any(m.stds for m, _ in shown)
    header = [Column('shown as', 'text', 'text'), Column('row'),
              Column('structure', None, 'mol'),
              Column('SMILES', 'text', 'smiles')]
    for name in columns:
        header.append(Column(name))
        if with_std:
            header.append(Column(f'{name} std', title='spread of the '
                                 'ensemble members (population std)'))
    if options.target_name is not None:
        header += [Column(f'measured {options.target_name}'),
                   Column('error', title=f'{columns[options.by]} minus '
                          f'measured')]
    header.append(Column('message', 'text', 'err'))
    rows = []
    for (molecule, groups), atoms in zip(shown, contributions):
        label = ', '.join(f'top #{g[3:]}' if g.startswith('top') else g
                          for g in groups if g != 'top')
        cells = [esc(label), str(molecule.row),
                 drawing_html(molecule.smiles,
                              atoms.values if atoms else None),
                 esc(molecule.smiles)]
        values: list[Optional[str]] = [None, str(molecule.row), None, None]
        for k in range(len(columns)):
            value = molecule.values[k] if molecule.values else None
            cells.append(number(value))
            values.append(_key(value))
            if with_std:
                std = molecule.stds[k] if molecule.stds else None
                cells.append(number(std))
                values.append(_key(std))
        if options.target_name is not None:
            value = molecule.values[options.by] if molecule.values else None
            error = (value - molecule.target if value is not None
                     and molecule.target is not None else None)
            cells += [number(molecule.target), number(error)]
            values += [_key(molecule.target), _key(error)]
        cells.append(esc(molecule.error or ''))
        values.append(None)
        rows.append(Row(cells, values, [g for g in groups
                                        if g in ('top', 'sample', 'failed')]))
    return molecule_table(header, rows, [('top', 'top'),
                                         ('sample', 'random sample'),
                                         ('failed', 'failed')])


def _key(value: Optional[float]) -> Optional[str]:
    return '' if value is None or not math.isfinite(value) else repr(value)


def molecules_from_csv(path: Union[str, Path], smiles_column: str,
                       num_columns: int, with_std: bool = False,
                       top_file: bool = False,
                       target_column: Optional[str] = None,
                       feature_columns: Sequence[str] = ()
                       ) -> Iterator[ReportMolecule]:
    r"""The molecules of a prediction file written by
    :func:`~graphormer_sepnorm.predict.predict_file`: the input's columns,
    then the :obj:`num_columns` prediction columns (each followed by its
    std if :obj:`with_std`) and the error column; a :obj:`top_file` starts
    with the input row number and has no error column. Each molecule
    carries its values of the input's :obj:`feature_columns` (those a
    model trained with :obj:`data.feature_columns` reads; none if the file
    lacks one of them).

    Raises:
        PredictionError: If the file cannot be read or lacks a column.
    """
    from ..predict.prediction import PredictionError
    from ..predict.writers import read_csv_rows

    rows = read_csv_rows(path)
    header = next(rows, None)
    width = num_columns * (2 if with_std else 1)
    trailing = width + (0 if top_file else 1)
    if header is None or len(header) < trailing + 1:
        raise PredictionError(f'{path} is not a prediction file of this '
                              f'model: it has too few columns')
    inputs = header[1 if top_file else 0:len(header) - trailing]
    for name, what in ((smiles_column, 'SMILES'),
                       (target_column, 'measured values')):
        if name is not None and name not in inputs:
            raise PredictionError(
                f'{path} has no column {name!r} for the {what} (its input '
                f'columns: {", ".join(inputs)}); name the column that '
                f'holds them')
    offset = 1 if top_file else 0
    smiles_at = offset + inputs.index(smiles_column)
    target_at = (offset + inputs.index(target_column)
                 if target_column is not None else None)
    features_at = ([offset + inputs.index(name) for name in feature_columns]
                   if feature_columns and all(name in inputs
                                              for name in feature_columns)
                   else None)
    first = len(header) - trailing
    for position, cells in enumerate(rows, 1):
        fields = [_float(c) for c in cells[first:first + width]]
        values = fields[::2] if with_std else fields
        stds = fields[1::2] if with_std else []
        error = None if top_file else (cells[-1] or None)
        target = (_float(cells[target_at]) if target_at is not None
                  else None)
        features = (None if features_at is None
                    else [cells[k] for k in features_at])
        yield ReportMolecule(int(cells[0]) if top_file else position,
                             cells[smiles_at], values, stds, error, target,
                             features)


def _float(text: str) -> Optional[float]:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
