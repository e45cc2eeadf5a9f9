r"""The results blocks of the READMEs and ``RESULTS.md``: per dataset and
model the test metric at the best validation epoch (mean ± std over seeds)
beside the paper's, the comparisons (see
:mod:`~benchmarks.analysis.comparisons`), seed ensembles, time to
accuracy and the hardware (:func:`results_markdown`, in
``benchmarks/README.md``), and the short table of each dataset's recipe,
best-validation and peer rows with the goals (:func:`results_summary`, in
the top-level ``README.md``)."""
from __future__ import annotations

import statistics
from pathlib import Path
from typing import Sequence

from .comparisons import Contrast, contrasts, p_text
from .formatting import (interval_text, mean_std, metric_format, metric_name,
                         short_name, significance_text)
from .runs import (GOALS, Group, by_dataset, common_threshold,
                   minutes_reached, ranked_by_validation, test_protocol_of)


def results_table(groups: Sequence[Group], detailed: bool = True) -> str:
    r"""One row per (dataset, model): test metric at the best validation
    epoch (mean ± std over seeds), seeds, best validation, steps and CPU
    time per run, beside the paper's GPU numbers. Without
    :obj:`detailed`, the number of seeds alone and no steps (README.md's
    short table)."""
    seeds_title, steps_title = (('seeds (n)', 'steps | ') if detailed
                                else ('seeds', ''))
    lines = [
        f'| dataset | model | metric | test, mean ± std | {seeds_title} '
        f'| best val | {steps_title}CPU min per run '
        f'| paper (GPU, full recipe) |',
        '| --- ' * (9 if detailed else 8) + '|',
    ]
    for g in groups:
        scale, digits = metric_format(g)
        paper = ('—' if g.paper is None else f'{g.paper * scale:.{digits}f}')
        seeds, steps_text = str(len(g.runs)), ''
        if detailed:
            steps = sorted({r['steps'] for r in g.runs})
            steps_text = (f'{steps[0]:,} | ' if len(steps) == 1 else
                          f'{steps[0]:,}-{steps[-1]:,} | ')
            seeds = f"{','.join(map(str, g.seeds))} ({len(g.runs)})"
        lines.append(
            f'| {_dataset(g)} | {g.label} | {metric_name(g)} '
            f'| {mean_std(g.test, scale, digits)} | {seeds} '
            f'| {mean_std(g.best_val, scale, digits)} | {steps_text}'
            f'{mean_std(g.cpu_minutes(), 1.0, 1)} | {paper} |')
    return '\n'.join(lines) + '\n'


def _minutes(c: Contrast) -> str:
    r"""Both sides' CPU minutes per run."""
    return (f'CPU minutes per run {mean_std(c.first.cpu_minutes(), 1.0, 1)} '
            f'vs {mean_std(c.second.cpu_minutes(), 1.0, 1)}')


def _better(c: Contrast) -> str:
    r"""Which way :obj:`c`'s first row fell: the sign of a difference says
    it only together with the metric's direction."""
    return 'better' if c.first_is_better else 'worse'


#: The datasets whose runs trained on a stand-in training split, with its
#: name, written beside each of their rows (their validation and test
#: splits are the real ones).
STAND_IN_TRAINING = {'zinc_subset': 'ZINC-proxy'}


def _dataset(group: Group) -> str:
    r"""A row's dataset, with the stand-in training split it trained on."""
    stand_in = STAND_IN_TRAINING.get(group.dataset)
    return (f'{group.dataset} (train: {stand_in})' if stand_in
            else group.dataset)


def stand_in_note(groups: Sequence[Group]) -> str:
    r"""What the stand-in training splits of :data:`STAND_IN_TRAINING`
    are, for the datasets of :obj:`groups` that have one."""
    names = sorted({STAND_IN_TRAINING[g.dataset] for g in groups
                    if g.dataset in STAND_IN_TRAINING})
    return ''.join(
        f"{name}: the real ZINC-subset validation and test molecules with a "
        f"stand-in training split of 10,000 ZINC molecules (the real "
        f"training split could not be obtained here), so these rows are not "
        f"comparable with the paper's, which trained on the real one.\n"
        for name in names)


def comparison_table(groups: Sequence[Group]) -> str:
    r"""Graphormer + SepNorm against ShareNorm and against other model
    families on the test metric, per dataset: difference of means, 95%
    confidence interval, Welch's p-value, and which is better."""
    lines = ['| dataset | metric | comparison | test molecules | difference '
             '| 95% CI | Welch p | better on average | significant '
             '(p < 0.05) |',
             '| --- | --- | --- | --- | --- | --- | --- | --- | --- |']
    for c in contrasts(groups):
        scale, digits = metric_format(c.first)
        d = c.comparison
        better = (short_name(c.first) if c.first_is_better else
                  short_name(c.second)) if d.difference != 0 else 'tie'
        molecules = 'each run\'s own' if c.molecules is None else \
            f'{c.molecules:,} (common)'
        lines.append(
            f'| {c.first.dataset} | {metric_name(c.first)} '
            f'| {short_name(c.first)} − {short_name(c.second)} | {molecules} '
            f'| {d.difference * scale:+.{digits}f} '
            f'| {interval_text(c)} '
            f'| {p_text(d.p_value, named=False)} | {better} '
            f'| {"yes" if d.p_value < 0.05 else "no"} |')
    return '\n'.join(lines) + '\n'


def time_to_accuracy_table(groups: Sequence[Group]) -> str:
    r"""CPU minutes until the validation metric reaches the level that
    every model reaches on average, per dataset and model."""
    lines = ['| dataset | validation threshold | model | CPU minutes to reach '
             '(mean) | runs that reached it |',
             '| --- | --- | --- | --- | --- |']
    for dataset, members in by_dataset(groups).items():
        threshold = common_threshold(members)
        scale, digits = metric_format(members[0])
        for g in members:
            reached = minutes_reached(g, threshold)
            mean = f'{statistics.fmean(reached):.1f}' if reached else '—'
            lines.append(f'| {dataset} | {metric_name(g)} '
                         f'{"≥" if g.higher_is_better else "≤"} '
                         f'{threshold * scale:.{digits}f} | {g.label} '
                         f'| {mean} | {len(reached)} of {len(g.runs)} |')
    return '\n'.join(lines) + '\n'


def verdicts(groups: Sequence[Group]) -> str:
    r"""One plain sentence per comparison: which way it fell, by how much,
    and whether it is significant."""
    sentences = []
    for c in contrasts(groups):
        scale, digits = metric_format(c.first)
        d = c.comparison
        where = ('' if c.molecules is None else
                 f' on the {c.molecules:,} test molecules both predicted')
        minutes = '' if c.second.is_graphormer else f'; {_minutes(c)}'
        sentences.append(
            f"- **{c.first.dataset}**, test {metric_name(c.first)}: "
            f"{short_name(c.first)} − {short_name(c.second)} = "
            f"{d.difference * scale:+.{digits}f} on average{where} "
            f"({_better(c)}; {len(c.first.runs)} vs "
            f"{len(c.second.runs)} seeds; 95% CI of the difference "
            f"{interval_text(c)}, Welch {p_text(d.p_value)}{minutes}): "
            f"{significance_text(c)}")
    return '\n'.join(sentences) + ('\n' if sentences else '')


def goal_verdicts(groups: Sequence[Group], best_only: bool = False) -> str:
    r"""One sentence per pretrained SepNorm row of a dataset with a goal
    (:data:`~benchmarks.analysis.runs.GOALS`): its mean test metric
    against the goal, met or missed and by how much, beside the other
    families' means and CPU minutes per run (the goals ask for equal
    fine-tuning CPU time). With :obj:`best_only`, only each dataset's
    pretrained SepNorm row with the best mean validation metric
    (:func:`~.runs.ranked_by_validation`)."""
    rows = [g for g in groups if g.dataset in GOALS
            and g.is_pretrained and g.is_sepnorm]
    if best_only:
        rows = [best for members in by_dataset(rows).values()
                for best in ranked_by_validation(members)[:1]]
    sentences = []
    for g in rows:
        goal = GOALS[g.dataset]
        scale, digits = metric_format(g)
        mean = statistics.fmean(g.test)
        margin = (mean - goal) if g.higher_is_better else (goal - mean)
        others = '; '.join(
            f"{o.label} {statistics.fmean(o.test) * scale:.{digits}f} in "
            f"{mean_std(o.cpu_minutes(), 1.0, 1)} CPU min per run"
            for o in groups if o.dataset == g.dataset and not o.is_graphormer)
        sentences.append(
            f"- **Goal, {g.dataset}**: {g.label}: mean test "
            f"{metric_name(g)} {mean * scale:.{digits}f} over "
            f"{len(g.runs)} seeds in {mean_std(g.cpu_minutes(), 1.0, 1)} CPU "
            f"min per run; goal {'≥' if g.higher_is_better else '≤'} "
            f"{goal * scale:.{digits}f}: "
            f"{'met' if margin >= 0 else 'missed'} (mean − goal = "
            f"{(mean - goal) * scale:+.{digits}f})"
            + (f" ({others})." if others else "."))
    return '\n'.join(sentences) + ('\n' if sentences else '')


def ensemble_table(groups: Sequence[Group]) -> str:
    r"""Per dataset and model with two or more seeds: the seed ensemble's
    test metric beside its members' mean, and whether the members' spread
    flags the larger errors (Spearman correlation of the spread with the
    absolute error; mean absolute error per quartile of spread). Empty when
    no group kept test predictions."""
    from .test_predictions import seed_ensemble
    lines = []
    for g in groups:
        report = seed_ensemble(g.runs)
        if report is None:
            continue
        scale, digits = metric_format(g)
        quartiles = ' / '.join(f'{e:.3f}' for e in
                               report.error_by_std_quartile)
        lines.append(
            f'| {g.dataset} | {g.label} | {report.members} '
            f'| {report.molecules:,} | {metric_name(g)} '
            f'{report.metric * scale:.{digits}f} '
            f'| {report.mean_member_metric * scale:.{digits}f} '
            f'| {report.spearman:+.3f} ({p_text(report.spearman_p)}) '
            f'| {quartiles} |')
    if not lines:
        return ''
    return '\n'.join([
        '| dataset | model | members (seeds) | test molecules | ensemble '
        '| members\' mean | Spearman ρ(std, abs. error) | mean abs. error '
        'per std quartile (low → high) |',
        '| --- | --- | --- | --- | --- | --- | --- | --- |', *lines]) + '\n'


def hardware_line(groups: Sequence[Group]) -> str:
    r"""The devices the runs ran on, from their results."""
    devices = sorted({r.get('hardware', {}).get('device_name', '?')
                      if isinstance(r.get('hardware'), dict) else
                      str(r.get('hardware', '?'))
                      for g in groups for r in g.runs})
    return 'Hardware: ' + '; '.join(devices) + '.\n'


def protocol_line(groups: Sequence[Group]) -> str:
    r"""How the rows' runs scored their test split, from their
    :obj:`results.json` (:func:`~.runs.test_protocol_of`), and how new
    training runs score it."""
    counts: dict[str, dict[str, int]] = {}
    for g in groups:
        family = 'Graphormer' if g.is_graphormer else g.label
        for run in g.runs:
            families = counts.setdefault(test_protocol_of(run), {})
            families[family] = families.get(family, 0) + 1
    parts = ['in the ' + ' and the '.join(
        f"{n} {family} runs" for family, n in families.items())
        + f", {protocol}" for protocol, families in counts.items()]
    return ('How test was read: ' + '; '.join(parts) + '. New training runs '
            'score test once at the end, by the best-validation checkpoint '
            '(`train.test_at: end`, the default).\n')


def results_markdown(groups: Sequence[Group], figures: Sequence[str] = ()
                     ) -> str:
    r"""The whole generated results block: the table, the comparisons
    (verdicts and statistics), seed ensembles, time to accuracy, how test
    was read (:func:`protocol_line`), the hardware, and links to
    :obj:`figures`."""
    parts = [results_table(groups)]
    note = stand_in_note(groups)
    if note:
        parts.append(note)
    goals = goal_verdicts(groups)
    if goals:
        parts.append(goals)
    if contrasts(groups):
        parts += ['**Comparisons** (test metric at the best validation '
                  'epoch; difference of means, Welch-Satterthwaite 95% '
                  'confidence interval, Welch\'s two-sided t-test; against '
                  'another model family, on the test molecules that every '
                  'run of both predicted):\n',
                  verdicts(groups), comparison_table(groups)]
    ensembles = ensemble_table(groups)
    if ensembles:
        parts += ['**Seed ensembles** (`scripts/predict.py --checkpoint A B '
                  'C D`: the mean of the members\' predictions, and their '
                  'standard deviation as a per-molecule uncertainty; here '
                  'from the runs\' test predictions, probabilities for '
                  'MolHIV):\n', ensembles]
    parts += ['**Time to accuracy** (CPU minutes of one core until the best '
              'validation metric so far reaches the level that every model '
              'reaches on average, i.e. the weakest model\'s mean best '
              'validation):\n', time_to_accuracy_table(groups),
              protocol_line(groups), hardware_line(groups)]
    if figures:
        parts.append(' '.join(f'![{Path(f).stem}]({f})' for f in figures)
                     + '\n')
    return '\n'.join(parts)


def summary_rows(groups: Sequence[Group]) -> list[Group]:
    r"""The rows of README.md's short table, in their order in
    :obj:`groups`: per dataset, the recipe's Graphormer rows (beside the
    paper's), the Graphormer row with the best mean validation metric
    (:func:`~.runs.ranked_by_validation`; test plays no part) and the other
    model families' rows."""
    shown = set()
    for members in by_dataset(groups).values():
        shown |= {id(g) for g in members
                  if not g.is_graphormer or g.variant is None}
        shown |= {id(g) for g in ranked_by_validation(members)[:1]}
    return [g for g in groups if id(g) in shown]


def results_summary(groups: Sequence[Group]) -> str:
    r"""README.md's short results block: the short :func:`results_table` of
    the rows of :func:`summary_rows`, how many rows the full results hold,
    the goal verdicts of each dataset's best-validation pretrained SepNorm
    row (:func:`goal_verdicts`), how test was read and the hardware. Every row,
    the comparisons (what the backbones buy, against chemprop) and the
    rest are :func:`results_markdown`'s, in ``benchmarks/README.md``."""
    shown = summary_rows(groups)
    note = stand_in_note(shown)
    goals = goal_verdicts(groups, best_only=True)
    rows = (f"Per dataset: the recipe's rows, the Graphormer row with the "
            f"best mean validation, and the other model families'; "
            f"{len(shown)} of the {len(groups)} rows of the [full results]"
            f"(benchmarks/README.md#all-results), which compare them.\n")
    return (results_table(shown, detailed=False) + '\n' + rows + '\n'
            + (note + '\n' if note else '')
            + (goals + '\n' if goals else '') + protocol_line(groups) + '\n'
            + hardware_line(groups))
