r"""What a finished run leaves in git, and the commit it is recorded with:
:func:`keep_artefacts` copies a run's artefacts to the plan's destination
(refusing absolute paths), :func:`commit_of` names the code's commit
(refusing a dirty tree when a run reads test)."""
from __future__ import annotations

import bz2
import json
import os
import shutil
import subprocess
from pathlib import Path

import yaml

from .plan import PlanError, Run

#: A run's per-molecule test predictions (left in the run directory when
#: its plan or trial says ``keep_test_predictions: false``).
TEST_PREDICTIONS = 'test_predictions.csv'
#: Files of a finished run that are kept: never the checkpoints nor the
#: weights (the committed tree must stay small enough to send to a GPU
#: machine), nor ``curves.png`` (a plot of ``metrics.csv``).
ARTEFACTS = ('config.yaml', 'metrics.csv', 'results.json', TEST_PREDICTIONS)
#: Kept compressed with bzip2 (31% of the size over the committed runs;
#: gzip -9 left 22% more), with results.json naming the compressed file:
#: the per-molecule predictions are most of the tree.
COMPRESSED = (TEST_PREDICTIONS,)
#: The compressed file's ending.
COMPRESSED_SUFFIX = '.bz2'
#: What a run's results depend on: a final plan needs them committed
#: (benchmarks/results, where the plans write, is left out).
CODE_PATHS = ('graphormer_sepnorm', 'configs', 'scripts', 'benchmarks/*.py',
              'benchmarks/plans')


def dirty_paths(repo: Path) -> list[str]:
    r"""The files of :data:`CODE_PATHS` that differ from the commit in
    :obj:`repo`, untracked ones included (as :command:`git status` names
    them)."""
    status = subprocess.run(['git', 'status', '--porcelain',
                             '--untracked-files=all', '--', *CODE_PATHS],
                            capture_output=True, text=True, cwd=repo)
    return [line[3:] for line in status.stdout.splitlines() if line.strip()]


def commit_of(runs: list[Run], plan_path: Path, repo: Path) -> str:
    r"""The commit the runs are recorded with: :obj:`repo`'s :obj:`HEAD`,
    with ``+dirty`` when :func:`dirty_paths` names files; raises
    :class:`PlanError` for a dirty tree when a run reads test."""
    dirty = dirty_paths(repo)
    if dirty and any(run.reads_test for run in runs):
        shown = ', '.join(dirty[:3]) + (f' and {len(dirty) - 3} more'
                                        if len(dirty) > 3 else '')
        raise PlanError(f"plan {plan_path} reads the test split, but the tree "
                        f"has uncommitted changes ({shown}); commit or stash "
                        f"them, so that the recorded commit is the code that "
                        f"ran")
    return head_commit(repo) + ('+dirty' if dirty else '')


def head_commit(repo: Path) -> str:
    r""":obj:`repo`'s :obj:`HEAD`, abbreviated (``'unknown'`` outside
    git)."""
    result = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'],
                            capture_output=True, text=True, cwd=repo)
    return result.stdout.strip() or 'unknown'


def keep_artefacts(run: Run, plan_path: Path, commit: str) -> None:
    r"""Copies a finished run's artefacts to its destination, adds the
    protocol entry to results.json, and refuses absolute paths."""
    run.kept_dir.mkdir(parents=True, exist_ok=True)
    left_out = () if run.keep_test_predictions else (TEST_PREDICTIONS,)
    for name in (name for name in ARTEFACTS if name not in left_out):
        source = run.run_dir / name
        if source.is_file() and name in COMPRESSED:
            compressed_copy(source,
                            run.kept_dir / f'{name}{COMPRESSED_SUFFIX}')
        elif source.is_file():
            shutil.copy2(source, run.kept_dir / name)
    results_path = run.kept_dir / 'results.json'
    results = json.loads(results_path.read_text())
    for key, name in list(results.items()):
        if name in left_out:
            # Left in the run directory only: no kept file to name.
            del results[key]
            continue
        compressed = f'{name}{COMPRESSED_SUFFIX}'
        if name in COMPRESSED and (run.kept_dir / compressed).is_file():
            results[key] = compressed

    results['protocol'] = {'plan': plan_path.as_posix(), 'trial': run.trial,
                           'overrides': run.trial_overrides,
                           'config': run.config or None, 'commit': commit}
    if run.chemprop_args:
        results['protocol']['chemprop_arguments'] = run.chemprop_args
    results.update(run.labels)
    results_path.write_text(json.dumps(results, indent=2) + '\n')
    config = yaml.safe_load((run.kept_dir / 'config.yaml').read_text())
    absolute = _absolute_paths(config) + _absolute_paths(results)
    if absolute:
        raise RuntimeError(f"{run.kept_dir} holds absolute paths {absolute}; "
                           f"run from the repository root with relative "
                           f"paths")


def compressed_copy(source: Path, target: Path) -> None:
    r""":obj:`source` compressed with bzip2 into :obj:`target`, the same
    bytes for the same file (bzip2 records no name or time)."""
    with open(source, 'rb') as f, open(target, 'wb') as out:
        out.write(bz2.compress(f.read(), compresslevel=9))


def _absolute_paths(value) -> list[str]:
    if isinstance(value, dict):
        return [p for v in value.values() for p in _absolute_paths(v)]
    if isinstance(value, list):
        return [p for v in value for p in _absolute_paths(v)]
    return [value] if isinstance(value, str) and os.path.isabs(value) else []
