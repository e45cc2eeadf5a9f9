r"""Issue 45's same budget measured side by side
(``benchmarks/same_budget.py``): per set and seed, a :class:`Pair` of
replays, our row that best from SMILES reads and chemprop's default, run
together on one machine, one thread each; per set, the ratio of their
median CPU minutes (:class:`SideBySide`), which
:func:`~benchmarks.analysis.from_smiles.budget_counts` reads instead of
the committed runs' cross-session ratio where the pairs replay the row it
reads today."""
from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional, Sequence

#: Where ``benchmarks/same_budget.py`` writes its pairs, in git.
BUDGET_ROOT = 'benchmarks/results/budget'
#: A replay reproduced its committed run when both metrics agree this
#: closely (float32 metrics, written to JSON and read back).
REPRODUCED = 1e-6


@dataclass
class Pair:
    r"""One seed of one set: each row's replay, measured side by side.

    :obj:`ours` and :obj:`reference` each hold the row's label
    (:obj:`method`), the committed run replayed, the replay's CPU seconds
    (:obj:`cpu_s`, its whole process's) and wall seconds, and its best
    validation and test metrics beside the committed run's."""
    set: str
    seed: int
    processor: str
    threads: int
    commit: str
    date: str
    ours: dict
    reference: dict

    @property
    def ratio(self) -> float:
        return self.ours['cpu_s'] / self.reference['cpu_s']

    def reproduced(self, side: str) -> bool:
        r"""Whether :obj:`side`'s (``'ours'`` or ``'reference'``) replay
        reached its committed run's best validation and test metrics."""
        row = getattr(self, side)
        return all(abs(row[k] - row[f'committed_{k}']) <= REPRODUCED
                   for k in ('best_val_metric', 'test_metric'))

    def to_json(self) -> dict:
        return asdict(self)


def load_pairs(root: str | Path = BUDGET_ROOT) -> list[Pair]:
    r"""Every pair below :obj:`root` (none where it is missing), by set
    and seed."""
    root = Path(root)
    if not root.is_dir():
        return []
    pairs = [Pair(**json.loads(path.read_text()))
             for path in sorted(root.glob('*.json'))]
    return sorted(pairs, key=lambda p: (p.set, p.seed))


@dataclass
class SideBySide:
    r"""One set's pairs of one row against chemprop's default."""
    set: str
    method: str
    reference: str
    pairs: list[Pair]

    @property
    def seeds(self) -> list[int]:
        return [p.seed for p in self.pairs]

    def minutes(self, side: str) -> float:
        r"""The median CPU minutes of :obj:`side`'s replays."""
        return statistics.median(getattr(p, side)['cpu_s'] / 60
                                 for p in self.pairs)

    @property
    def ratio(self) -> float:
        r"""Our median CPU minutes over chemprop's: issue 45's same budget
        where at most 1."""
        return self.minutes('ours') / self.minutes('reference')

    @property
    def processors(self) -> list[str]:
        return sorted({p.processor for p in self.pairs})

    def reproduced(self, side: str) -> int:
        r"""How many of :obj:`side`'s replays reproduced their committed
        runs (:meth:`Pair.reproduced`)."""
        return sum(p.reproduced(side) for p in self.pairs)


def side_by_side(pairs: Sequence[Pair],
                 rows: Optional[dict[str, tuple[str, str]]] = None
                 ) -> dict[str, SideBySide]:
    r"""The pairs of each set, grouped. With :obj:`rows` (set -> labels of
    our row the goal reads today and of chemprop's default), only the pairs
    of those rows: pairs of a row the goal no longer reads measure another
    recipe, and are left out."""
    grouped: dict[tuple, list[Pair]] = {}
    for pair in pairs:
        labels = (pair.ours['method'], pair.reference['method'])
        if rows is not None and rows.get(pair.set) != labels:
            continue
        grouped.setdefault((pair.set, *labels), []).append(pair)
    result = {}
    for (set_key, method, reference), group in grouped.items():
        if set_key in result:
            raise ValueError(f"{set_key}: pairs of two rows ({method} and "
                             f"{result[set_key].method}); pass the rows the "
                             f"goal reads")
        result[set_key] = SideBySide(set_key, method, reference, group)
    return result


def budget_lines(pairs: Sequence[Pair]) -> list[str]:
    r"""Per set, one line: the row, its seeds, the median CPU minutes of
    each side and the ratio, and how many replays reproduced their
    committed runs."""
    lines = []
    for s in side_by_side(pairs).values():
        lines.append(
            f"{s.set}: {s.method} {s.minutes('ours'):.1f} CPU min against "
            f"{s.reference} {s.minutes('reference'):.1f} (medians of seeds "
            f"{', '.join(map(str, s.seeds))}, side by side on "
            f"{', '.join(s.processors)}): {s.ratio:.2f}x; replays that "
            f"reproduced their committed runs: ours {s.reproduced('ours')} "
            f"of {len(s.pairs)}, chemprop {s.reproduced('reference')} of "
            f"{len(s.pairs)}")
    return lines


def budget_markdown(measured: dict[str, SideBySide],
                    titles: dict[str, str]) -> str:
    r"""The table of the side-by-side measurements: per set (titled by
    :obj:`titles`), the row, seeds, each side's median CPU minutes, the
    ratio, and whether each side's replays reproduced their committed
    runs' validation and test metrics."""
    if not measured:
        return ('No set measured side by side yet '
                '(`benchmarks/same_budget.py`).\n')
    lines = ['| set | our row | seeds | ours, CPU min | chemprop default, '
             'CPU min | ratio | processor | replays reproduced (ours, '
             'chemprop) |',
             '| --- | --- | --- | ---: | ---: | ---: | --- | --- |']
    for key, s in measured.items():
        n = len(s.pairs)
        lines.append(
            f"| {titles.get(key, key)} | {s.method} | "
            f"{', '.join(map(str, s.seeds))} | {s.minutes('ours'):.1f} | "
            f"{s.minutes('reference'):.1f} | {s.ratio:.2f}× | "
            f"{', '.join(s.processors)} | {s.reproduced('ours')} of {n}, "
            f"{s.reproduced('reference')} of {n} |")
    return '\n'.join(lines) + '\n'
