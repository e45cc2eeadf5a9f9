r"""Finished training runs, read from their run directories and grouped by
dataset and model.

Every run directory holds ``results.json`` and ``metrics.csv`` (written by
``scripts/train.py``, or by ``benchmarks/chemprop_baseline.py`` for the
chemprop rows). A :class:`Group` holds the seeds of one model on one
dataset; :func:`best_so_far` and :func:`minutes_to_reach` read a run's
validation history against its CPU time (time to accuracy).
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
    model: str  # 'sep', 'share', a Graphormer variant's model_label, or
    #             another model family's name (model_family)
    metric: str
    runs: list[dict] = field(default_factory=list)

    @property
    def label(self) -> str:
        return NORM_LABELS.get(self.model, self.model)

    @property
    def is_graphormer(self) -> bool:
        return not self.runs or not self.runs[0].get('model_family')

    @property
    def is_sepnorm(self) -> bool:
        r"""A Graphormer with SepNorm (the recipe's, or a variant of it)."""
        return self.is_graphormer and bool(self.runs) and \
            self.runs[0].get('norm') == 'sep'

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
    r"""Groups runs by (dataset, model): Graphormer runs by their norm (or
    their :obj:`model_label`, for variants such as training from SMILES),
    others by :obj:`model_family`; SepNorm, ShareNorm, then the others. A
    run's :obj:`benchmark` (set by the protocol for a run on a CSV of a
    benchmark's molecules) names its dataset."""
    groups: dict[tuple[str, str], Group] = {}
    for run in runs:
        model = run.get('model_family') or run.get('model_label') or \
            run['norm']
        dataset = run.get('benchmark') or run['dataset']
        key = (dataset, model)
        if key not in groups:
            groups[key] = Group(dataset, model, run['metric'])
        groups[key].runs.append(run)
    for group in groups.values():
        group.runs.sort(key=lambda r: r['seed'])
    return sorted(groups.values(),
                  key=lambda g: (g.dataset, _ORDER.get(g.model, 2), g.model))


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
