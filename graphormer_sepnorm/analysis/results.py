r"""Aggregate finished training runs into the results tables.

Every run directory holds ``results.json`` and ``metrics.csv`` (written by
``scripts/train.py``, or by ``benchmarks/chemprop_baseline.py`` for the
chemprop rows). Runs are grouped by dataset and model; per group the test
metric at the best validation epoch is averaged over seeds, and SepNorm is
compared with ShareNorm by the difference of means with a 95% confidence
interval and Welch's t-test.
"""
from __future__ import annotations

import csv
import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence, Union

PathLike = Union[str, Path]

#: Graphormer -> Graphormer + SepNorm, from Chen et al. (NeurIPS 2023): GPU
#: runs of the full recipe (ZINC: 400k steps).
PAPER = {
    ('zinc', 'sep'): 0.052,
    ('zinc', 'share'): 0.069,
    ('zinc_subset', 'sep'): 0.144,
    ('zinc_subset', 'share'): 0.164,
    ('molhiv', 'sep'): 0.7564,
    ('molhiv', 'share'): 0.7336,
}

#: Row labels of our two Graphormer variants; other model families are
#: labelled by their results' ``model_family``.
NORM_LABELS = {'sep': 'Graphormer + SepNorm', 'share': 'Graphormer (ShareNorm)'}
_ORDER = {'sep': 0, 'share': 1}


@dataclass
class Group:
    r"""The runs of one model on one dataset (one row of the table)."""
    dataset: str
    model: str  # 'sep', 'share', or another model family's name
    metric: str
    runs: list[dict] = field(default_factory=list)

    @property
    def label(self) -> str:
        return NORM_LABELS.get(self.model, self.model)

    @property
    def is_graphormer(self) -> bool:
        return self.model in NORM_LABELS

    @property
    def higher_is_better(self) -> bool:
        return self.metric == 'rocauc'

    @property
    def seeds(self) -> list[int]:
        return [r['seed'] for r in self.runs]

    @property
    def test(self) -> list[float]:
        return [r['test_metric_at_best_val'] for r in self.runs]

    @property
    def best_val(self) -> list[float]:
        return [r['best_val_metric'] for r in self.runs]

    @property
    def paper(self) -> Optional[float]:
        return PAPER.get((self.dataset, self.model))

    def cpu_minutes(self) -> list[float]:
        r"""CPU minutes per run (wall minutes where a run predates CPU-time
        recording)."""
        return [(r.get('cpu_time_s') or r['wall_time_s']) / 60
                for r in self.runs]


def load_runs(root: PathLike) -> list[dict]:
    r"""Reads every ``results.json`` below :obj:`root` (one per run
    directory), adding the run's per-epoch ``metrics.csv`` rows under
    :obj:`"history"`."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"No run directory {root}; pass the folder "
                                f"that holds the run directories")
    runs = []
    for path in sorted(root.rglob('results.json')):
        with open(path) as f:
            run = json.load(f)
        history_path = path.parent / 'metrics.csv'
        run['history'] = []
        if history_path.exists():
            with open(history_path, newline='') as f:
                run['history'] = list(csv.DictReader(f))
        run['path'] = str(path.parent)
        runs.append(run)
    if not runs:
        raise FileNotFoundError(f"No results.json below {root}")
    return runs


def group_runs(runs: Sequence[dict]) -> list[Group]:
    r"""Groups runs by (dataset, model): Graphormer runs by their norm,
    others by :obj:`model_family`; SepNorm, ShareNorm, then others."""
    groups: dict[tuple[str, str], Group] = {}
    for run in runs:
        model = run.get('model_family') or run['norm']
        key = (run['dataset'], model)
        if key not in groups:
            groups[key] = Group(run['dataset'], model, run['metric'])
        groups[key].runs.append(run)
    for group in groups.values():
        group.runs.sort(key=lambda r: r['seed'])
    return sorted(groups.values(),
                  key=lambda g: (g.dataset, _ORDER.get(g.model, 2), g.model))


# ---------------------------------------------------------------------------
# Statistics


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


def norm_comparisons(groups: Sequence[Group]) -> list[tuple[Group, Group,
                                                            Comparison]]:
    r"""SepNorm against ShareNorm on the test metric, per dataset with at
    least two runs of each."""
    by_key = {(g.dataset, g.model): g for g in groups}
    out = []
    for dataset in sorted({g.dataset for g in groups}):
        sep, share = by_key.get((dataset, 'sep')), by_key.get(
            (dataset, 'share'))
        if sep and share and len(sep.runs) >= 2 and len(share.runs) >= 2:
            out.append((sep, share, welch(sep.test, share.test)))
    return out


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


# ---------------------------------------------------------------------------
# Time to accuracy


def best_so_far(run: dict) -> list[tuple[float, float]]:
    r"""(CPU minutes, best validation metric so far) after each validation
    of a run."""
    key, higher = f"val_{run['metric']}", run['metric'] == 'rocauc'
    points, best = [], None
    for row in run['history']:
        value, clock = row.get(key), row.get('cpu_time_s') or row.get(
            'wall_time_s')
        if value in (None, '') or clock in (None, ''):
            continue
        value = float(value)
        if math.isnan(value):
            continue
        best = value if best is None else (max if higher else min)(best,
                                                                   value)
        points.append((float(clock) / 60, best))
    return points


def minutes_to_reach(run: dict, threshold: float) -> Optional[float]:
    r"""CPU minutes until the run's validation metric first reaches
    :obj:`threshold` (:obj:`None` if it never does)."""
    higher = run['metric'] == 'rocauc'
    for minutes, best in best_so_far(run):
        if (best >= threshold) if higher else (best <= threshold):
            return minutes
    return None


def common_threshold(groups: Sequence[Group]) -> float:
    r"""The validation level every model reaches on average: the weakest
    group's mean best validation metric."""
    means = [statistics.fmean(g.best_val) for g in groups]
    return min(means) if groups[0].higher_is_better else max(means)


# ---------------------------------------------------------------------------
# Markdown


def _format(group: Group) -> tuple[float, int]:
    return (100.0, 2) if group.metric == 'rocauc' else (1.0, 3)


def _metric_name(group: Group) -> str:
    return 'ROC-AUC (%)' if group.metric == 'rocauc' else group.metric.upper()


def results_table(groups: Sequence[Group]) -> str:
    r"""One row per (dataset, model): test metric at the best validation
    epoch (mean ± std over seeds), seeds, best validation, steps and CPU
    time per run, beside the paper's GPU numbers."""
    lines = [
        '| dataset | model | metric | test, mean ± std | seeds (n) | best val '
        '| steps | CPU min per run | paper (GPU, full recipe) |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ]
    for g in groups:
        scale, digits = _format(g)
        paper = ('—' if g.paper is None else f'{g.paper * scale:.{digits}f}')
        steps = sorted({r['steps'] for r in g.runs})
        steps_text = (f'{steps[0]:,}' if len(steps) == 1 else
                      f'{steps[0]:,}-{steps[-1]:,}')
        seeds = ','.join(map(str, g.seeds))
        lines.append(
            f'| {g.dataset} | {g.label} | {_metric_name(g)} '
            f'| {mean_std(g.test, scale, digits)} | {seeds} ({len(g.runs)}) '
            f'| {mean_std(g.best_val, scale, digits)} | {steps_text} '
            f'| {mean_std(g.cpu_minutes(), 1.0, 1)} | {paper} |')
    return '\n'.join(lines) + '\n'


def comparison_table(groups: Sequence[Group]) -> str:
    r"""SepNorm − ShareNorm on the test metric per dataset: difference of
    means, 95% confidence interval, Welch's p-value, and which is better."""
    lines = ['| dataset | metric | SepNorm − ShareNorm | 95% CI | Welch p '
             '| better on average | significant (p < 0.05) |',
             '| --- | --- | --- | --- | --- | --- | --- |']
    for sep, share, c in norm_comparisons(groups):
        scale, digits = _format(sep)
        better = ('SepNorm' if (c.difference > 0) == sep.higher_is_better
                  else 'ShareNorm') if c.difference != 0 else 'tie'
        lines.append(
            f'| {sep.dataset} | {_metric_name(sep)} '
            f'| {c.difference * scale:+.{digits}f} '
            f'| [{c.low * scale:+.{digits}f}, {c.high * scale:+.{digits}f}] '
            f'| {c.p_value:.3f} | {better} '
            f'| {"yes" if c.p_value < 0.05 else "no"} |')
    return '\n'.join(lines) + '\n'


def time_to_accuracy_table(groups: Sequence[Group]) -> str:
    r"""CPU minutes until the validation metric reaches the level that
    every model reaches on average, per dataset and model."""
    lines = ['| dataset | validation threshold | model | CPU minutes to reach '
             '(mean) | runs that reached it |',
             '| --- | --- | --- | --- | --- |']
    for dataset in sorted({g.dataset for g in groups}):
        members = [g for g in groups if g.dataset == dataset]
        threshold = common_threshold(members)
        scale, digits = _format(members[0])
        for g in members:
            reached = [m for m in (minutes_to_reach(r, threshold)
                                   for r in g.runs) if m is not None]
            mean = f'{statistics.fmean(reached):.1f}' if reached else '—'
            lines.append(f'| {dataset} | {_metric_name(g)} '
                         f'{"≥" if g.higher_is_better else "≤"} '
                         f'{threshold * scale:.{digits}f} | {g.label} '
                         f'| {mean} | {len(reached)} of {len(g.runs)} |')
    return '\n'.join(lines) + '\n'


def verdicts(groups: Sequence[Group]) -> str:
    r"""One plain sentence per dataset: which way SepNorm vs ShareNorm fell
    and whether it is significant."""
    sentences = []
    for sep, share, c in norm_comparisons(groups):
        scale, digits = _format(sep)
        better = (c.difference > 0) == sep.higher_is_better
        sentences.append(
            f"- **{sep.dataset}**: SepNorm's test {_metric_name(sep)} is "
            f"{'better' if better else 'worse'} than ShareNorm's by "
            f"{abs(c.difference) * scale:.{digits}f} on average "
            f"({len(sep.runs)} vs {len(share.runs)} seeds; 95% CI of the "
            f"difference [{c.low * scale:+.{digits}f}, "
            f"{c.high * scale:+.{digits}f}], Welch p = {c.p_value:.3f}): "
            f"{'significant' if c.p_value < 0.05 else 'not significant'} "
            f"at the 5% level.")
    return '\n'.join(sentences) + ('\n' if sentences else '')


def hardware_line(groups: Sequence[Group]) -> str:
    r"""The devices the runs ran on, from their results."""
    devices = sorted({r.get('hardware', {}).get('device_name', '?')
                      if isinstance(r.get('hardware'), dict) else
                      str(r.get('hardware', '?'))
                      for g in groups for r in g.runs})
    return 'Hardware: ' + '; '.join(devices) + '.\n'


def results_markdown(groups: Sequence[Group], figures: Sequence[str] = ()
                     ) -> str:
    r"""The whole generated results block: the table, SepNorm against
    ShareNorm (verdicts and statistics), time to accuracy, the hardware,
    and links to :obj:`figures`."""
    parts = [results_table(groups)]
    if norm_comparisons(groups):
        parts += ['**SepNorm against ShareNorm** (test metric at the best '
                  'validation epoch; difference of means, Welch-Satterthwaite '
                  '95% confidence interval, Welch\'s two-sided t-test):\n',
                  verdicts(groups), comparison_table(groups)]
    parts += ['**Time to accuracy** (CPU minutes of one core until the best '
              'validation metric so far reaches the level that every model '
              'reaches on average, i.e. the weakest model\'s mean best '
              'validation):\n', time_to_accuracy_table(groups),
              hardware_line(groups)]
    if figures:
        parts.append(' '.join(f'![{Path(f).stem}]({f})' for f in figures)
                     + '\n')
    return '\n'.join(parts)


#: Markers of the generated block in the README.
README_BEGIN = '<!-- results-table:begin (generated by scripts/results_table.py; do not edit) -->'
README_END = '<!-- results-table:end -->'


def update_readme(path: PathLike, block: str) -> None:
    r"""Replaces the text between :data:`README_BEGIN` and
    :data:`README_END` in the README at :obj:`path` with :obj:`block`."""
    path = Path(path)
    text = path.read_text()
    if README_BEGIN not in text or README_END not in text:
        raise ValueError(f"{path} has no generated results block; add the "
                         f"lines {README_BEGIN!r} and {README_END!r} where "
                         f"the table belongs")
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    path.write_text(f'{head}{README_BEGIN}\n{block}{README_END}{tail}')
