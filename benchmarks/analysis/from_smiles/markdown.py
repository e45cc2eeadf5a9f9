r"""Best from SMILES, the markdown: one table per set (:func:`set_table`),
the goal line, the note under the tables and the one line of
``README.md`` (:func:`from_smiles_summary`), from the rows of
:mod:`.rows`."""
from __future__ import annotations

from typing import Optional, Sequence

from graphormer_sepnorm.models import NORM_NAMES
from graphormer_sepnorm.training.run_results import TEST_PROTOCOLS
from ..budget import budget_markdown
from ..comparisons import Comparison, p_text
from ..formatting import mean_std, metric_title, metric_units
from ..methods import bundled_backbone_steps
from ..reach import Paired
from ..runs import test_protocol_of
from .rows import (GOAL, PER_SEED_SPLITS, Row, SetResult, budget_counts,
                   goal_counts, goal_met, label_of)


#: How each test protocol reads in a cell.
_SCORED = {TEST_PROTOCOLS['end']: 'once, at the end',
           TEST_PROTOCOLS['every_validation']: 'at every validation'}


def _cells(row: Row, s: SetResult) -> list[str]:
    if not row.runs:
        return [row.label, '—', 'not run'] + ['—'] * 6
    scale, digits = metric_units(s.metric)
    norm = '—'
    if row.norm is not None:
        norm = '; '.join(f'{NORM_NAMES[n]} {v * scale:.{digits}f}'
                         for n, v in row.validation.items())
    molecules = sorted({(r.get('molecules') or {}).get('test', {}).get(
        'scored') or (r.get('split_sizes') or {}).get('test')
        for r in row.runs} - {None})
    minutes = f'{row.minutes:.1f}'
    ratio = s.minutes_ratio(row)
    if ratio is not None:
        minutes += f' ({ratio:.2f}×)'
    scored = ' / '.join(sorted({_SCORED.get(test_protocol_of(r), '?')
                                for r in row.runs}))
    against = ('reference' if row is s.reference else
               _difference(row.against, scale, digits, row.common, s.key))
    by_seed = (_paired(row.by_seed, scale, digits)
               if s.key in PER_SEED_SPLITS and row is not s.reference
               else '—')
    label = f'**{row.label}**' if row is s.best else row.label
    return [label, norm,
            f"{','.join(str(r['seed']) for r in row.runs)} ({len(row.runs)})",
            '/'.join(f'{m:,}' for m in molecules) or '—',
            mean_std(row.test, scale, digits), minutes, scored,
            against, by_seed]


def _difference(c: Optional[Comparison], scale: float, digits: int,
                common: Optional[int], key: str) -> str:
    if c is None:
        return '—'
    where = (f'{common:,} common' if common is not None else
             "each seed's split" if key in PER_SEED_SPLITS
             else "each run's own")
    return (f'{c.difference * scale:+.{digits}f} [{c.low * scale:+.{digits}f}'
            f', {c.high * scale:+.{digits}f}], {p_text(c.p_value)} '
            f'({where})')


def _paired(c: Optional[Paired], scale: float, digits: int) -> str:
    if c is None:
        return '—'
    return (f'{c.mean * scale:+.{digits}f} [{c.low * scale:+.{digits}f}, '
            f'{c.high * scale:+.{digits}f}], {p_text(c.p_value)}')


def _split_line(s: SetResult) -> str:
    metric = (f"test {metric_title(s.metric)}, "
              f"{'higher' if s.higher_is_better else 'lower'} is better"
              if s.metric else 'no runs yet')
    split = ('each seed its own scaffold split, shared by every row of '
             'that seed: Welch as the goal asks, and paired by seed'
             if s.key in PER_SEED_SPLITS else
             'one split for every seed: Welch, on the test molecules every '
             'run of both rows predicted (where their ids name the same '
             'molecules)')
    return f'**{s.title}** (`{s.key}`; {metric}; {split}{_choice(s)}):\n'


def _choice(s: SetResult) -> str:
    r"""Where a candidate row ran more seeds than the others: the seeds the
    bold row was chosen on, and each candidate's mean validation there."""
    seeds = set(s.choice_seeds)
    if all({r['seed'] for r in row.runs} == seeds for row in s.candidates):
        return ''
    scale, digits = metric_units(s.metric)
    means = ', '.join(f'{label_of(method)} {value * scale:.{digits}f}'
                      for method, value in s.choice_validation.items())
    return (f"; the bold row is chosen on seeds "
            f"{','.join(map(str, sorted(seeds)))}, those every row of ours "
            f"ran (the rows of more seeds ran them to confirm the choice), "
            f"where the mean validation was: {means}")


def set_table(s: SetResult) -> str:
    r"""One set's markdown table: per row the chosen norm with the mean
    validation of each norm, seeds, test molecules per run, test metric
    (mean ± std), CPU minutes per run (with its ratio to chemprop's
    default's, :meth:`~.rows.SetResult.minutes_ratio`), how test was
    scored, and the difference from chemprop's default (Welch; paired by seed where the
    seeds are splits)."""
    lines = [_split_line(s),
             '| row | norm: mean validation, chosen first | seeds (n) | '
             'test molecules per run | test, mean ± std | CPU min per run '
             '| test scored | − chemprop default [95% CI], Welch | − chemprop '
             'default, paired by seed [95% CI] |',
             '| --- | --- | --- | ---: | ---: | ---: | --- | --- | --- |']
    lines += ['| ' + ' | '.join(_cells(row, s)) + ' |' for row in s.rows]
    return '\n'.join(lines) + '\n'


def _ratios(ratios: dict[str, float], measured: set[str]) -> str:
    return ', '.join(f'{name} {r:.2f}×'
                     + (' side by side' if name in measured else '')
                     for name, r in ratios.items()) or 'none'


def goal_line(sets: Sequence[SetResult]) -> str:
    r"""The goal's verdict in a sentence, then, beside it, whether the row
    it reads keeps to issue 45's same budget (:func:`~.rows.budget_counts`)
    in another."""
    better, significant = goal_counts(sets)
    within, over = budget_counts(sets)
    measured = {s.short for s in sets if s.measured is not None}
    return (f"Goal ({GOAL}): {'met' if goal_met(sets) else 'not met'}; our "
            f"row of the best mean validation is better on {len(better)} of "
            f"{len(sets)} sets ({', '.join(better) or 'none'}), "
            f"significantly on {len(significant)} "
            f"({', '.join(significant) or 'none'}). Same budget (issue 45, "
            f"not part of the goal): that row is within chemprop's default's "
            f"CPU minutes per run on {len(within)} of {len(sets)} sets "
            f"({_ratios(within, measured)}), over on {len(over)} "
            f"({_ratios(over, measured)}).\n")


def from_smiles_markdown(sets: Sequence[SetResult]) -> str:
    r"""The generated block of ``benchmarks/README.md``: one table per set
    (:func:`set_table`), the goal line and how to read them."""
    left_out = [f"{s.title}: {m} ({n} runs)" for s in sets
                for m, n in s.left_out.items()]
    hardware = sorted({r['hardware']['device_name'] for s in sets
                       for row in s.rows for r in row.runs
                       if isinstance(r.get('hardware'), dict)})
    return ('\n'.join(set_table(s) for s in sets) + '\n' + goal_line(sets)
            + '\n' + side_by_side_section(sets)
            + '\nEach Graphormer row shows the norm of the best mean '
            'validation metric over the seeds its norms all ran (never '
            'test); in bold, our row of the best mean validation on the '
            'seeds all our rows of the set ran, the one the goal reads. Test: '
            'mean ± std over seeds at the best-validation checkpoint; '
            'differences are the row minus chemprop\'s default. Test '
            'molecules per run: what each run scored (`results.json`); '
            'chemprop and rows with molecule features leave out the SMILES '
            'RDKit rejects (MolHIV: 2 of its 4,113 test molecules). '
            '"The backbone": the bundled one (`bundled:pretrained-sepnorm`, '
            f'{bundled_backbone_steps():,} pretraining steps, or its '
            'ShareNorm twin of as many steps); "the N-step backbone": one '
            'pretrained for N steps instead, with the same objectives and '
            'corpus (`configs/pretrain/cpu_*.yaml`); "layer-wise '
            'learning-rate decay D": fine-tuned with `optim.layer_lr_decay` '
            'D (encoder layer i of L at D^(L − i) of the head\'s rate); '
            '"weight EMA E": validated, selected and tested on an '
            'exponential moving average of the weights (`optim.ema_decay` '
            'E); "blended with an N-tree forest": a random forest of N trees '
            'per task on the run\'s molecule features, fitted on the '
            'training split once training ends, averaged with the network, '
            'whose share of the average is chosen on validation '
            '(`model.forest_trees` N; the row\'s validation metric is the '
            'blend\'s at that share, so slightly optimistic); each a row of '
            'its own that the best mean validation may choose. '
            'MolHIV\'s Graphormer rows read OGB\'s graphs, which OGB builds '
            'from the same SMILES (OGB features); the ZINC-subset rows read '
            'its SMILES (Graphormer runs on ZINC\'s own graphs are left '
            'out). "At every validation": older runs computed test beside '
            'every validation; only the best-validation epoch\'s is read.'
            + (' Not in these rows: ' + '; '.join(left_out) + '.'
               if left_out else '')
            + ' CPU minutes: ' + (', '.join(hardware) or 'unknown hardware')
            + ', one thread per run; in brackets, the row\'s mean CPU minutes '
            'per run over chemprop\'s default\'s on the same set'
            + (' and hardware' if len(hardware) == 1 else '')
            + ' (issue 45\'s same budget: 1× or less). The rows ran in '
            'different working sessions on a shared virtual machine, where '
            'the same code took up to twice the CPU time per step from one '
            'session to another: a ratio within a factor of 2 of 1× is not '
            'settled by them; the goal line reads the side-by-side ratio '
            'instead where one was measured (above).\n')


def side_by_side_section(sets: Sequence[SetResult]) -> str:
    r"""The side-by-side measurements of issue 45's same budget
    (:attr:`~.rows.SetResult.measured`), a table and how it was made."""
    measured = {s.key: s.measured for s in sets if s.measured is not None}
    return ('Same budget, side by side (`benchmarks/same_budget.py`): the '
            'committed runs of a set\'s row the goal reads and of '
            'chemprop\'s default, replayed from their plans on one machine '
            'at the same time, one thread each, test scored once at the '
            'end; CPU minutes are each whole process\'s (start-up, '
            'featurization, training, validation, test), medians over the '
            'seeds replayed. A replay reproduced its committed run when its '
            'best validation and test metrics are the same.\n\n'
            + budget_markdown(measured, {s.key: s.title for s in sets}))


def from_smiles_summary(sets: Sequence[SetResult]) -> str:
    r"""The one line of ``README.md``: per set our best row minus chemprop's
    default (Welch p), the goal's verdict and on how many sets that row is
    within chemprop's CPU minutes per run (issue 45's same budget)."""
    parts = []
    for s in sets:
        if s.best is None:
            parts.append(f'{s.short} not run')
            continue
        scale, digits = metric_units(s.metric)
        d = s.best.against
        parts.append(f'{s.short} {d.difference * scale:+.{digits}f} '
                     f'({p_text(d.p_value, named=False)})')
    better, significant = goal_counts(sets)
    within, _ = budget_counts(sets)
    measured = sum(s.measured is not None for s in sets)
    return ("Best from SMILES, our best-validation row − chemprop default "
            "(ROC-AUC points, MAE; [Welch p](benchmarks/README.md"
            "#best-from-smiles)): " + ', '.join(parts)
            + f": better on {len(better)} of {len(sets)}, significantly on "
            f"{len(significant)}; goal "
            f"{'met' if goal_met(sets) else 'not met'}; within chemprop's "
            f"CPU time on {len(within)}"
            + (f" ({measured} of {len(sets)} measured side by side)"
               if measured else '') + ".\n")
