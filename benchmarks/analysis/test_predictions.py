r"""Per-molecule test predictions of finished runs (``test_predictions.csv``,
written by ``scripts/train.py`` and by the chemprop baseline): scores on
exactly the molecules every model predicted, and seed ensembles whose spread
serves as a per-molecule uncertainty.

Why the common molecules: chemprop cannot read 7 MolHIV SMILES that OGB's
(older) RDKit featurized, 2 of them in the test split, so its test ROC-AUC
covers 4,111 molecules and ours 4,113. Comparing the two models is only
fair on the 4,111 both predicted.
"""
from __future__ import annotations

import csv
import functools
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import torch

from graphormer_sepnorm.data.text_files import open_text

__all__ = ['read_test_predictions', 'common_molecules', 'score_on',
           'EnsembleReport', 'seed_ensemble']


def read_test_predictions(run: dict) -> Optional[dict[int, tuple[float,
                                                                 float]]]:
    r"""The test predictions of a run loaded by
    :func:`~benchmarks.analysis.runs.load_runs`, as
    :obj:`{id: (target, prediction)}`, or :obj:`None` when the run kept
    none (its :obj:`results.json` names no :obj:`test_predictions` file, or
    the file is missing), plain or compressed (kept runs: ``.csv.bz2``,
    older ones ``.csv.gz``). Only
    single-target files are read (columns :obj:`id`, :obj:`target`,
    :obj:`prediction`)."""
    name = run.get('test_predictions')
    if not name or not run.get('path'):
        return None
    path = Path(run['path']) / name
    if not path.is_file():
        return None
    stat = path.stat()
    return dict(_read(str(path.resolve()), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=256)
def _read(path: str, mtime_ns: int, size: int
          ) -> dict[int, tuple[float, float]]:
    r"""One test-predictions file, read once per version of it: the tables,
    comparisons and ensembles ask for the same committed files many times
    (the file's modification time and size key a rewritten one afresh)."""
    # Kept runs hold them compressed (benchmarks/protocol/artefacts.py).
    with open_text(path) as f:
        return {int(row['id']): (float(row['target']),
                                 float(row['prediction']))
                for row in csv.DictReader(f)}


def common_molecules(runs: Sequence[dict]) -> Optional[list[int]]:
    r"""The ids of the test molecules that every run predicted, sorted;
    :obj:`None` if a run kept no test predictions, or if the runs' ids do
    not name the same molecules (an id whose label differs between runs,
    e.g. a run on a CSV numbers its molecules by row)."""
    common, labels = None, {}
    for run in runs:
        predictions = read_test_predictions(run)
        if predictions is None:
            return None
        for i, (target, _) in predictions.items():
            if abs(labels.setdefault(i, target) - target) > 1e-6 * max(
                    1.0, abs(target)):
                return None
        common = set(predictions) if common is None else common & set(
            predictions)
    return sorted(common or ())


def score_on(run: dict, ids: Sequence[int]) -> float:
    r"""The run's test metric (its :obj:`metric`: MAE or ROC-AUC, computed
    by :func:`~graphormer_sepnorm.training.metrics.compute_metric`) on the
    molecules :obj:`ids` only."""
    from graphormer_sepnorm.training.metrics import compute_metric
    predictions = read_test_predictions(run)
    if predictions is None:
        raise ValueError(f"run {run.get('path')} kept no test predictions")
    targets, values = zip(*(predictions[i] for i in ids))
    return compute_metric(run['metric'], torch.tensor(values,
                                                      dtype=torch.double),
                          torch.tensor(targets, dtype=torch.double))


@dataclass
class EnsembleReport:
    r"""A seed ensemble on the test split: its members' mean prediction per
    molecule, scored, and how well the members' spread (the population
    standard deviation, as ``scripts/predict.py`` reports it) ranks the
    molecules by their error."""
    members: int
    molecules: int
    metric: float
    member_metrics: list[float]
    spearman: float
    spearman_p: float
    error_by_std_quartile: list[float]

    @property
    def mean_member_metric(self) -> float:
        return statistics.fmean(self.member_metrics)


def seed_ensemble(runs: Sequence[dict],
                  ids: Optional[Sequence[int]] = None
                  ) -> Optional[EnsembleReport]:
    r"""The ensemble of :obj:`runs` (the seeds of one model on one dataset)
    on the test molecules :obj:`ids` (default: those every run predicted).

    Members are averaged as ``scripts/predict.py --checkpoint A B ...``
    averages them: values in the units of the target, probabilities for
    binary tasks. The error of a molecule is the absolute difference
    between the mean and the label (for binary tasks: between the mean
    probability and the 0/1 label).

    Returns:
        An :class:`EnsembleReport`, or :obj:`None` with fewer than two runs
        or without test predictions.
    """
    from scipy import stats

    from graphormer_sepnorm.training.metrics import compute_metric
    if len(runs) < 2:
        return None
    ids = common_molecules(runs) if ids is None else list(ids)
    if not ids:
        return None
    tables = [read_test_predictions(run) for run in runs]
    targets = torch.tensor([tables[0][i][0] for i in ids], dtype=torch.double)
    values = torch.tensor([[table[i][1] for i in ids] for table in tables],
                          dtype=torch.double)
    mean, spread = values.mean(dim=0), values.std(dim=0, correction=0)
    error = (mean - targets).abs()
    rho, p_value = stats.spearmanr(spread.numpy(), error.numpy())
    quartiles = torch.tensor_split(error[spread.argsort(stable=True)], 4)
    metric = runs[0]['metric']
    return EnsembleReport(
        members=len(runs), molecules=len(ids),
        metric=compute_metric(metric, mean, targets),
        member_metrics=[score_on(run, ids) for run in runs],
        spearman=float(rho), spearman_p=float(p_value),
        error_by_std_quartile=[float(q.mean()) for q in quartiles])
