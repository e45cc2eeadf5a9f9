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
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

from graphormer_sepnorm.training.run_results import TEST_PROTOCOLS

PathLike = Union[str, Path]

#: How a run that predates :obj:`results.json`'s :obj:`test_protocol`
#: scored test, by model family (:obj:`None`: our Graphormer): every
#: committed Graphormer run scored it beside every validation; the chemprop
#: baseline has always scored it once, with the selected model.
OLD_TEST_PROTOCOLS = {None: TEST_PROTOCOLS['every_validation'],
                      'chemprop D-MPNN': TEST_PROTOCOLS['end']}

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

#: The variant suffix of a run fine-tuned from a pretrained backbone
#: (the fine-tuning plans' ``variant``): its from-scratch twin has the same
#: variant without it.
PRETRAINED = 'fine-tuned from its pretrained backbone'

#: :data:`PRETRAINED` with or without a word on the backbone between "its"
#: and "pretrained" (*e.g.* "fine-tuned from its 60,000-step pretrained
#: backbone"), at the end of a variant, with the comma before it.
_PRETRAINED_SUFFIX = re.compile(
    r',?\s*fine-tuned from its (?:\S+ )?pretrained backbone$')

#: The goals set for the pretrained SepNorm rows (mean test metric, at the
#: from-scratch fine-tuning budget): above chemprop's MolHIV ROC-AUC, and
#: chemprop's ZINC-subset MAE.
GOALS = {'molhiv': 0.780, 'zinc_subset': 0.215}

#: Fewest seeds a family needs to be chosen by its mean validation metric
#: (:func:`ranked_by_validation`): a mean over one seed would be one run's
#: best again.
MIN_SEEDS = 2

#: Row labels of our two Graphormer variants; other model families are
#: labelled by their results' ``model_family``.
NORM_LABELS = {'sep': 'Graphormer + SepNorm', 'share': 'Graphormer (ShareNorm)'}
_ORDER = {'sep': 0, 'share': 1}


@dataclass
class Group:
    r"""The runs of one model on one dataset (one row of the table)."""
    dataset: str
    model: str  # see model_of
    metric: str
    runs: list[dict] = field(default_factory=list)

    @property
    def label(self) -> str:
        if self.model in NORM_LABELS or not self.is_graphormer:
            return NORM_LABELS.get(self.model, self.model)
        return f"{NORM_LABELS[self.runs[0]['norm']]}, {self.runs[0]['variant']}"

    @property
    def is_graphormer(self) -> bool:
        return not self.runs or not self.runs[0].get('model_family')

    @property
    def is_sepnorm(self) -> bool:
        r"""A Graphormer with SepNorm (the recipe's, or a variant of it)."""
        return self.is_graphormer and bool(self.runs) and \
            self.runs[0].get('norm') == 'sep'

    @property
    def variant(self) -> Optional[str]:
        r"""The Graphormer runs' protocol variant (:obj:`None`: the
        recipe's row, or another model family)."""
        return self.runs[0].get('variant') if self.is_graphormer and \
            self.runs else None

    @property
    def is_pretrained(self) -> bool:
        r"""Fine-tuned from a pretrained backbone: the variant ends with
        :data:`PRETRAINED`, or with it naming which backbone (*e.g.*
        "fine-tuned from its 60,000-step pretrained backbone")."""
        return bool(_PRETRAINED_SUFFIX.search(self.variant or ''))

    @property
    def scratch_variant(self) -> Optional[str]:
        r"""The variant of this pretrained row's from-scratch twin."""
        return _PRETRAINED_SUFFIX.sub('', self.variant or '') or None

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


def test_protocol_of(run: dict) -> str:
    r"""How :obj:`run` scored its test split: its :obj:`test_protocol`, or
    for a run written before that field, :data:`OLD_TEST_PROTOCOLS`."""
    return (run.get('test_protocol')
            or OLD_TEST_PROTOCOLS[run.get('model_family')])


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


def dataset_of(run: dict) -> str:
    r"""The dataset a run is listed under: its :obj:`benchmark` (set by the
    protocol for a run on a CSV of a benchmark's molecules), else its
    :obj:`dataset`."""
    return run.get('benchmark') or run['dataset']


def model_of(run: dict) -> str:
    r"""The model a run belongs to: another family's :obj:`model_family`
    (chemprop) followed by its :obj:`molecule_featurizers` if any (e.g.
    :obj:`"chemprop D-MPNN + rdkit_2d"`), or the Graphormer's norm
    (:obj:`"sep"`, :obj:`"share"`), followed by the protocol's
    :obj:`variant` if any (e.g. :obj:`"sep, from SMILES, OGB features"`)."""
    if run.get('model_family'):
        return ' + '.join([run['model_family'],
                           *run.get('molecule_featurizers', [])])
    variant = run.get('variant')
    return f"{run['norm']}, {variant}" if variant else run['norm']


def group_runs(runs: Sequence[dict]) -> list[Group]:
    r"""Groups runs by (:func:`dataset_of`, :func:`model_of`): SepNorm,
    ShareNorm, Graphormer variants, then other model families."""
    groups: dict[tuple[str, str], Group] = {}
    for run in runs:
        dataset, model = dataset_of(run), model_of(run)
        key = (dataset, model)
        if key not in groups:
            groups[key] = Group(dataset, model, run['metric'])
        groups[key].runs.append(run)
    for group in groups.values():
        group.runs.sort(key=lambda r: r['seed'])
    return sorted(groups.values(),
                  key=lambda g: (g.dataset, _ORDER.get(
                      g.model, 2 if g.is_graphormer else 3), g.model))


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


def minutes_reached(group: Group, threshold: float) -> list[float]:
    r"""The CPU minutes at which each run of :obj:`group` reached
    :obj:`threshold` (:func:`minutes_to_reach`), for the runs that did."""
    return [m for m in (minutes_to_reach(r, threshold) for r in group.runs)
            if m is not None]


def by_dataset(groups: Sequence[Group]) -> dict[str, list[Group]]:
    r""":obj:`groups` per dataset, datasets sorted, each dataset's groups in
    their order in :obj:`groups`."""
    datasets: dict[str, list[Group]] = {}
    for group in sorted(groups, key=lambda g: g.dataset):
        datasets.setdefault(group.dataset, []).append(group)
    return datasets


def shared_seeds(groups: Iterable[Sequence[dict]]) -> set[int]:
    r"""The seeds that every group of runs in :obj:`groups` ran (the empty
    groups aside); all of their seeds when they share none (nothing else to
    compare on)."""
    seeds = [{r['seed'] for r in runs} for runs in groups if runs]
    shared = set.intersection(*seeds) if seeds else set()
    return shared or set().union(*seeds)


def mean_val(group: Group) -> float:
    r"""The mean best-validation metric of :obj:`group`'s seeds."""
    return statistics.fmean(group.best_val)


def ranked_by_validation(groups: Sequence[Group]) -> list[Group]:
    r"""The Graphormer families among :obj:`groups` (of one dataset) that
    may be chosen on validation (at least :data:`MIN_SEEDS` seeds, every
    one with a validation score), best mean validation first; a tie goes to
    the smaller spread over seeds, then to the label. Test plays no
    part."""
    pool = [g for g in groups if g.is_graphormer and len(g.runs) >= MIN_SEEDS
            and all(v is not None and not math.isnan(v) for v in g.best_val)]

    def key(g: Group) -> tuple:
        sign = -1.0 if g.higher_is_better else 1.0
        return sign * mean_val(g), statistics.stdev(g.best_val), g.label

    return sorted(pool, key=key)


def common_threshold(groups: Sequence[Group]) -> float:
    r"""The validation level every model reaches on average: the weakest
    group's mean best validation metric."""
    means = [statistics.fmean(g.best_val) for g in groups]
    return min(means) if groups[0].higher_is_better else max(means)
