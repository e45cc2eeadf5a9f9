r"""Best from SMILES, the rows: per set (:data:`SETS`) the runs of each
method, the norm each Graphormer row shows, its difference from
chemprop's default, and the goal's counts (:data:`GOAL`); the package
docstring (:mod:`benchmarks.analysis.from_smiles`) says how."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Optional, Sequence

from graphormer_sepnorm.models import NORM_NAMES
from ..budget import SideBySide, side_by_side
from ..comparisons import Comparison, contrast, welch
from ..methods import FINE_TUNING_RECIPE, OTHER_BACKBONE, PLAIN, method_of
from ..reach import Paired, paired
from ..runs import Group, dataset_of, shared_seeds

#: The sets, by the benchmark their runs record (:func:`dataset_of`), with
#: their titles, in table order.
SETS = {'molhiv': 'MolHIV', 'clintox': 'ClinTox', 'sider': 'SIDER',
        'tox21': 'Tox21', 'zinc_subset': 'ZINC-subset from SMILES',
        'molhiv_train2000': 'MolHIV, 2,000 training molecules'}

#: Shorter names of the sets for the goal and summary lines, where they
#: differ from :data:`SETS`.
SHORT = {'zinc_subset': 'ZINC-subset', 'molhiv_train2000': 'MolHIV 2,000'}

#: The sets whose seeds each have their own scaffold split, shared by every
#: method of that seed (``benchmarks/plans/final_reach_*.yaml``).
PER_SEED_SPLITS = frozenset({'clintox', 'sider', 'tox21'})

#: Datasets whose Graphormer runs read the dataset's own graphs (ZINC's
#: atom and bond types), not SMILES: left out of these sets.
OWN_GRAPHS = frozenset({'zinc', 'zinc_subset'})

#: The reference row, the method every difference is taken against.
REFERENCE = 'chemprop'

#: Row titles of the plain methods (:data:`~.methods.PLAIN`).
LABELS = {'scratch': 'Graphormer from scratch',
          'fine-tuned': 'Graphormer fine-tuned from the backbone',
          'chemprop': 'chemprop D-MPNN'}

#: The methods that always have a row with molecule features ("not run"
#: until one has runs).
FEATURE_ROWS = ('fine-tuned', 'chemprop')

#: The goal of the comparison, as the goal lines state it.
GOAL = ("beat chemprop's default on every set, significantly (Welch "
        "p < 0.05) on at least three")

#: How many sets the goal asks to be beaten significantly.
GOAL_SIGNIFICANT = 3


def reads_smiles(run: dict) -> bool:
    r"""Whether :obj:`run`'s model read the molecules' SMILES (chemprop
    always; a Graphormer unless its dataset is in :data:`OWN_GRAPHS`)."""
    return bool(run.get('model_family')) or run['dataset'] not in OWN_GRAPHS


def plain_of(base: str) -> Optional[str]:
    r"""The plain method (:data:`~benchmarks.analysis.methods.PLAIN`) that
    base method :obj:`base` shows as: itself, or :obj:`"fine-tuned"` for
    one fine-tuned from a backbone of other steps than the bundled one or
    with a recipe of its own (layer-wise learning-rate decay, a weight
    average, a blended forest); :obj:`None` for a method these tables leave out (*e.g.* the
    masked-atoms-only backbone's)."""
    if base in PLAIN:
        return base
    return ('fine-tuned' if OTHER_BACKBONE.match(base)
            or FINE_TUNING_RECIPE.match(base) else None)


def label_of(method: str) -> str:
    r"""A method's row title: :data:`LABELS` of its base method (naming
    the backbone's steps where it is not the bundled one's, and the
    fine-tuning recipe where it has one of its own), with " (default)"
    for chemprop without molecule features, then " + NAME" per molecule
    feature."""
    base, *features = method.split(' + ')
    other, recipe = OTHER_BACKBONE.match(base), FINE_TUNING_RECIPE.match(base)
    if other:
        title = f"Graphormer fine-tuned from the {other.group(1)}-step backbone"
    elif recipe:
        backbone = (f"Graphormer fine-tuned from the {recipe.group('steps')}"
                    f"-step backbone" if recipe.group('steps')
                    else LABELS['fine-tuned'])
        title = ', '.join([backbone, *(
            template.format(recipe.group(key)) for key, template in (
                ('decay', 'layer-wise learning-rate decay {}'),
                ('ema', 'weight EMA {}'),
                ('forest', 'blended with a {}-tree forest'))
            if recipe.group(key))])
    else:
        title = LABELS[base]
    title += '' if features or base != REFERENCE else ' (default)'
    return ' + '.join([title, *features])


@dataclass
class Row:
    r"""One method of one set: the runs of its chosen family (norm),
    sorted by seed, and how it compares with chemprop's default."""
    method: str
    runs: list[dict] = field(default_factory=list)
    #: The chosen norm (:obj:`None` for chemprop, or without runs).
    norm: Optional[str] = None
    #: Mean best validation metric per norm, the chosen first.
    validation: dict[str, float] = field(default_factory=dict)
    #: The runs of every norm, by norm (:attr:`runs`: the chosen one's).
    runs_by_norm: dict[Optional[str], list[dict]] = field(
        default_factory=dict)
    #: Our row minus the reference (Welch), when both have two runs.
    against: Optional[Comparison] = None
    #: The test molecules :attr:`against` scored on (:obj:`None`: each
    #: run's own).
    common: Optional[int] = None
    #: The difference paired by seed (:data:`PER_SEED_SPLITS` only).
    by_seed: Optional[Paired] = None

    @property
    def label(self) -> str:
        return label_of(self.method)

    @property
    def is_ours(self) -> bool:
        return not self.method.startswith(REFERENCE)

    @property
    def test(self) -> list[float]:
        return [r['test_metric_at_best_val'] for r in self.runs]

    @property
    def minutes(self) -> float:
        r"""Mean CPU minutes per run (a run's wall-clock time where it
        recorded no CPU time).

        Raises:
            statistics.StatisticsError: The row has no runs.
        """
        return statistics.fmean((r.get('cpu_time_s') or r['wall_time_s'])
                                / 60 for r in self.runs)


@dataclass
class SetResult:
    r"""The rows of one set; :attr:`best` is ours of the best mean
    validation (two runs or more), the row the goal reads."""
    key: str
    title: str
    metric: Optional[str]
    rows: list[Row]
    #: Runs of this set in no row, by method: how many.
    left_out: dict[str, int] = field(default_factory=dict)
    #: :attr:`best` and the reference replayed side by side on one machine
    #: (:func:`attach_measured`), where measured.
    measured: Optional[SideBySide] = None

    @property
    def short(self) -> str:
        return SHORT.get(self.key, self.title)

    @property
    def higher_is_better(self) -> bool:
        return self.metric == 'rocauc'

    @property
    def reference(self) -> Optional[Row]:
        return next((r for r in self.rows if r.method == REFERENCE
                     and r.runs), None)

    @property
    def candidates(self) -> list[Row]:
        r"""Our rows that may be :attr:`best`: those compared with the
        reference (two runs or more)."""
        return [r for r in self.rows if r.is_ours and r.against is not None]

    @property
    def choice_seeds(self) -> list[int]:
        r"""The seeds :attr:`best` is chosen on: those every candidate ran
        (:func:`shared_seeds`)."""
        return sorted(shared_seeds(r.runs for r in self.candidates))

    @property
    def choice_validation(self) -> dict[str, float]:
        r"""Each candidate's mean validation on :attr:`choice_seeds`, by
        method, in row order."""
        seeds = set(self.choice_seeds)
        return {r.method: mean_validation(r.runs, seeds)
                for r in self.candidates}

    @property
    def best(self) -> Optional[Row]:
        r"""Our row of the best mean validation on :attr:`choice_seeds`, so
        that a row run for more seeds than the search (the chosen one,
        confirmed) is weighed on the same seeds, and on a set of a split
        per seed, the same splits, as the others."""
        ours = self.candidates
        if not ours:
            return None
        sign = 1 if self.higher_is_better else -1
        validation = self.choice_validation
        return max(ours, key=lambda r: sign * validation[r.method])

    def is_better(self, row: Row) -> bool:
        r"""Whether :obj:`row`'s mean test metric beats the reference's."""
        d = row.against.difference
        return d > 0 if self.higher_is_better else d < 0

    def minutes_ratio(self, row: Row) -> Optional[float]:
        r""":obj:`row`'s mean CPU minutes per run (:attr:`Row.minutes`) over
        the reference's: issue 45's same budget where at most 1.
        :obj:`None` for the reference itself, a row without runs, or a set
        without reference runs."""
        reference = self.reference
        if reference is None or row is reference or not row.runs:
            return None
        return row.minutes / reference.minutes

    def budget_ratio(self) -> Optional[float]:
        r"""Issue 45's same budget for :attr:`best`: the side-by-side ratio
        (:attr:`measured`) where measured, else the committed runs'
        (:meth:`minutes_ratio`); :obj:`None` without a best row."""
        if self.best is None:
            return None
        if self.measured is not None:
            return self.measured.ratio
        return self.minutes_ratio(self.best)


def mean_validation(runs: Sequence[dict], seeds: set[int]) -> float:
    r"""The mean best validation metric of the :obj:`runs` of :obj:`seeds`.

    Raises:
        statistics.StatisticsError: No run of those seeds.
    """
    return statistics.fmean(r['best_val_metric'] for r in runs
                            if r['seed'] in seeds)


def choose_family(method: str, runs: Sequence[dict],
                  higher_is_better: bool) -> Row:
    r"""The row of :obj:`method`: among its runs' norms (one family each),
    the one of the best mean best-validation metric on the seeds they all
    ran (:func:`shared_seeds`).

    Raises:
        ValueError: Two protocol variants of one norm in one method (the
            row could not say which it shows), or two runs of one seed in
            one family (a run read twice, *e.g.* from nested folders).
    """
    families: dict[Optional[str], list[dict]] = {}
    variants: dict[Optional[str], set] = {}
    seen: dict[tuple, str] = {}
    for run in runs:
        norm = None if run.get('model_family') else run['norm']
        key = (norm, run['seed'])
        if key in seen:
            raise ValueError(
                f"{method}: two runs of seed {run['seed']} "
                f"({seen[key]}, {run.get('path', '?')}); read each run "
                f"folder once")
        seen[key] = run.get('path', '?')
        families.setdefault(norm, []).append(run)
        variants.setdefault(norm, set()).add(run.get('variant'))
    for norm, names in variants.items():
        if len(names) > 1:
            raise ValueError(
                f"{method}: {NORM_NAMES.get(norm, norm)} runs of "
                f"{len(names)} variants "
                f"({', '.join(sorted(map(str, names)))}); one row shows "
                f"one: give the others their own benchmark")
    seeds = shared_seeds(families.values())
    means = {norm: mean_validation(family, seeds)
             for norm, family in families.items()}
    order = sorted(means, key=lambda n: (-means[n] if higher_is_better
                                         else means[n], str(n)))
    return Row(method, sorted(families[order[0]], key=lambda r: r['seed']),
               order[0], {n: means[n] for n in order}, families)


def _order(method: str) -> tuple:
    base, *features = method.split(' + ')
    # Another backbone's rows after the bundled backbone's (with or without
    # a recipe of their own).
    recipe = FINE_TUNING_RECIPE.match(base)
    other = bool(OTHER_BACKBONE.match(base) or
                 (recipe and recipe.group('steps')))
    return (PLAIN.index(plain_of(base)), other, base not in PLAIN,
            bool(features), method)


def set_result(key: str, methods: dict[str, list[dict]]) -> SetResult:
    r"""The rows of set :obj:`key` from its runs by method."""
    metrics = {r['metric'] for runs in methods.values() for r in runs}
    if len(metrics) > 1:
        raise ValueError(f"{SETS[key]}: runs scored by {sorted(metrics)}; "
                         f"one set has one metric")
    metric = next(iter(metrics), None)
    shown = {m: runs for m, runs in methods.items()
             if plain_of(m.split(' + ')[0])}
    names = set(shown) | set(PLAIN)
    for base in FEATURE_ROWS:
        if not any(m.startswith(base + ' + ') for m in names):
            names.add(f'{base} + molecule features')
    rows = [choose_family(m, shown[m], metric == 'rocauc') if m in shown
            else Row(m) for m in sorted(names, key=_order)]
    result = SetResult(key, SETS[key], metric, rows,
                       {m: len(runs) for m, runs in methods.items()
                        if m not in shown})
    reference = result.reference
    for row in rows:
        if row is reference or reference is None or min(
                len(row.runs), len(reference.runs)) < 2:
            continue
        if key in PER_SEED_SPLITS:
            row.against = welch(row.test, reference.test)
            row.by_seed = paired(row.runs, reference.runs)
        else:
            c = contrast(Group(key, row.method, metric, row.runs),
                         Group(key, REFERENCE, metric, reference.runs))
            row.against, row.common = c.comparison, c.molecules
    return result


def from_smiles_sets(runs: Sequence[dict]) -> list[SetResult]:
    r"""Every set of :data:`SETS` (in that order) from :obj:`runs`: the runs
    of its benchmark that read SMILES (:func:`reads_smiles`), by
    :func:`~benchmarks.analysis.methods.method_of`; other runs are not
    read.

    Args:
        runs (Sequence[dict]): Runs as
            :func:`~benchmarks.analysis.runs.load_runs` reads them (the
            final runs and the reach runs together).
    """
    by_set: dict[str, dict[str, list[dict]]] = {key: {} for key in SETS}
    for run in runs:
        key = dataset_of(run)
        if key in SETS and reads_smiles(run):
            by_set[key].setdefault(method_of(run), []).append(run)
    return [set_result(key, methods) for key, methods in by_set.items()]


def goal_counts(sets: Sequence[SetResult]) -> tuple[list[str], list[str]]:
    r"""The short names of the sets where our best row (:attr:`SetResult.best`)
    beats chemprop's default on the mean test metric, and of those where
    it does so significantly (Welch p < 0.05)."""
    better = [s.short for s in sets if s.best and s.is_better(s.best)]
    significant = [s.short for s in sets if s.best and s.is_better(s.best)
                   and s.best.against.p_value < 0.05]
    return better, significant


def goal_met(sets: Sequence[SetResult]) -> bool:
    r"""Whether :data:`GOAL` is met on :obj:`sets`."""
    better, significant = goal_counts(sets)
    return (len(better) == len(sets)
            and len(significant) >= GOAL_SIGNIFICANT)


def budget_counts(sets: Sequence[SetResult]
                  ) -> tuple[dict[str, float], dict[str, float]]:
    r"""Issue 45's same budget for our best row of each set
    (:attr:`SetResult.best`): its CPU minutes per run over chemprop's
    default's (:meth:`SetResult.budget_ratio`: side by side where measured),
    by the set's short name, for the sets where it is within them (at most
    1) and for those where it is over. Sets without a best row are in
    neither."""
    within: dict[str, float] = {}
    over: dict[str, float] = {}
    for s in sets:
        ratio = s.budget_ratio()
        if ratio is not None:
            (within if ratio <= 1 else over)[s.short] = ratio
    return within, over


def attach_measured(sets: Sequence[SetResult], pairs: Sequence) -> None:
    r"""Sets each set's :attr:`SetResult.measured` from the side-by-side
    :obj:`pairs` (:func:`~benchmarks.analysis.budget.load_pairs`) that
    replay its best row and chemprop's default as they are today; pairs of
    a row the goal no longer reads are left out."""
    rows = {s.key: (s.best.label, s.reference.label) for s in sets
            if s.best is not None and s.reference is not None}
    measured = side_by_side(pairs, rows)
    for s in sets:
        s.measured = measured.get(s.key)
