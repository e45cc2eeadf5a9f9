r"""How the generated blocks write the results: a mean ± std over seeds, a
metric's scale, decimals and title, a row's short name, and a comparison's
confidence interval and significance, the same in every table and
sentence (:mod:`~benchmarks.analysis.results`,
:mod:`~benchmarks.analysis.findings`, best from SMILES, the reach and
tuning tables, the graph-token report, the bundle rule)."""
from __future__ import annotations

import statistics
from typing import Sequence

from graphormer_sepnorm.models import NORM_NAMES
from .comparisons import Contrast
from .runs import Group


def mean_std(values: Sequence[float], scale: float = 1.0,
             digits: int = 3) -> str:
    r"""``mean ± std`` (sample standard deviation; ``mean`` alone for one
    value)."""
    values = [v * scale for v in values if v is not None]
    if not values:
        return 'n/a'
    mean = statistics.fmean(values)
    if len(values) == 1:
        return f'{mean:.{digits}f}'
    return f'{mean:.{digits}f} ± {statistics.stdev(values):.{digits}f}'


def metric_units(metric: str) -> tuple[float, int]:
    r"""The scale and decimals a :obj:`metric` (a run's :obj:`metric`) is
    written with: ROC-AUC in percent with two decimals, an error with
    three."""
    return (100.0, 2) if metric == 'rocauc' else (1.0, 3)


def metric_format(group: Group) -> tuple[float, int]:
    r""":func:`metric_units` of :obj:`group`'s metric."""
    return metric_units(group.metric)


def metric_title(metric: str) -> str:
    r"""A :obj:`metric` (a run's :obj:`metric`) as the tables name it."""
    return 'ROC-AUC (%)' if metric == 'rocauc' else metric.upper()


def metric_name(group: Group) -> str:
    r""":obj:`group`'s metric as the tables name it
    (:func:`metric_title`)."""
    return metric_title(group.metric)


def short_name(group: Group) -> str:
    r"""A row's name in comparisons: a Graphormer's norm, with its protocol
    variant in brackets so that a fine-tuned row and its from-scratch twin
    read apart; another family's label."""
    if not group.is_graphormer:
        return group.label
    name = NORM_NAMES[group.runs[0]['norm']]
    return f'{name} [{group.variant}]' if group.variant else name


def interval_text(c: Contrast) -> str:
    r"""The 95% confidence interval of :obj:`c`'s difference, in the
    metric's display units."""
    scale, digits = metric_format(c.first)
    d = c.comparison
    return f'[{d.low * scale:+.{digits}f}, {d.high * scale:+.{digits}f}]'


def significance_text(c: Contrast) -> str:
    r"""Whether :obj:`c` is significant at the 5% level, as a sentence's
    end."""
    return ('significant' if c.comparison.p_value < 0.05 else
            'not significant') + ' at the 5% level.'
