r"""The :obj:`K` best rows of a stream, in memory for :obj:`K` rows only."""
from __future__ import annotations

import heapq
import math
from typing import Iterable, Iterator, Optional, Sequence

from .prediction import PredictionError

__all__ = ['TopK', 'ROW_COLUMN', 'ranked_rows']

#: Column of top-K files holding the input row number (1-based; for SDF the
#: record number), which also breaks ties: the earlier row ranks first.
ROW_COLUMN = 'row'


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
