r"""The rule that chooses the bundled backbone (``bundled:pretrained-sepnorm``)
among the SepNorm backbones the committed runs were fine-tuned from, and its
table in ``benchmarks/README.md``.

A backbone is judged by what it is for: fine-tuning. A row of best from
SMILES (:mod:`~benchmarks.analysis.from_smiles`) fine-tuned from a backbone
pretrained for another number of steps than the bundled one
(:data:`~benchmarks.analysis.methods.OTHER_BACKBONE`) and the row of the
same set fine-tuned from the bundled backbone with the same molecule
features make a like-for-like pair: they differ in the backbone (and in the
epochs where a set's longer-backbone trial kept to a smaller budget; the
table shows both). The rule reads each pair's SepNorm mean best-validation
metric over seeds (the bundled backbone is SepNorm's; test plays no part),
and the other backbone replaces the bundled one when it is better in
**more than half** of its pairs; a tie keeps the bundled one. The table
shows test afterwards, as the other tables do.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Optional, Sequence

from .formatting import metric_title, metric_units
from .from_smiles.rows import SetResult
from .methods import OTHER_BACKBONE, bundled_backbone_steps

#: The norm of the bundled backbone, whose runs the rule reads.
NORM = 'sep'


@dataclass
class BackbonePair:
    r"""One like-for-like pair: a set's SepNorm runs fine-tuned from the
    bundled backbone and from one of :attr:`steps` steps, with the same
    :attr:`features` (molecule features, in their order)."""
    set: SetResult
    features: list[str]
    steps: int
    bundled: list[dict]
    other: list[dict]

    @staticmethod
    def _mean(runs: Sequence[dict], key: str) -> float:
        return statistics.fmean(r[key] for r in runs)

    @property
    def bundled_validation(self) -> float:
        return self._mean(self.bundled, 'best_val_metric')

    @property
    def other_validation(self) -> float:
        return self._mean(self.other, 'best_val_metric')

    @property
    def other_is_better(self) -> bool:
        r"""Whether the other backbone's mean validation beats the bundled
        one's (higher ROC-AUC, lower error)."""
        difference = self.other_validation - self.bundled_validation
        return (difference > 0 if self.set.higher_is_better
                else difference < 0)


def backbone_pairs(sets: Sequence[SetResult]) -> list[BackbonePair]:
    r"""Every like-for-like pair of :obj:`sets` (see the module) where both
    sides have SepNorm runs, in the sets' and rows' order."""
    pairs = []
    for s in sets:
        rows = {row.method: row for row in s.rows}
        for row in s.rows:
            base, *features = row.method.split(' + ')
            steps = OTHER_BACKBONE.match(base)
            twin = rows.get(' + '.join(['fine-tuned', *features]))
            if not steps or twin is None:
                continue
            # SepNorm's runs, whichever norm each row shows.
            bundled = twin.runs_by_norm.get(NORM)
            other = row.runs_by_norm.get(NORM)
            if bundled and other:
                pairs.append(BackbonePair(
                    s, features, int(steps.group(1).replace(',', '')),
                    bundled, other))
    return pairs


@dataclass
class BackboneChoice:
    r"""The rule's verdict on the backbone of :attr:`steps` steps."""
    steps: int
    pairs: list[BackbonePair]

    @property
    def wins(self) -> int:
        return sum(p.other_is_better for p in self.pairs)

    @property
    def replaces_bundled(self) -> bool:
        return self.wins > len(self.pairs) / 2


def backbone_choices(sets: Sequence[SetResult]) -> list[BackboneChoice]:
    r"""The rule's verdict on every other backbone with pairs, by steps."""
    by_steps: dict[int, list[BackbonePair]] = {}
    for pair in backbone_pairs(sets):
        by_steps.setdefault(pair.steps, []).append(pair)
    return [BackboneChoice(steps, pairs)
            for steps, pairs in sorted(by_steps.items())]


def chosen_steps(choices: Sequence[BackboneChoice],
                 bundled_steps: int) -> int:
    r"""The pretraining steps of the backbone the rule ships: the other
    backbone that replaces the bundled one with the most wins (fewer steps
    first on a tie), else the bundled one's :obj:`bundled_steps`."""
    replacing = [c for c in choices if c.replaces_bundled]
    if not replacing:
        return bundled_steps
    return max(replacing, key=lambda c: (c.wins, -c.steps)).steps


def _value(pair: BackbonePair, runs: Sequence[dict], key: str) -> str:
    scale, digits = metric_units(pair.set.metric)
    return f'{statistics.fmean(r[key] for r in runs) * scale:.{digits}f}'


def _epochs(runs: Sequence[dict]) -> str:
    epochs = sorted({r['epochs_completed'] for r in runs
                     if r.get('epochs_completed') is not None})
    return ', '.join(map(str, epochs)) or '—'


def backbone_choice_markdown(sets: Sequence[SetResult],
                             bundled_steps: Optional[int] = None) -> str:
    r"""The pairs of every other backbone, then the verdict: which backbone
    the rule ships, and whether the package ships it
    (:obj:`bundled_steps`: the bundled backbone's steps; read from its card
    by default). Empty without pairs."""
    if bundled_steps is None:
        bundled_steps = bundled_backbone_steps()
    choices = backbone_choices(sets)
    if not choices:
        return ''
    lines = [f'| set (metric) | molecule features | backbone | SepNorm '
             f'validation, bundled ({bundled_steps:,} steps) | the other '
             f'backbone | better on validation | test, bundled / other | '
             f'epochs, bundled / other |',
             '| --- | --- | --- | ---: | ---: | --- | ---: | ---: |']
    for choice in choices:
        for p in choice.pairs:
            better = (f'{p.steps:,} steps' if p.other_is_better
                      else f'{bundled_steps:,} steps')
            lines.append(
                f'| {p.set.short} ({metric_title(p.set.metric)}) '
                f'| {", ".join(p.features) or "none"} | {p.steps:,} steps '
                f'| {_value(p, p.bundled, "best_val_metric")} '
                f'| {_value(p, p.other, "best_val_metric")} | {better} '
                f'| {_value(p, p.bundled, "test_metric_at_best_val")} / '
                f'{_value(p, p.other, "test_metric_at_best_val")} '
                f'| {_epochs(p.bundled)} / {_epochs(p.other)} |')
    sentences = []
    for choice in choices:
        verdict = ('more than half: it replaces the bundled backbone'
                   if choice.replaces_bundled else
                   'not more than half: the bundled backbone stays')
        sentences.append(
            f'- The {choice.steps:,}-step backbone is better on validation '
            f'in {choice.wins} of its {len(choice.pairs)} pairs; '
            f'{verdict}.')
    chosen = chosen_steps(choices, bundled_steps)
    shipped = ('the package ships it' if chosen == bundled_steps else
               f'the package still ships the {bundled_steps:,}-step one: '
               f'bundle the chosen one (graphormer_sepnorm/bundled/)')
    sentences.append(f'- `bundled:pretrained-sepnorm`: the rule chooses the '
                     f'{chosen:,}-step SepNorm backbone; {shipped}.')
    return '\n'.join(lines) + '\n\n' + '\n'.join(sentences) + '\n'
