r"""Statistics of the results: two models' test metrics over seeds compared
by the difference of means, its Welch-Satterthwaite 95% confidence interval
and Welch's two-sided t-test; Graphormer + SepNorm against ShareNorm on the
whole test split, and against other model families (chemprop) on the test
molecules that every run of both predicted."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Optional, Sequence

from .runs import Group


@dataclass
class Comparison:
    r"""Difference of two groups' means (first minus second) with its 95%
    confidence interval and Welch's two-sided t-test."""
    difference: float
    low: float
    high: float
    p_value: float
    dof: float


def welch(a: Sequence[float], b: Sequence[float]) -> Comparison:
    r"""Welch's unequal-variance t-test of :obj:`a` against :obj:`b` and the
    Welch-Satterthwaite 95% confidence interval of ``mean(a) - mean(b)``
    (two or more values each)."""
    from scipy import stats
    if len(a) < 2 or len(b) < 2:
        raise ValueError("Welch's test needs at least two runs per group")
    var_a, var_b = statistics.variance(a) / len(a), statistics.variance(b) / \
        len(b)
    difference = statistics.fmean(a) - statistics.fmean(b)
    se = math.sqrt(var_a + var_b)
    dof = (var_a + var_b)**2 / (var_a**2 / (len(a) - 1) + var_b**2 /
                                (len(b) - 1))
    half = stats.t.ppf(0.975, dof) * se
    p_value = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
    return Comparison(difference, difference - half, difference + half,
                      p_value, dof)


def p_text(p_value: float, named: bool = True) -> str:
    r"""A p-value as written in the results: :obj:`"p = 0.036"`, or
    :obj:`"p < 0.001"` below that (three decimals would read as zero);
    without :obj:`named`, :obj:`"0.036"` or :obj:`"< 0.001"` (table
    cells)."""
    if p_value < 0.001:
        return 'p < 0.001' if named else '< 0.001'
    return f'p = {p_value:.3f}' if named else f'{p_value:.3f}'


@dataclass
class Contrast:
    r"""Two models of one dataset compared on the test metric: SepNorm
    against ShareNorm on each run's whole test split, or a Graphormer with
    SepNorm against another model family on the :obj:`molecules` test
    molecules that every run of both predicted (:obj:`None`: each run's
    reported test metric, when a run kept no per-molecule predictions or
    the two name their molecules differently)."""
    first: Group
    second: Group
    comparison: Comparison
    molecules: Optional[int] = None

    @property
    def first_is_better(self) -> bool:
        return (self.comparison.difference > 0) == self.first.higher_is_better


def contrasts(groups: Sequence[Group]) -> list[Contrast]:
    r"""Per dataset, wherever both sides have at least two runs:
    Graphormer + SepNorm against ShareNorm (the recipe's rows, and the
    rows of any variant that both norms have, e.g. fine-tuned from the
    pretrained backbones); each row fine-tuned from a pretrained backbone
    against its from-scratch twin (same norm, same variant otherwise); and
    each Graphormer row with SepNorm or a pretrained backbone against each
    other model family (e.g. chemprop)."""
    out = []
    for dataset in sorted({g.dataset for g in groups}):
        members = [g for g in groups if g.dataset == dataset and
                   len(g.runs) >= 2]
        graphormers = [g for g in members if g.is_graphormer]
        by_norm_variant = {(g.runs[0]['norm'], g.variant): g
                           for g in graphormers}
        for (norm, variant), sep in by_norm_variant.items():
            share = by_norm_variant.get(('share', variant))
            if norm == 'sep' and share is not None:
                out.append(Contrast(sep, share, welch(sep.test, share.test)))
        for pretrained in (g for g in graphormers if g.is_pretrained):
            scratch = by_norm_variant.get((pretrained.runs[0]['norm'],
                                           pretrained.scratch_variant))
            if scratch is not None:
                out.append(contrast(pretrained, scratch))
        for first in (g for g in graphormers
                      if g.is_sepnorm or g.is_pretrained):
            for second in (g for g in members if not g.is_graphormer):
                out.append(contrast(first, second))
    return out


def contrast(first: Group, second: Group) -> Contrast:
    r"""The two groups on the test molecules that every run of both
    predicted, or on each run's own test metric when they cannot tell.

    Args:
        first (Group): The row; the difference is its mean minus
            :obj:`second`'s.
        second (Group): The reference.
    """
    from .test_predictions import common_molecules, score_on
    ids = common_molecules(first.runs + second.runs)
    if ids:
        return Contrast(first, second, welch(
            [score_on(run, ids) for run in first.runs],
            [score_on(run, ids) for run in second.runs]), len(ids))
    return Contrast(first, second, welch(first.test, second.test))
