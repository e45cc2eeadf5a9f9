r"""The :obj:`K` best rows of a stream, in memory for :obj:`K` rows only,
and the top-K output file that keeps them across an interruption."""
from __future__ import annotations

import heapq
import math
import time
from pathlib import Path
from typing import Iterable, Iterator, Optional, Sequence

from .prediction import PredictionError
from .run_record import RunRecord, write_record
from .writers import STDOUT, CsvWriter, read_csv_rows, write_csv

__all__ = ['TopK', 'TopKFile', 'ROW_COLUMN', 'ranked_rows', 'check_top']

#: Column of top-K files holding the input row number (1-based; for SDF the
#: record number), which also breaks ties: the earlier row ranks first.
ROW_COLUMN = 'row'

# A top-K file is rewritten after a chunk (for resume) unless rewriting it
# would take more than this share of the time: after every chunk for small
# K, less often for very large K.
_SAVE_SHARE = 0.05


def check_top(columns: Sequence[str], top: Optional[int], by: Optional[str],
              ascending: bool) -> Optional[tuple[TopK, int]]:
    r"""The :class:`TopK` collector of :obj:`top` rows ranked by the
    prediction column :obj:`by` and its position among the model's
    prediction :obj:`columns`, or :obj:`None` without :obj:`top`.

    Raises:
        PredictionError: If one of :obj:`top` and :obj:`by` is missing or
            :obj:`by` is not one of :obj:`columns`.
    """
    named = ', '.join(columns)
    if top is None:
        if by is not None:
            raise PredictionError(f"--by {by} ranks the molecules of --top; "
                                  f"add --top K")
        return None
    if by is None:
        raise PredictionError(f"--top needs --by COLUMN, the prediction "
                              f"column to rank by (this model: {named})")
    if by not in columns:
        raise PredictionError(f"--by {by!r} is not a prediction column of "
                              f"this model; choose one of: {named}")
    return TopK(top, ascending), list(columns).index(by)


class TopK:
    r"""Keeps the :obj:`k` rows with the best score seen so far.

    Ranked by score, highest first (lowest first if :obj:`ascending`); among
    equal scores the earlier input row ranks first, so the result does not
    depend on the order in which rows arrive. A row whose number is already
    kept is ignored (a resumed run sees again the rows of its last chunk).

    Args:
        k (int): How many rows to keep.
        ascending (bool, optional): Lower scores are better.
            (default: :obj:`False`)
    """
    def __init__(self, k: int, ascending: bool = False) -> None:
        if not isinstance(k, int) or k < 1:
            raise PredictionError(f"--top must be a positive number of "
                                  f"molecules, got {k!r}")
        self.k = k
        self.ascending = ascending
        # Min-heap on the rank key: the worst kept row is at the top.
        self._heap: list[tuple[tuple[float, int], list[str]]] = []
        self._rows: set[int] = set()

    def _key(self, score: float, row: int) -> tuple[float, int]:
        return (-score if self.ascending else score), -row

    def push(self, row: int, score: Optional[float],
             fields: Sequence[str]) -> None:
        r"""Offers input row :obj:`row` (1-based) with its :obj:`score`
        (rows without a finite score are never kept) and its output
        :obj:`fields`."""
        if score is None or math.isnan(score) or row in self._rows:
            return
        entry = (self._key(score, row), list(fields))
        if len(self._heap) < self.k:
            heapq.heappush(self._heap, entry)
        elif entry[0] > self._heap[0][0]:
            dropped = heapq.heapreplace(self._heap, entry)
            self._rows.discard(-dropped[0][1])
        else:
            return
        self._rows.add(row)

    def extend(self, rows: Iterable[tuple[int, float, Sequence[str]]]
               ) -> None:
        r"""Pushes every :obj:`(row, score, fields)` of :obj:`rows`."""
        for row, score, fields in rows:
            self.push(row, score, fields)

    def best(self) -> list[list[str]]:
        r"""The kept rows' fields, best first."""
        return [fields for _, fields in sorted(self._heap, reverse=True)]

    def __len__(self) -> int:
        return len(self._heap)


def ranked_rows(rows: Iterable[list[str]], columns: Sequence[str],
                by: str) -> Iterator[tuple[int, float, list[str]]]:
    r"""The data rows of a top-K file (header :obj:`columns`, row number
    first) as :obj:`(row, score, fields)` for :meth:`TopK.extend`, ranked
    by column :obj:`by`."""
    position = list(columns).index(by)
    for fields in rows:
        yield int(fields[0]), float(fields[position]), fields


class TopKFile:
    r"""The output file of a top-K run: the rows of :obj:`rows`, best first,
    under the header :obj:`record.columns`, rewritten with its record as
    the run goes so that an interrupted run can be resumed.

    Args:
        rows (TopK): The collector.
        output (str): The file, or :obj:`"-"` for standard output (written
            once, when the run is complete).
        record (RunRecord): The run's record; its :obj:`rows_done` says
            how many input rows a saved file covers.
    """
    def __init__(self, rows: TopK, output: str, record: RunRecord) -> None:
        self.rows = rows
        self.output = output
        self.record = record
        self.saved_at = time.monotonic()
        self.save_seconds = 0.0  # How long the last save took.

    def save_if_due(self) -> None:
        r""":meth:`save`, unless saving takes more than a small share of
        the time since the last save."""
        if time.monotonic() - self.saved_at >= \
                self.save_seconds / _SAVE_SHARE:
            self.save()

    def save(self) -> None:
        r"""Rewrites the top-K file, then the record saying how many rows it
        covers (a kill between the two only repeats work: rows seen again
        are not counted twice, see :class:`TopK`)."""
        if self.output == STDOUT:
            if self.record.complete:
                CsvWriter(STDOUT, self.record.columns).write_rows(
                    self.rows.best())
            return
        started = time.monotonic()
        write_csv(self.output, [self.record.columns] + self.rows.best())
        write_record(self.output, self.record)
        self.saved_at = time.monotonic()
        self.save_seconds = self.saved_at - started

    def load(self) -> int:
        r"""Loads the rows of an interrupted top-K file; returns the rows
        of this run it covers."""
        if not Path(self.output).exists():
            return self.record.rows_done
        rows = read_csv_rows(self.output)
        header = next(rows, None)
        if header != self.record.columns:
            raise PredictionError(f"Cannot resume {self.output}: its columns "
                                  f"are not those of this run; start a new "
                                  f"output (drop --resume)")
        self.rows.extend(ranked_rows(rows, header,
                                     self.record.options['by']))
        return self.record.rows_done
