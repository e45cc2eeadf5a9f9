#!/usr/bin/env python
r"""How much of a downstream task the pretrained backbone's descriptor
targets already explain: a linear probe of each MoleculeNet classification
task from the 39 RDKit descriptors alone
(:data:`graphormer_sepnorm.pretraining.descriptors.DESCRIPTOR_NAMES`, the
backbone's graph-level pretraining targets).

For each set and seed, the molecules and the split are exactly those the
set's training config gets (``configs/cpu/moleculenet/<set>.yaml``, with
``data.split_seed: SEED``: its CSV, scaffold split and ``data.max_nodes``;
rows that do not become a graph are left out), read through
``benchmarks/baselines/csv_molecules.py`` as the chemprop baseline reads
them. Per task, on its labelled molecules:
descriptors standardized with the training split's statistics (a
descriptor RDKit cannot compute is set to the training median), an
L2-regularized logistic regression per inverse strength C in
:data:`C_GRID`, **C chosen on validation ROC-AUC**, then test ROC-AUC read
once at that C. A task whose train, validation or test molecules hold one
class only is not scored (the count is reported). A set's score is the mean
over its scored tasks, as MoleculeNet reports it.

    python benchmarks/descriptor_probe.py \
        --output benchmarks/results/descriptor_probe
"""
import argparse
import datetime
import json
import statistics
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from benchmarks.analysis.formatting import mean_std  # noqa: E402

#: The MoleculeNet classification sets, by name: their training config
#: (relative to the repository; its data.path names the CSV).
SETS = {name: f'configs/cpu/moleculenet/{name}.yaml'
        for name in ('clintox', 'sider', 'tox21')}
#: Inverse regularization strengths tried; validation picks one per task.
C_GRID = (0.01, 0.1, 1.0, 10.0)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--sets', nargs='+', default=list(SETS),
                        choices=list(SETS),
                        help='MoleculeNet sets (default: %(default)s)')
    parser.add_argument('--seeds', nargs='+', type=int, default=[0, 1, 2],
                        help='scaffold split seeds (default: %(default)s)')
    parser.add_argument('--root', type=Path,
                        help='folder caching the featurized CSVs (default: '
                        'a temporary folder)')
    parser.add_argument('--output', type=Path,
                        help='folder for probe.json and probe.md (default: '
                        'print only)')
    return parser.parse_args(argv)


def descriptor_matrix(smiles: list[str]) -> np.ndarray:
    r"""The 39 descriptors of each molecule, NaN where RDKit cannot compute
    one."""
    from rdkit import Chem

    from graphormer_sepnorm.pretraining.descriptors import descriptor_values
    return np.stack([descriptor_values(Chem.MolFromSmiles(s))
                     for s in smiles])


def probe_task(features: np.ndarray, labels: np.ndarray,
               parts: list[np.ndarray]) -> dict | None:
    r"""Validation-chosen logistic regression of one task (labels NaN where
    missing); :obj:`None` if a split lacks a class."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    split = []
    for indices in parts:
        indices = indices[~np.isnan(labels[indices])]
        if len(np.unique(labels[indices])) < 2:
            return None
        split.append(indices)
    train, val, test = split
    fill = np.nanmedian(features[train], axis=0)
    filled = np.where(np.isnan(features), fill, features)
    mean, std = filled[train].mean(axis=0), filled[train].std(axis=0)
    scaled = (filled - mean) / np.where(std > 0, std, 1.0)
    best = None
    for c in C_GRID:
        model = LogisticRegression(C=c, max_iter=5000)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # convergence at tiny C
            model.fit(scaled[train], labels[train])
        val_auc = roc_auc_score(labels[val],
                                model.predict_proba(scaled[val])[:, 1])
        if best is None or val_auc > best[0]:
            best = (val_auc, c, model)
    val_auc, c, model = best
    test_auc = roc_auc_score(labels[test],
                             model.predict_proba(scaled[test])[:, 1])
    return {'val_rocauc': float(val_auc), 'test_rocauc': float(test_auc),
            'C': c}


def probe_set(config: str, seed: int, root: Optional[Path] = None) -> dict:
    r"""Every task of the set of the CSV training config :obj:`config` on
    split seed :obj:`seed`, and their means (:obj:`root`: ``data.root``,
    where the featurized CSV is cached; :obj:`None`: the config's)."""
    from benchmarks.baselines.csv_molecules import load_csv_molecules
    molecules = load_csv_molecules(config, seed,
                                   None if root is None else str(root))
    names = list(molecules.splits)
    smiles = [s for name in names for s in molecules.splits[name].smiles]
    labels = np.concatenate([molecules.splits[name].targets
                             for name in names])
    sizes = [len(molecules.splits[name].smiles) for name in names]
    parts = np.split(np.arange(len(smiles)), np.cumsum(sizes)[:-1])
    features = descriptor_matrix(smiles)
    scores = {task: probe_task(features, labels[:, k], parts)
              for k, task in enumerate(molecules.target_names)}
    scored = [s for s in scores.values() if s is not None]
    return {'seed': seed, 'molecules': len(smiles), 'split_sizes': sizes,
            'tasks': len(scores), 'tasks_scored': len(scored),
            'val_rocauc': statistics.fmean(s['val_rocauc'] for s in scored),
            'test_rocauc': statistics.fmean(s['test_rocauc']
                                            for s in scored),
            'per_task': scores}


def markdown(results: dict) -> str:
    lines = ['| set | seeds | molecules | tasks scored | validation ROC-AUC '
             '(%), mean ± std | test ROC-AUC (%), mean ± std |',
             '| --- | --- | ---: | --- | --- | --- |']
    for name, runs in results['sets'].items():
        def spread(key):
            return mean_std([r[key] for r in runs], scale=100, digits=2)
        scored = sorted({f"{r['tasks_scored']} of {r['tasks']}"
                         for r in runs})
        lines.append(
            f"| {name} | {','.join(str(r['seed']) for r in runs)} "
            f"| {runs[0]['molecules']:,} | {' / '.join(scored)} "
            f"| {spread('val_rocauc')} | {spread('test_rocauc')} |")
    return '\n'.join(lines) + '\n'


def main(argv=None) -> int:
    args = parse_args(argv)
    from graphormer_sepnorm.training.config import ConfigError
    results = {'date': str(datetime.date.today()), 'c_grid': list(C_GRID),
               'seeds': args.seeds, 'sets': {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = args.root or Path(tmp)
        for name in args.sets:
            results['sets'][name] = []
            for seed in args.seeds:
                try:
                    result = probe_set(SETS[name], seed, root)
                except (ConfigError, FileNotFoundError) as error:
                    print(f'error: {name}: {error}', file=sys.stderr)
                    return 2
                results['sets'][name].append(result)
                print(f"{name} seed {seed}: test ROC-AUC "
                      f"{100 * result['test_rocauc']:.2f} over "
                      f"{result['tasks_scored']} tasks", flush=True)
    text = markdown(results)
    print(text)
    if args.output is not None:
        args.output.mkdir(parents=True, exist_ok=True)
        (args.output / 'probe.json').write_text(
            json.dumps(results, indent=1) + '\n')
        (args.output / 'probe.md').write_text(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
