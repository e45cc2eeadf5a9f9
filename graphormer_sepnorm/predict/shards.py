r"""Shards: one of :obj:`N` jobs, each predicting a deterministic
:obj:`1/N` of an input into its own file.

The input is cut into chunks of :obj:`chunk_size` consecutive rows, and
shard :obj:`K` of :obj:`N` takes chunks :obj:`K-1`, :obj:`K-1+N`,
:obj:`K-1+2N`, ... Every chunk is predicted exactly as in an unsharded run
(same molecules, same batches), so the merged shards are the unsharded
output, byte for byte, and every shard reads the input from the start (a
shard skips other shards' rows without featurizing them).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from .prediction import PredictionError

__all__ = ['Shard']

_FORM = re.compile(r'^\s*(\d+)\s*/\s*(\d+)\s*$')


@dataclass(frozen=True)
class Shard:
    r"""Shard :obj:`index` of :obj:`count` (1-based).

    Args:
        index (int): Which shard, from :obj:`1` to :obj:`count`.
        count (int): How many shards there are.
    """
    index: int
    count: int

    def __post_init__(self) -> None:
        if not (isinstance(self.index, int) and isinstance(self.count, int)
                and 1 <= self.index <= self.count):
            raise PredictionError(
                f"--shard must be K/N with 1 <= K <= N (shard K of N, "
                f"counted from 1), got {self.index}/{self.count}; with SLURM "
                f"use --array=1-N")

    @classmethod
    def parse(cls, text: Union[str, 'Shard', tuple[int, int]]) -> 'Shard':
        r"""A shard from :obj:`"K/N"` (or a :class:`Shard` or :obj:`(K,
        N)`)."""
        if isinstance(text, Shard):
            return text
        if isinstance(text, tuple) and len(text) == 2:
            return cls(*text)
        match = _FORM.match(str(text))
        if match is None:
            raise PredictionError(
                f"--shard must be K/N with whole numbers, 1 <= K <= N (e.g. "
                f"3/8: the third of eight shards), got {text!r}")
        return cls(int(match.group(1)), int(match.group(2)))

    def owns(self, chunk_number: int) -> bool:
        r"""Whether chunk :obj:`chunk_number` (0-based) is this shard's."""
        return chunk_number % self.count == self.index - 1

    def owned_rows(self, total_rows: int, chunk_size: int) -> int:
        r"""How many of :obj:`total_rows` input rows are this shard's."""
        full, rest = divmod(total_rows, chunk_size)
        rows = len(range(self.index - 1, full, self.count)) * chunk_size
        if rest and self.owns(full):
            rows += rest
        return rows

    def __str__(self) -> str:
        return f'{self.index}/{self.count}'
