#!/usr/bin/env python
r"""Run a plan of training runs on the CPU, a few side by side with one
thread each, resumably, and keep each finished run's artefacts.

A plan is a YAML file (see ``benchmarks/plans/``)::

    destination: benchmarks/results/tuning/zinc_subset  # artefacts, in git
    configs: [configs/cpu/zinc_subset_sepnorm.yaml,
              configs/cpu/zinc_subset_sharenorm.yaml]
    seeds: [0, 1]
    common: [train.eval_test=false]     # overrides of every run
    trials:                             # name -> overrides of that trial
      lr5e-4: [optim.lr=5e-4]
      lr1e-3: [optim.lr=1e-3]
    benchmark: zinc_subset              # optional, for runs on a CSV of a
    variant: from SMILES                # benchmark's molecules

In any override or argument, ``{seed}`` stands for the run's seed (e.g.
``data.split_seed={seed}``: a new scaffold split per seed).

A plan of chemprop baseline runs names the arguments of
``benchmarks/chemprop_baseline.py`` instead of ``configs`` (trials then
list extra arguments; the run folder is
``<destination>/<trial>/chemprop_seed<seed>/``)::

    destination: benchmarks/results/runs
    chemprop: {dataset: molhiv, source: ../shared/data/ogbg_molhiv,
               train_molecules: 2000}
    seeds: [0, 1, 2, 3]
    trials:
      molhiv_train2000: []
      molhiv_train2000_rdkit_2d: [--molecule-featurizers, rdkit_2d]

(a list value under ``chemprop``, e.g. ``molecule_featurizers: [rdkit_2d,
morgan_count]``, becomes one option with several values).

Every (trial, seed, config) is one run of ``scripts/train.py``; the runs of
one trial and seed start next to each other, so SepNorm and ShareNorm share
the machine under the same conditions. A run writes its run directory under
``--workdir`` (checkpoints and weights stay there, out of git); when it
finishes, its ``config.yaml``, ``metrics.csv``, ``results.json`` and (when
the test split was evaluated) ``test_predictions.csv`` are copied to
``<destination>/<trial>/<norm>_seed<seed>/``, and ``results.json`` gets a
``protocol`` entry (plan, trial, overrides, code commit): enough to
regenerate every table and figure, seed ensembles included, from the
repository alone. The run's ``model.safetensors`` stays at
``<workdir>/<destination's name>/<trial>/<norm>_seed<seed>/``, the same
path below ``<workdir>/<destination's name>`` as the kept copy below the
destination (``scripts/graph_token_analysis.py --runs DESTINATION
--weights WORKDIR/NAME`` reads it there). ``benchmark`` and ``variant`` go into each
``results.json``, so that ``scripts/results_table.py`` lists runs trained
on a CSV of a benchmark's molecules (``scripts/make_split_csv.py``) under
that benchmark, as their own rows (one per norm). Running the plan again skips finished runs and continues
interrupted ones with ``--resume``, so a stopped session loses at most one
checkpoint interval per run. Paths are given relative to the repository
(run from its root), so no absolute path of this machine enters an
artefact; the copy is refused if one does.

A final plan, one whose runs read the test split (``train.eval_test``, or
any chemprop plan), refuses to start from a dirty tree: uncommitted
changes (untracked files included) to the code, configs, scripts,
benchmark scripts or plans (:data:`CODE_PATHS`) would make its recorded
commit a lie. Commit or stash them first. A tuning plan, which never reads
test, may run from a dirty tree; its commit is then recorded with a
``+dirty`` suffix.

Example::

    python benchmarks/cpu_protocol.py benchmarks/plans/tune_zinc_subset_lr.yaml
    python benchmarks/cpu_protocol.py PLAN --dry-run     # list the runs
    python benchmarks/cpu_protocol.py PLAN --trials NAME # one trial only
    python benchmarks/cpu_protocol.py PLAN --seeds 2 3   # two seeds only
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import yaml

REPO = Path(__file__).resolve().parents[1]
#: Files of a finished run that are kept: never the checkpoints nor the
#: weights (the committed tree must stay small enough to send to a GPU
#: machine), nor ``curves.png`` (a plot of ``metrics.csv``).
ARTEFACTS = ('config.yaml', 'metrics.csv', 'results.json',
             'test_predictions.csv')
#: Kept gzipped (a third of the size), with results.json naming the
#: compressed file: the per-molecule predictions are most of the tree.
COMPRESSED = ('test_predictions.csv',)
#: Plan keys copied into each kept results.json (how the results group it).
RESULT_LABELS = ('benchmark', 'variant')
#: What a run's results depend on: a final plan needs them committed
#: (benchmarks/results, where the plans write, is left out).
CODE_PATHS = ('graphormer_sepnorm', 'configs', 'scripts', 'benchmarks/*.py',
              'benchmarks/plans')
#: Environment of every run: one thread per run, runs side by side.
ONE_THREAD = {'OMP_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1',
              'NUMBA_NUM_THREADS': '1'}


class PlanError(ValueError):
    r"""The plan file is invalid; the message names the key."""


@dataclass
class Run:
    r"""One training run of a plan."""
    trial: str
    seed: int
    config: str
    overrides: list[str]
    trial_overrides: list[str]
    norm: str
    destination: Path
    workdir: Path
    labels: dict = field(default_factory=dict)
    chemprop_args: list[str] = field(default_factory=list)
    process: Optional[subprocess.Popen] = field(default=None, repr=False)
    started: float = 0.0

    @property
    def name(self) -> str:
        return f'{self.norm}_seed{self.seed}'

    @property
    def run_dir(self) -> Path:
        if self.chemprop_args:
            # chemprop_baseline.py names its run directory itself, inside
            # the output folder it is given.
            return next((self.workdir / self.trial / self.name).glob(
                '*_chemprop*_seed*'), self.workdir / self.trial / self.name)
        return self.workdir / self.trial / self.name

    @property
    def kept_dir(self) -> Path:
        return self.destination / self.trial / self.name

    @property
    def reads_test(self) -> bool:
        r"""Whether the run scores the test split (a final run): every
        chemprop run does; ours with :obj:`train.eval_test`."""
        if self.chemprop_args:
            return True
        sys.path.insert(0, str(REPO))
        from graphormer_sepnorm.training.config import load_config
        return bool(load_config(self.config, self.overrides +
                                self.trial_overrides, env={},
                                check_paths=False)['train']['eval_test'])

    @property
    def finished(self) -> bool:
        return (self.kept_dir / 'results.json').is_file()

    def command(self) -> list[str]:
        if self.chemprop_args:
            args = [sys.executable, 'benchmarks/chemprop_baseline.py',
                    *self.chemprop_args, *self.trial_overrides, '--seed',
                    str(self.seed), '--output-dir',
                    str(self.workdir / self.trial / self.name),
                    '--no-progress-bar']
        else:
            args = [sys.executable, 'scripts/train.py', '--config',
                    self.config, *self.overrides, *self.trial_overrides,
                    f'seed={self.seed}', f'output_dir={self.run_dir.parent}',
                    f'run_name={self.name}', 'train.progress_bar=false']
        if (self.run_dir / 'checkpoints' / 'last.ckpt').is_file():
            args.append('--resume')
        return args


def load_plan(path: Path, workdir: Path) -> list[Run]:
    r"""The runs of a plan file, in execution order (trial, seed, config)."""
    if not path.is_file():
        raise PlanError(f"plan {path} does not exist")
    plan = yaml.safe_load(path.read_text()) or {}
    missing = {'destination', 'seeds', 'trials'} - set(plan)
    if missing:
        raise PlanError(f"plan {path} lacks {', '.join(sorted(missing))}")
    if ('configs' in plan) == ('chemprop' in plan):
        raise PlanError(f"plan {path} needs either 'configs' (our runs) or "
                        f"'chemprop' (the baseline's arguments), not both")
    unknown = set(plan) - {'destination', 'configs', 'chemprop', 'seeds',
                           'trials', 'common', *RESULT_LABELS}
    if unknown:
        raise PlanError(f"plan {path}: unknown keys {sorted(unknown)}")
    if not isinstance(plan['trials'], dict) or not plan['trials']:
        raise PlanError(f"plan {path}: 'trials' must map trial names to "
                        f"lists of overrides")
    destination = Path(plan['destination'])
    if destination.is_absolute():
        raise PlanError(f"plan {path}: 'destination' must be relative to the "
                        f"repository, got {destination}")
    if 'chemprop' in plan:
        return _chemprop_runs(path, plan, destination, workdir)
    norms = {}
    for config in plan['configs']:
        if not Path(config).is_file():
            raise PlanError(f"plan {path}: config {config} does not exist")
        norms[config] = _norm_of(config)
    runs = []
    for trial, trial_overrides in plan['trials'].items():
        for seed in plan['seeds']:
            for config in plan['configs']:
                runs.append(Run(trial=str(trial), seed=int(seed),
                                config=config,
                                overrides=with_seed(plan.get('common'), seed),
                                trial_overrides=with_seed(trial_overrides,
                                                          seed),
                                norm=norms[config], destination=destination,
                                workdir=workdir / destination.name,
                                labels={key: str(plan[key]) for key in
                                        RESULT_LABELS if key in plan}))
    return runs


def _chemprop_runs(path: Path, plan: dict, destination: Path,
                   workdir: Path) -> list[Run]:
    r"""The runs of a chemprop plan: its :obj:`chemprop` mapping as
    ``--key value`` arguments of ``benchmarks/chemprop_baseline.py`` (a
    list value as ``--key value1 value2 ...``)."""
    options = plan['chemprop']
    if not isinstance(options, dict) or not options:
        raise PlanError(f"plan {path}: 'chemprop' must map the arguments of "
                        f"benchmarks/chemprop_baseline.py to values, e.g. "
                        f"{{dataset: molhiv, source: ../shared/data/"
                        f"ogbg_molhiv}}")
    if plan.get('common'):
        raise PlanError(f"plan {path}: a chemprop plan takes no 'common' "
                        f"(put arguments under 'chemprop')")
    arguments = [item for key, value in options.items()
                 for item in (f"--{str(key).replace('_', '-')}",
                              *map(str, value if isinstance(value, list)
                                   else [value]))]
    return [Run(trial=str(trial), seed=int(seed), config='', overrides=[],
                trial_overrides=with_seed(trial_arguments, seed),
                norm='chemprop', destination=destination,
                workdir=workdir / destination.name,
                labels={key: str(plan[key]) for key in RESULT_LABELS
                        if key in plan},
                chemprop_args=with_seed(arguments, seed))
            for trial, trial_arguments in plan['trials'].items()
            for seed in plan['seeds']]


def with_seed(items, seed: int) -> list[str]:
    r"""The overrides or arguments :obj:`items` (a list or :obj:`None`) as
    strings, with ``{seed}`` replaced by :obj:`seed`."""
    return [str(item).replace('{seed}', str(seed)) for item in items or []]


def _norm_of(config: str) -> str:
    sys.path.insert(0, str(REPO))
    from graphormer_sepnorm.training.config import load_config
    return load_config(config, env={}, check_paths=False)['model']['norm']


def dirty_paths(repo: Path = REPO) -> list[str]:
    r"""The files of :data:`CODE_PATHS` that differ from the commit in
    :obj:`repo`, untracked ones included (as :command:`git status` names
    them)."""
    status = subprocess.run(['git', 'status', '--porcelain',
                             '--untracked-files=all', '--', *CODE_PATHS],
                            capture_output=True, text=True, cwd=repo)
    return [line[3:] for line in status.stdout.splitlines() if line.strip()]


def commit_of(runs: list[Run], plan_path: Path, repo: Path = REPO) -> str:
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
    result = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'],
                            capture_output=True, text=True, cwd=repo)
    commit = result.stdout.strip() or 'unknown'
    return commit + ('+dirty' if dirty else '')


def keep_artefacts(run: Run, plan_path: Path, commit: str) -> None:
    r"""Copies a finished run's artefacts to its destination, adds the
    protocol entry to results.json, and refuses absolute paths."""
    run.kept_dir.mkdir(parents=True, exist_ok=True)
    for name in ARTEFACTS:
        source = run.run_dir / name
        if source.is_file() and name in COMPRESSED:
            gzip_copy(source, run.kept_dir / f'{name}.gz')
        elif source.is_file():
            shutil.copy2(source, run.kept_dir / name)
    results_path = run.kept_dir / 'results.json'
    results = json.loads(results_path.read_text())
    for key, name in list(results.items()):
        if name in COMPRESSED and (run.kept_dir / f'{name}.gz').is_file():
            results[key] = f'{name}.gz'

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


def gzip_copy(source: Path, target: Path) -> None:
    r""":obj:`source` gzipped into :obj:`target`, the same bytes for the
    same file (no name or time in the header)."""
    with open(source, 'rb') as f, open(target, 'wb') as out:
        out.write(gzip.compress(f.read(), compresslevel=9, mtime=0))


def _absolute_paths(value) -> list[str]:
    if isinstance(value, dict):
        return [p for v in value.values() for p in _absolute_paths(v)]
    if isinstance(value, list):
        return [p for v in value for p in _absolute_paths(v)]
    return [value] if isinstance(value, str) and os.path.isabs(value) else []


def prepare_datasets(runs: list[Run]) -> None:
    r"""Processes every dataset of the plan once, before runs start side by
    side: two runs processing the same data root at once would race."""
    from graphormer_sepnorm.data.datamodule import GraphDataModule
    from graphormer_sepnorm.training.config import ConfigError, load_config
    prepared = set()
    for run in runs:
        if run.chemprop_args:
            continue  # the baseline reads SMILES, nothing to process
        try:
            config = load_config(run.config,
                                 run.overrides + run.trial_overrides, env={})
        except ConfigError as error:
            raise PlanError(f"run {run.trial}/{run.name}: {error} (the "
                            f"plan's comment says what it needs first)"
                            ) from None
        key = (config['data']['name'], config['data']['root'])
        if key not in prepared:
            GraphDataModule(config['data']).prepare_data()
            prepared.add(key)


def check_selection_exists(plans: list[Path], workdir: Path,
                           trials: list[str] | None = None,
                           seeds: list[int] | None = None) -> None:
    r"""Raises :class:`PlanError` naming each of :obj:`trials` and
    :obj:`seeds` that none of :obj:`plans` holds (a typo would otherwise
    run nothing)."""
    runs = [run for plan in plans for run in load_plan(plan, workdir)]
    for kind, wanted, held in (
            ('trials', trials, {run.trial for run in runs}),
            ('seeds', seeds, {run.seed for run in runs})):
        unknown = [item for item in wanted or [] if item not in held]
        if unknown:
            raise PlanError(
                f"no plan holds the {kind} {', '.join(map(str, unknown))}; "
                f"their {kind}: {', '.join(map(str, sorted(held)))}")


def run_plan(plan_path: Path, jobs: int, workdir: Path,
             dry_run: bool = False,
             trials: list[str] | None = None,
             seeds: list[int] | None = None) -> int:
    r"""Runs the unfinished runs of a plan, :obj:`jobs` at a time; returns
    the number of runs that failed. With :obj:`trials` or :obj:`seeds`,
    only the runs of those trials and seeds (a plan that holds none is
    skipped): two processes can then share a plan's runs out."""
    runs = [run for run in load_plan(plan_path, workdir)
            if (trials is None or run.trial in trials)
            and (seeds is None or run.seed in seeds)]
    if not runs:
        print(f"{plan_path}: no run of the trials and seeds asked for; "
              f"skipped", flush=True)
        return 0
    todo = [run for run in runs if not run.finished]
    print(f"{plan_path}: {len(runs)} runs, {len(runs) - len(todo)} finished, "
          f"{len(todo)} to run, {jobs} at a time", flush=True)
    if dry_run:
        for run in todo:
            print(' '.join(run.command()[1:]))
        return 0
    commit = commit_of(todo, plan_path)
    prepare_datasets(todo)
    env = dict(os.environ, **ONE_THREAD)
    env.pop('GRAPHORMER_DATA_ROOT', None)
    active: list[Run] = []
    failed = 0
    while todo or active:
        while todo and len(active) < jobs:
            run = todo.pop(0)
            run.run_dir.parent.mkdir(parents=True, exist_ok=True)
            log = open(run.run_dir.parent / f'{run.name}.log', 'a')
            command = run.command()
            print(f"start  {run.trial}/{run.name}"
                  f"{' (resume)' if '--resume' in command else ''}",
                  flush=True)
            run.process = subprocess.Popen(command, cwd=REPO, env=env,
                                           stdout=log, stderr=log)
            run.started = time.time()
            active.append(run)
        time.sleep(5)
        for run in [r for r in active if r.process.poll() is not None]:
            active.remove(run)
            minutes = (time.time() - run.started) / 60
            if run.process.returncode == 0:
                keep_artefacts(run, plan_path, commit)
                print(f"done   {run.trial}/{run.name} in {minutes:.1f} min "
                      f"-> {run.kept_dir}", flush=True)
            else:
                failed += 1
                print(f"FAILED {run.trial}/{run.name} (exit "
                      f"{run.process.returncode}); see "
                      f"{run.run_dir.parent / (run.name + '.log')}",
                      flush=True)
    return failed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        epilog=__doc__.split('\n\n', 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('plans', nargs='+', type=Path,
                        help='plan YAML files, run one after the other')
    parser.add_argument('--jobs', type=int, default=2,
                        help='runs side by side, one thread each (default: '
                        '%(default)s, one per core of the build machine)')
    parser.add_argument('--workdir', type=Path, default=Path('runs/cpu'),
                        help='where run directories and checkpoints live '
                        '(relative to the repository; default: %(default)s)')
    parser.add_argument('--dry-run', action='store_true',
                        help='list the runs still to do and exit')
    parser.add_argument('--trials', nargs='+', metavar='TRIAL',
                        help='run only these trials of the plans (e.g. the '
                        'cheap one of a plan first); a name that no plan '
                        'holds is an error')
    parser.add_argument('--seeds', nargs='+', type=int, metavar='SEED',
                        help='run only these seeds (e.g. two processes '
                        'sharing out one plan\'s seeds)')
    args = parser.parse_args(argv)
    if Path.cwd().resolve() != REPO:
        print(f"error: run from the repository root ({REPO}), so that every "
              f"path in the artefacts is relative", file=sys.stderr)
        return 2
    if args.workdir.is_absolute():
        print("error: --workdir must be relative to the repository",
              file=sys.stderr)
        return 2
    failed = 0
    try:
        check_selection_exists(args.plans, args.workdir, args.trials,
                               args.seeds)
        for plan in args.plans:
            failed += run_plan(plan, args.jobs, args.workdir, args.dry_run,
                               args.trials, args.seeds)
    except PlanError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
