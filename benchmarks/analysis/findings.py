r"""What the committed runs say, as sentences generated from them (the
``results-findings`` block of ``benchmarks/README.md``): what was run, the
CPU minutes each run took, and per dataset the rows in order of their mean
test metric, the best row (whichever model family) against the next, every
comparison of :func:`~benchmarks.analysis.comparisons.contrasts`, and the
order in which the rows reach the time-to-accuracy threshold.

Every difference is written row − reference (:data:`SIGN_CONVENTION`), so
that a sign reads the same way in every sentence; hand-written prose around
the block explains the protocol and the hypotheses, and leaves which model
is ahead to these sentences, which cannot go stale."""
from __future__ import annotations

import math
import statistics
from typing import Sequence

from .comparisons import Contrast, contrast, contrasts, p_text
from .formatting import (interval_text, mean_std, metric_format,
                         metric_name, short_name, significance_text)
from .runs import Group, by_dataset, common_threshold, minutes_reached

#: How every difference of the block is signed.
SIGN_CONVENTION = (
    'Each difference below is row − reference (the row named first minus '
    'the one named second) of the mean test metric over seeds (on the test '
    'molecules both predicted where the sentence says so), in the tables\' '
    'units (ROC-AUC in percentage points): a positive ROC-AUC '
    'difference and a negative MAE difference favour the row named first. '
    'Each has its Welch-Satterthwaite 95% confidence interval and the '
    'p-value of Welch\'s two-sided t-test.\n')


def difference_sentence(c: Contrast) -> str:
    r"""One comparison as ``row − reference = difference (95% CI, Welch p):
    direction, significance``, in the signs of :data:`SIGN_CONVENTION`.

    Args:
        c (Contrast): The comparison; :obj:`c.first` is the row,
            :obj:`c.second` the reference.
    """
    scale, digits = metric_format(c.first)
    d = c.comparison
    where = ('' if c.molecules is None else
             f' on the {c.molecules:,} test molecules both predicted')
    direction = ('equal on average' if d.difference == 0 else
                 f"{'better' if c.first_is_better else 'worse'} on average")
    return (f"{short_name(c.first)} − {short_name(c.second)} = "
            f"{d.difference * scale:+.{digits}f}{where} (95% CI "
            f"{interval_text(c)}, Welch {p_text(d.p_value)}): {direction}, "
            f"{significance_text(c)}")


def done_list(groups: Sequence[Group]) -> str:
    r"""What has been run: per dataset, every row of the tables with the
    seeds of its runs."""
    lines = [f"- **{dataset}**: " + '; '.join(
        f"{g.label} (seeds {','.join(map(str, g.seeds))})" for g in members)
        + '.' for dataset, members in by_dataset(groups).items()]
    runs = sum(len(g.runs) for g in groups)
    return (f'Done: {runs} final runs, every one in the tables below.\n\n'
            + '\n'.join(lines) + '\n')


def cpu_minutes_line(groups: Sequence[Group]) -> str:
    r"""The range of CPU minutes per run, over all runs and per dataset, as
    the runs recorded them (:meth:`~benchmarks.analysis.runs.Group.
    cpu_minutes`)."""
    minutes = {dataset: [m for g in members for m in g.cpu_minutes()]
               for dataset, members in by_dataset(groups).items()}
    every = [m for values in minutes.values() for m in values]
    per_dataset = '; '.join(f'{dataset} {min(values):.1f} to '
                            f'{max(values):.1f}'
                            for dataset, values in minutes.items())
    return (f'CPU minutes per run, as each run\'s `results.json` records '
            f'them (`cpu_time_s`; `wall_time_s` for a run that predates '
            f'it): {min(every):.1f} to {max(every):.1f} over the '
            f'{len(every)} runs ({per_dataset}).\n')


def ranked(members: Sequence[Group]) -> list[Group]:
    r"""The groups of one dataset by mean test metric, best first (ties in
    their given order)."""
    return sorted(members, key=lambda g: statistics.fmean(g.test),
                  reverse=members[0].higher_is_better)


def ranking_sentence(members: Sequence[Group]) -> str:
    r"""The groups of one dataset by mean test metric, best first, each
    with its CPU minutes per run."""
    scale, digits = metric_format(members[0])
    return (f"Mean test {metric_name(members[0])}, best first (CPU minutes "
            f"per run): " + '; '.join(
                f"{g.label} {statistics.fmean(g.test) * scale:.{digits}f} "
                f"({mean_std(g.cpu_minutes(), 1.0, 1)})"
                for g in ranked(members)) + '.')


def best_sentence(members: Sequence[Group]) -> str:
    r"""The best row of one dataset by mean test metric, whichever model
    family, against the next (:func:`difference_sentence`), where both have
    the two runs Welch's test needs."""
    order = ranked(members)
    best = order[0]
    if len(order) == 1:
        return f"Best: {best.label}, the only row."
    if min(len(best.runs), len(order[1].runs)) < 2:
        return (f"Best: {best.label}; next: {order[1].label} (no test: a "
                f"row has fewer than two runs).")
    return (f"Best: {best.label}; against the next, "
            f"{difference_sentence(contrast(best, order[1]))}")


def time_to_accuracy_sentence(members: Sequence[Group]) -> str:
    r"""The groups of one dataset in the order they reach the
    time-to-accuracy threshold (the weakest group's mean best validation):
    most runs reaching it first, then fewest CPU minutes on average over
    the runs that did."""
    threshold = common_threshold(members)
    scale, digits = metric_format(members[0])
    reached = [(g, minutes_reached(g, threshold)) for g in members]
    reached.sort(key=lambda pair: (
        -len(pair[1]) / len(pair[0].runs),
        statistics.fmean(pair[1]) if pair[1] else math.inf))
    return (f"Time to accuracy (best validation {metric_name(members[0])} "
            f"{'≥' if members[0].higher_is_better else '≤'} "
            f"{threshold * scale:.{digits}f}, the weakest row's mean best "
            f"validation), by the share of runs that reached it, then by "
            f"their mean CPU minutes to reach it: " + '; '.join(
                f"{g.label} "
                + (f"{statistics.fmean(m):.1f}" if m else 'never')
                + f" ({len(m)} of {len(g.runs)} runs)"
                for g, m in reached) + '.')


def findings_markdown(groups: Sequence[Group]) -> str:
    r"""The whole generated block: :data:`SIGN_CONVENTION`,
    :func:`done_list`, :func:`cpu_minutes_line`, and per dataset
    :func:`ranking_sentence`, :func:`best_sentence`, one
    :func:`difference_sentence` per comparison of
    :func:`~benchmarks.analysis.comparisons.contrasts` (the comparisons of
    the tables) and :func:`time_to_accuracy_sentence`."""
    every_contrast = contrasts(groups)
    parts = [SIGN_CONVENTION, done_list(groups), cpu_minutes_line(groups)]
    for dataset, members in by_dataset(groups).items():
        lines = [ranking_sentence(members), best_sentence(members)]
        lines += [difference_sentence(c) for c in every_contrast
                  if c.first.dataset == dataset]
        lines.append(time_to_accuracy_sentence(members))
        better = 'higher' if members[0].higher_is_better else 'lower'
        parts.append(f"**{dataset}** (test {metric_name(members[0])}, "
                     f"{better} is better):\n\n"
                     + ''.join(f'- {line}\n' for line in lines))
    return '\n'.join(parts)
