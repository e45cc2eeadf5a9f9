r"""Reading a training CSV of SMILES and targets, with every problem a user
can fix in the file or the configuration reported as one
:class:`CSVDataError` that names the file, the line, the column, the value
and the fix.

Every column needs its own name: a header that names one twice
(``smiles,y,y``) is refused, where pandas would quietly rename the second.

Rows are numbered by their **line** in the file (the header is line 1, the
first data row line 2), as an editor shows them. Blank lines are kept while
reading so that the numbering stays exact, and dropped afterwards; a row
after a quoted cell that spans several lines is numbered by the line it
starts on.

A target cell is a number, or empty for a missing label (also accepted as
missing: ``nan``, ``NA``, ``N/A``, ``null``, ``none``, in any case).
"""
from __future__ import annotations

import csv
import difflib
from pathlib import Path
from typing import Mapping, Sequence, Union

import numpy as np

from .errors import DataError
from .text_files import open_text

__all__ = ['CSVDataError', 'MISSING_VALUES', 'SPLIT_NAMES', 'read_header',
           'check_columns', 'read_table', 'parse_targets',
           'parse_split_column']

PathLike = Union[str, Path]

#: Cell values (lower case, stripped) read as a missing label.
MISSING_VALUES = frozenset({'', 'nan', 'na', 'n/a', 'null', 'none'})

#: The split names of a split column, and the spellings accepted for each.
SPLIT_NAMES = ('train', 'valid', 'test')
_SPLIT_SPELLINGS = {'train': 0, 'training': 0, 'valid': 1, 'val': 1,
                    'validation': 1, 'test': 2}


class CSVDataError(DataError):
    r"""A training CSV that cannot be used as it is: the message names the
    file, where the problem is and how to fix it."""


def _read_csv(path: Path, **kwargs):
    import pandas as pd
    if not path.is_file():
        raise CSVDataError(
            f"CSV file {path} does not exist" +
            (" (it is a folder)" if path.is_dir() else "") +
            "; set data.path to a .csv or .csv.gz file with a header row")
    try:
        # Every cell as text: numbers are parsed here, with messages that
        # name the cell (pandas would turn a typo into a silent NaN).
        table = pd.read_csv(path, dtype=str, keep_default_na=False,
                            na_filter=False, skip_blank_lines=False,
                            encoding='utf-8-sig', **kwargs)
    except pd.errors.EmptyDataError:
        raise CSVDataError(f"{path} is empty; it needs a header row and one "
                           f"row per molecule") from None
    except (OSError, EOFError, UnicodeDecodeError, pd.errors.ParserError,
            ValueError) as error:
        message = str(error).splitlines()[0] if str(error) else \
            type(error).__name__
        raise CSVDataError(f"Cannot read {path} as a CSV file with a header "
                           f"row ({message}); check the file (.csv, or "
                           f".csv.gz if gzipped)") from None
    _check_unique_names(path)
    return table


def _check_unique_names(path: Path) -> None:
    r"""Raises :class:`CSVDataError` for a column name the header line holds
    twice: pandas would rename the second ``y`` to ``y.1``, and training
    would silently use one of them. Empty names (a trailing comma) are
    left to pandas, which names them ``Unnamed: <n>``."""
    with open_text(path) as stream:
        header = next(csv.reader(stream), [])
    first: dict[str, int] = {}
    for position, name in enumerate(header, start=1):
        if name and name in first:
            raise CSVDataError(
                f"{path}: the header names column {name!r} twice (columns "
                f"{first[name]} and {position}); rename or remove one, so "
                f"that every column has its own name")
        first.setdefault(name, position)


def read_header(path: PathLike) -> list[str]:
    r"""The column names of a CSV file (only the header is read)."""
    return list(_read_csv(Path(path), nrows=0).columns)


def check_columns(path: PathLike, present: Sequence[str],
                  wanted: Mapping[str, Sequence[str]]) -> None:
    r"""Raises :class:`CSVDataError` for the first column of :obj:`wanted`
    (config key to column names) missing from :obj:`present`, listing the
    columns present and the closest match."""
    for key, names in wanted.items():
        for name in names:
            if name in present:
                continue
            hint = difflib.get_close_matches(name, list(present), n=1,
                                             cutoff=0.5)
            hint = [c for c in present if c.lower() == name.lower()] or hint
            did_you_mean = f" Did you mean {hint[0]!r}?" if hint else ""
            listing = ', '.join(repr(c) for c in present) or 'none'
            raise CSVDataError(
                f"{path} has no column {name!r} (named by {key}); columns "
                f"present: {listing}.{did_you_mean} Fix {key} or the CSV "
                f"header")


def read_table(path: PathLike, columns: Mapping[str, Sequence[str]]):
    r"""Reads a CSV file (``.csv`` or ``.csv.gz``, UTF-8 with or without a
    byte-order mark) as text, checks that the columns of :obj:`columns`
    (config key to column names) exist, and drops blank lines.

    Returns:
        :class:`pandas.DataFrame` of strings whose index is the row's line
        in the file.
    """
    path = Path(path)
    table = _read_csv(path)
    check_columns(path, list(table.columns), columns)
    table.index = _row_lines(path, table)
    blank = (table == '').all(axis=1)
    return table[~blank]


def _row_lines(path: Path, table) -> np.ndarray:
    r"""The line on which each row of :obj:`table` starts in :obj:`path`.
    One row per line unless a quoted cell holds a line break; then the
    file is read again with :mod:`csv`, whose reader counts the lines each
    record spans."""
    lines = np.arange(2, len(table) + 2)
    spans_lines = table.apply(
        lambda column: column.str.contains('[\r\n]', regex=True)).any(
            axis=None)
    if not spans_lines:
        return lines
    with open_text(path) as stream:
        reader = csv.reader(stream)
        next(reader, None)  # The header.
        starts, end = [], reader.line_num
        for _ in reader:
            starts.append(end + 1)
            end = reader.line_num
    # pandas and csv agree on what a record is (blank lines included); if a
    # dialect ever made them disagree, one line per row is the best guess.
    return np.array(starts) if len(starts) == len(table) else lines


def parse_targets(table, path: PathLike, target_columns: Sequence[str],
                  task: str) -> np.ndarray:
    r"""The targets of :obj:`table` as a :obj:`[num_rows, num_targets]`
    float64 array, :obj:`NaN` where a label is missing.

    Args:
        table (pandas.DataFrame): From :func:`read_table`.
        path (str or Path): The file, for messages.
        target_columns (list of str): The target columns, in order.
        task (str): :obj:`"regression"` or :obj:`"binary"` (labels must be
            0 or 1).

    Raises:
        CSVDataError: A value that is not a number (its line and text), an
            infinite value, a column without any value, or a binary label
            other than 0 and 1.
    """
    import pandas as pd
    targets = np.empty((len(table), len(target_columns)), dtype=np.float64)
    for k, column in enumerate(target_columns):
        text = table[column].str.strip()
        missing = text.str.lower().isin(MISSING_VALUES)
        values = pd.to_numeric(text.where(~missing), errors='coerce')
        _check_cells(table, path, column, values.isna() & ~missing,
                     "is not a number; write a number, or leave the cell "
                     "empty for a missing label")
        _check_cells(table, path, column, ~np.isfinite(values) & ~missing,
                     "is not a finite number; write a finite value, or leave "
                     "the cell empty for a missing label")
        if missing.all():
            raise CSVDataError(
                f"{path}: target column {column!r} has no value in any of "
                f"its {len(table)} rows; fill it, or remove it from "
                f"data.target_columns")
        if task == 'binary':
            _check_cells(table, path, column,
                         ~missing & ~values.isin((0.0, 1.0)),
                         "is not 0 or 1; data.task=binary needs 0/1 labels "
                         "(empty for missing). Use data.task=regression for "
                         "a continuous target")
        targets[:, k] = values.to_numpy(dtype=np.float64)
    return targets


def parse_split_column(table, path: PathLike, column: str) -> np.ndarray:
    r"""The split of every row of :obj:`table` from its column
    :obj:`column`: :obj:`0` (``train``), :obj:`1` (``valid``, also ``val``
    or ``validation``) or :obj:`2` (``test``), case-insensitive.

    Raises:
        CSVDataError: A value that is none of them (its line and text).
    """
    ids = table[column].str.strip().str.lower().map(_SPLIT_SPELLINGS)
    _check_cells(table, path, column, ids.isna(), "is not train, valid or "
                 "test (data.split_column); write one of them in every row")
    return ids.to_numpy(dtype=np.int64)


def _check_cells(table, path: PathLike, column: str, bad,
                 problem: str) -> None:
    r"""Raises :class:`CSVDataError` naming the line and value of the first
    cell of :obj:`column` flagged in the boolean series :obj:`bad`."""
    if bad.any():
        line = bad.idxmax()
        raise CSVDataError(f"{path} line {line}, column {column!r}: "
                           f"{table.at[line, column]!r} {problem}")
