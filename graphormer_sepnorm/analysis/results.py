r"""Aggregate training runs into the results table and validation-curve plot.

Every run directory written by ``scripts/train.py`` holds ``results.json``
and ``metrics.csv``; runs are grouped by dataset and norm, and the test metric
at the best validation epoch is averaged over seeds.
"""
import csv
import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence, Union

PathLike = Union[str, Path]

#: Graphormer -> Graphormer + SepNorm, from Chen et al. (NeurIPS 2023).
PAPER = {
    ('zinc', 'share'): 0.069,
    ('zinc', 'sep'): 0.052,
    ('zinc_subset', 'share'): 0.164,
    ('zinc_subset', 'sep'): 0.144,
    ('molhiv', 'share'): 0.7336,
    ('molhiv', 'sep'): 0.7564,
}


@dataclass
class Summary:
    r"""One (dataset, norm) row of the results table."""
    dataset: str
    norm: str
    metric: str
    seeds: list[int]
    test: list[float]
    best_val: list[float]
    parameters: int
    steps: list[int]
    wall_time_s: list[float]
    device: str

    @property
    def paper(self) -> Optional[float]:
        return PAPER.get((self.dataset, self.norm))


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


def summarize(runs: Sequence[dict]) -> list[Summary]:
    r"""Groups runs by (dataset, norm), in a stable order."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for run in runs:
        groups.setdefault((run['dataset'], run['norm']), []).append(run)
    summaries = []
    for (dataset, norm), members in sorted(groups.items()):
        members.sort(key=lambda r: r['seed'])
        summaries.append(
            Summary(dataset=dataset, norm=norm, metric=members[0]['metric'],
                    seeds=[r['seed'] for r in members],
                    test=[r['test_metric_at_best_val'] for r in members],
                    best_val=[r['best_val_metric'] for r in members],
                    parameters=members[0]['num_parameters'],
                    steps=[r['steps'] for r in members],
                    wall_time_s=[r['wall_time_s'] for r in members],
                    device=members[0].get('hardware', {}).get(
                        'device_name', '?')))
    return summaries


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


def markdown_table(summaries: Sequence[Summary]) -> str:
    r"""The results table, beside the paper's numbers (ROC-AUC in %)."""
    lines = [
        '| dataset | norm | metric | ours: test at best val | paper | seeds '
        '| best val | parameters | steps | wall time per run | device |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ]
    for s in summaries:
        percent = s.metric == 'rocauc'
        scale, digits = (100.0, 2) if percent else (1.0, 3)
        paper = ('n/a' if s.paper is None else
                 f'{s.paper * scale:.{digits}f}')
        minutes = statistics.fmean(s.wall_time_s) / 60
        steps = (str(s.steps[0]) if len(set(s.steps)) == 1 else
                 f'{min(s.steps)}-{max(s.steps)}')
        lines.append(
            f'| {s.dataset} | {s.norm} | {s.metric}{" (%)" if percent else ""}'
            f' | {mean_std(s.test, scale, digits)} | {paper} | {len(s.seeds)}'
            f' | {mean_std(s.best_val, scale, digits)} | {s.parameters:,} '
            f'| {steps} | {minutes:.1f} min | {s.device} |')
    return '\n'.join(lines) + '\n'


def plot_validation_curves(runs: Sequence[dict], path: PathLike) -> Path:
    r"""One panel per dataset: validation metric per epoch of every run,
    coloured by norm."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    datasets = sorted({run['dataset'] for run in runs})
    fig, axes = plt.subplots(1, len(datasets), squeeze=False,
                             figsize=(5 * len(datasets), 3.6))
    colours = {'sep': 'tab:red', 'share': 'tab:blue'}
    for ax, dataset in zip(axes[0], datasets):
        labelled = set()
        members = [run for run in runs if run['dataset'] == dataset]
        for run in members:
            if not run['history']:
                continue
            key = f"val_{run['metric']}"
            points = [(int(row['epoch']), float(row[key]))
                      for row in run['history']
                      if row.get(key) not in (None, '') and not math.isnan(
                          float(row[key]))]
            if not points:
                continue
            label = None if run['norm'] in labelled else run['norm']
            labelled.add(run['norm'])
            ax.plot(*zip(*points), color=colours.get(run['norm'], 'gray'),
                    alpha=0.7, label=label)
        ax.set_title(dataset)
        ax.set_xlabel('epoch')
        ax.set_ylabel(f"validation {members[0]['metric']}")
        if labelled:
            ax.legend(title='norm')
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
