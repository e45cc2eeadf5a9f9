r"""How far the pretrained backbone reaches: on endpoints unlike its
descriptor targets (the MoleculeNet classification sets), the backbone
fine-tuned against the same config trained from scratch, chemprop beside
them, and the linear probe of the 39 descriptor targets alone
(``benchmarks/descriptor_probe.py``).

The runs of ``benchmarks/plans/final_reach_*.yaml`` give each seed its own
scaffold split, shared by the three methods of that seed, so fine-tuned and
from-scratch runs are compared **paired by seed**: the mean of the per-seed
differences, its 95% t interval and the paired t-test.

The ablation (``benchmarks/plans/final_zinc_subset_smiles_masked_atoms.yaml``)
asks whether the backbone's ZINC-subset gain needs its descriptor targets:
the backbone pretrained on masked atoms alone, fine-tuned, beside the rows
trained from scratch and fine-tuned from the backbone of both objectives
(one fixed split, so groups are compared by Welch's test).
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Optional, Sequence

from .comparisons import Comparison, p_text, welch
from .formatting import mean_std
from .methods import OTHER_BACKBONE, method_of
from .runs import dataset_of, shared_seeds

#: The methods of a set, in table order, with their column titles; the
#: fine-tuned column shows :func:`comparable_backbone`'s runs.
METHODS = {'chemprop': 'chemprop D-MPNN',
           'scratch': 'Graphormer from scratch',
           'fine-tuned': 'Graphormer fine-tuned from the backbone'}


def reach_sets(runs: Sequence[dict]) -> dict[str, dict[str, list[dict]]]:
    r"""The runs by set (their benchmark, e.g. :obj:`"clintox"`), then by
    :func:`~benchmarks.analysis.methods.method_of`, each list sorted by
    seed: a run with molecule features (chemprop's or ours) or another
    backbone is a method of its own, never one of :data:`METHODS`."""
    sets: dict[str, dict[str, list[dict]]] = {}
    for run in runs:
        if run['metric'] != 'rocauc':
            raise ValueError(f"{run.get('path', 'a run')}: metric "
                             f"{run['metric']!r}; the reach runs are scored "
                             f"by ROC-AUC")
        sets.setdefault(dataset_of(run), {}).setdefault(
            method_of(run), []).append(run)
    for methods in sets.values():
        for method_runs in methods.values():
            method_runs.sort(key=lambda r: r['seed'])
    return dict(sorted(sets.items()))


def _like_for_like(tuned: Sequence[dict],
                   scratch: Sequence[dict]) -> list[dict]:
    r"""The runs of :obj:`tuned` in the norm of :obj:`scratch`, if they
    took the same steps as :obj:`scratch` (empty otherwise)."""
    norms = {r.get('norm') for r in scratch}
    tuned = [r for r in tuned if r.get('norm') in norms]
    same = {r.get('steps') for r in tuned} == {r.get('steps')
                                               for r in scratch}
    return tuned if same else []


def comparable_backbone(sets: dict[str, dict[str, list[dict]]]) -> str:
    r"""The plain fine-tuned method of the fine-tuned column: from the
    bundled backbone (:obj:`"fine-tuned"`) if, on every set with
    from-scratch runs, its runs of their norm took their steps (the same
    config, learning rate and schedule, only the initialization changed),
    else the first backbone of other steps
    (:data:`~benchmarks.analysis.methods.OTHER_BACKBONE`) whose runs did;
    :obj:`"fine-tuned"` if none did."""
    others = sorted({m for methods in sets.values() for m in methods
                     if OTHER_BACKBONE.match(m)})
    for method in ['fine-tuned', *others]:
        if all(_like_for_like(methods.get(method, []), methods['scratch'])
               for methods in sets.values() if methods.get('scratch')):
            return method
    return 'fine-tuned'


def _column_runs(methods: dict[str, list[dict]], method: str,
                 backbone: str) -> list[dict]:
    r"""A column's runs of one set: :obj:`backbone`'s in the from-scratch
    runs' norm for the fine-tuned column, :obj:`method`'s otherwise."""
    if method != 'fine-tuned':
        return methods.get(method, [])
    return _like_for_like(methods.get(backbone, []),
                          methods.get('scratch', []))


def _columns(methods: dict[str, list[dict]],
             backbone: str) -> dict[str, list[dict]]:
    r"""Each column's runs of one set (:func:`_column_runs`), on the seeds
    its columns all ran (a split per seed: the same molecules in every
    column), though a method ran more (e.g. chemprop's default, beside the
    best-from-SMILES rows)."""
    columns = {method: _column_runs(methods, method, backbone)
               for method in METHODS}
    seeds = shared_seeds(columns.values())
    return {method: [r for r in runs if r['seed'] in seeds]
            for method, runs in columns.items()}


def _tuned_title(backbone: str) -> str:
    other = OTHER_BACKBONE.match(backbone)
    return (f'Graphormer fine-tuned from the {other.group(1)}-step backbone'
            if other else METHODS['fine-tuned'])


@dataclass
class Paired:
    r"""Per-seed differences (first minus second) summarized."""
    seeds: list[int]
    mean: float
    low: float
    high: float
    p_value: float


def paired(first: Sequence[dict], second: Sequence[dict]) -> Optional[Paired]:
    r"""The test ROC-AUC of :obj:`first` minus :obj:`second` on the seeds
    both ran (the same split each): mean difference, 95% t interval, paired
    two-sided t-test; :obj:`None` below two common seeds."""
    from scipy import stats
    by_seed = {r['seed']: r['test_metric_at_best_val'] for r in second}
    pairs = [(r['seed'], r['test_metric_at_best_val'] - by_seed[r['seed']])
             for r in first if r['seed'] in by_seed]
    if len(pairs) < 2:
        return None
    differences = [d for _, d in pairs]
    mean = statistics.fmean(differences)
    spread = statistics.stdev(differences)
    if spread == 0:
        return Paired([s for s, _ in pairs], mean, mean, mean,
                      0.0 if mean else 1.0)
    half = stats.t.ppf(0.975, len(pairs) - 1) * spread / math.sqrt(
        len(pairs))
    p_value = float(stats.ttest_1samp(differences, 0.0).pvalue)
    return Paired([s for s, _ in pairs], mean, mean - half, mean + half,
                  p_value)


def _cell(values: Sequence[float]) -> str:
    return mean_std(values, scale=100, digits=2) if values else '—'


def _difference(c: Optional[Paired]) -> str:
    if c is None:
        return '—'
    return (f'{100 * c.mean:+.2f} [{100 * c.low:+.2f}, {100 * c.high:+.2f}],'
            f' {p_text(c.p_value)}')


def _minutes(runs: Sequence[dict]) -> str:
    minutes = [r['cpu_time_s'] / 60 for r in runs if r.get('cpu_time_s')]
    return f'{statistics.fmean(minutes):.1f}' if minutes else '—'


#: The methods of the CPU-minutes column, in its order.
MINUTES = ('scratch', 'fine-tuned', 'chemprop')


def _tuned_minus_scratch(columns: dict[str, list[dict]]
                         ) -> Optional[Paired]:
    r"""Fine-tuned − scratch, paired by seed, of one set's
    :func:`_columns`."""
    return paired(columns['fine-tuned'], columns['scratch'])


def reach_table(sets: dict[str, dict[str, list[dict]]],
                probe: Optional[dict] = None) -> str:
    r"""The markdown table: per set, test ROC-AUC (%) mean ± std over seeds
    of the probe and of each method of :data:`METHODS` (the plain ones:
    runs with molecule features are left to
    ``benchmarks/analysis/from_smiles/``), the paired fine-tuned −
    scratch difference, and CPU minutes per run."""
    backbone = comparable_backbone(sets)
    titles = {**METHODS, 'fine-tuned': _tuned_title(backbone)}
    lines = ['| set | seeds | linear probe of the 39 descriptors | ' +
             ' | '.join(titles.values()) +
             ' | fine-tuned − scratch, paired [95% CI] | CPU min per run '
             f"({' / '.join(MINUTES)}) |",
             '| --- | --- | ---: | ' + ' | '.join('---:' for _ in METHODS) +
             ' | --- | --- |']
    for name, methods in sets.items():
        columns = _columns(methods, backbone)
        seeds = sorted({r['seed'] for runs in columns.values()
                        for r in runs})
        probe_runs = (probe or {}).get('sets', {}).get(name, [])
        cells = [_cell([r['test_metric_at_best_val'] for r in runs])
                 for runs in columns.values()]
        lines.append(
            f"| {name} | {','.join(map(str, seeds))} "
            f"| {_cell([r['test_rocauc'] for r in probe_runs])} "
            f"| {' | '.join(cells)} "
            f"| {_difference(_tuned_minus_scratch(columns))} "
            f"| {' / '.join(_minutes(columns[m]) for m in MINUTES)} |")
    return '\n'.join(lines) + '\n'


def reach_verdicts(sets: dict[str, dict[str, list[dict]]]) -> list[str]:
    r"""One sentence per set: whether fine-tuning beat training from
    scratch (paired, 5% level), and where chemprop stands."""
    backbone = comparable_backbone(sets)
    sentences = []
    for name, methods in sets.items():
        columns = _columns(methods, backbone)
        c = _tuned_minus_scratch(columns)
        if c is None:
            continue
        if c.p_value < 0.05:
            verdict = 'better' if c.mean > 0 else 'worse'
            how = f'significantly {verdict} at the 5% level'
        else:
            how = 'no significant difference at the 5% level'
        sentence = (f"**{name}**: fine-tuned − scratch = "
                    f"{100 * c.mean:+.2f} test ROC-AUC points on average "
                    f"over seeds {','.join(map(str, c.seeds))} (95% CI "
                    f"[{100 * c.low:+.2f}, {100 * c.high:+.2f}], paired "
                    f"{p_text(c.p_value)}): {how}")
        chemprop = [r['test_metric_at_best_val']
                    for r in columns['chemprop']]
        if chemprop:
            tuned = statistics.fmean(
                r['test_metric_at_best_val'] for r in columns['fine-tuned'])
            theirs = statistics.fmean(chemprop)
            sentence += (f"; chemprop {100 * theirs:.2f}, "
                         f"{'above' if theirs > tuned else 'below'} the "
                         f"fine-tuned Graphormer's {100 * tuned:.2f}")
        sentences.append(sentence + '.')
    return sentences


def _chemprop_schedule(sets: dict[str, dict[str, list[dict]]]) -> str:
    epochs = {name: sorted({r['max_epochs'] for r in methods['chemprop']})
              for name, methods in sets.items() if methods.get('chemprop')}
    caps = sorted({r['max_cpu_minutes'] for methods in sets.values()
                   for r in methods.get('chemprop', [])
                   if r.get('max_cpu_minutes')})
    if not epochs:
        return ''
    return (' for ' + ', '.join(f"{'/'.join(map(str, e))} epochs on {name}"
                               for name, e in epochs.items())
            + (f" within {'/'.join(f'{c:g}' for c in caps)} CPU minutes"
               if caps else ''))


def reach_markdown(sets: dict[str, dict[str, list[dict]]],
                   probe: Optional[dict] = None) -> str:
    r"""The table, the verdicts and the protocol, for
    ``benchmarks/README.md`` and ``REACH.md``."""
    verdicts = reach_verdicts(sets)
    hardware = sorted({r['hardware']['device_name'] for methods in
                       sets.values() for runs in methods.values()
                       for r in runs if r.get('hardware')})
    return (reach_table(sets, probe) + '\n'
            + ''.join(f'- {v}\n' for v in verdicts) + ('\n' if verdicts
                                                       else '')
            + 'Test ROC-AUC (%), the mean over the tasks whose test split '
            'holds both classes, mean ± std over the seeds all the columns '
            'of the set ran; each seed is its '
            'own scaffold split (80/10/10), the same for every method of '
            'that seed. Every run scored test once, at the end, with the '
            'checkpoint of the best validation ROC-AUC. Fine-tuned and '
            'from-scratch runs share the config, norm, learning rate and '
            'steps (the fine-tuned column: the first backbone, the bundled '
            'one first, whose runs do on every set); '
            'chemprop ran its default model' + _chemprop_schedule(sets) +
            ' (`benchmarks/plans/final_reach_*.yaml`). CPU figures: '
            + (', '.join(hardware) or 'unknown hardware')
            + ', one thread per run, two runs side by side.\n')


def reach_summary(sets: dict[str, dict[str, list[dict]]]) -> str:
    r"""One line for README.md: on which sets fine-tuning helped, on which
    it did not (paired, 5% level)."""
    backbone = comparable_backbone(sets)
    helped, hurt, same = [], [], []
    for name, methods in sets.items():
        c = _tuned_minus_scratch(_columns(methods, backbone))
        if c is None:
            continue
        text = f'{name} {100 * c.mean:+.2f}'
        (helped if c.p_value < 0.05 and c.mean > 0 else
         hurt if c.p_value < 0.05 else same).append(text)
    parts = []
    if helped:
        parts.append('significantly better on ' + ', '.join(helped))
    if hurt:
        parts.append('significantly worse on ' + ', '.join(hurt))
    if same:
        parts.append('no significant difference on ' + ', '.join(same))
    other = OTHER_BACKBONE.match(backbone)
    tuned = (f'Fine-tuned (the {other.group(1)}-step backbone)' if other
             else 'Fine-tuned')
    return (f'{tuned} − scratch, test ROC-AUC points paired by seed: '
            + '; '.join(parts or ['no paired runs yet']) + '.\n')


def ablation_table(rows: dict[str, list[dict]]) -> str:
    r"""The ablation's markdown table: per row (a label and its runs),
    the seeds, validation and test MAE (mean ± std) and CPU minutes per
    run."""
    lines = ['| ZINC-subset from SMILES, SepNorm | seeds | validation MAE | '
             'test MAE | CPU min per run |', '| --- | --- | ---: | ---: | ---: |']
    for label, runs in rows.items():
        seeds = ','.join(str(r['seed']) for r in runs)
        lines.append(
            f"| {label} | {seeds or '—'} "
            f"| {mean_std([r['best_val_metric'] for r in runs])} "
            f"| {mean_std([r['test_metric_at_best_val'] for r in runs])} "
            f"| {_minutes(runs)} |")
    return '\n'.join(lines) + '\n'


@dataclass
class Ablation:
    r"""The test-MAE gain of the backbone of both objectives over training
    from scratch (:obj:`gain`), the part the masked-atoms-only backbone
    keeps (:obj:`kept`; both on the means) and Welch's test of masked-only
    against both objectives."""
    gain: float
    kept: float
    comparison: Comparison


def ablation(scratch: Sequence[dict], both: Sequence[dict],
             masked: Sequence[dict]) -> Optional[Ablation]:
    r"""The ablation's numbers; :obj:`None` until each group has two
    runs."""
    if min(len(scratch), len(both), len(masked)) < 2:
        return None

    def test(runs):
        return [r['test_metric_at_best_val'] for r in runs]

    base = statistics.fmean(test(scratch))
    return Ablation(base - statistics.fmean(test(both)),
                    base - statistics.fmean(test(masked)),
                    welch(test(masked), test(both)))


def _significance(c: Comparison) -> str:
    r"""Masked atoms only against both objectives, at the 5% level (a
    larger MAE is worse)."""
    if c.p_value >= 0.05:
        return 'not significantly different from both objectives'
    return (f"significantly {'worse' if c.difference > 0 else 'better'} "
            f"than both objectives")


def ablation_verdict(scratch: Sequence[dict], both: Sequence[dict],
                     masked: Sequence[dict]) -> str:
    r"""The ablation in a sentence for ``benchmarks/README.md``: the share
    of the gain kept without the descriptor targets and Welch's test
    against both objectives; an empty string until each group has two
    runs."""
    a = ablation(scratch, both, masked)
    if a is None:
        return ''
    c = a.comparison
    return (f"Without the descriptor targets the backbone keeps "
            f"{100 * a.kept / a.gain:.0f}% of the test-MAE gain over "
            f"training from scratch ({a.kept:.3f} of {a.gain:.3f}); masked "
            f"atoms only − both objectives = {c.difference:+.3f} test MAE "
            f"(95% CI [{c.low:+.3f}, {c.high:+.3f}], Welch "
            f"{p_text(c.p_value)}): {_significance(c)} at the 5% level.\n")


def ablation_summary(scratch: Sequence[dict], both: Sequence[dict],
                     masked: Sequence[dict]) -> str:
    r"""The ablation in a line for README.md (empty until it has run)."""
    a = ablation(scratch, both, masked)
    if a is None:
        return ''
    return (f"ZINC-subset, backbone pretrained on masked atoms alone: "
            f"{100 * a.kept / a.gain:.0f}% of the test-MAE gain of both "
            f"objectives kept; {_significance(a.comparison)} (Welch "
            f"{p_text(a.comparison.p_value)}).\n")
