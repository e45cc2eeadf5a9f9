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
``data.split_seed={seed}``: a new scaffold split per seed). A trial may
name its own seeds instead of the plan's (e.g. the chosen row, run for
more seeds than the search)::

    trials:
      lr1e-3: {overrides: [optim.lr=1e-3], seeds: [0, 1, 2, 3, 4, 5]}

``keep_test_predictions: false``, in the plan or in a trial's mapping (which
wins), leaves the runs' ``test_predictions.csv`` in their run directories
only, out of git (e.g. a search on per-seed splits, whose per-molecule
predictions no table reads, while the chosen row's trial keeps them with
``keep_test_predictions: true``); it is true by default.

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

When the plans are done and the final runs of ``benchmarks/results/runs``
make the bundled models' rule (``benchmarks/analysis/bundle_choice.py``)
choose other runs than the package ships, it prints the
``scripts/bundle_model.py`` command over those runs' weights: bundle them
before the machine goes, since the weights are in no commit.

Example::

    python benchmarks/cpu_protocol.py benchmarks/plans/tune_zinc_subset_lr.yaml
    python benchmarks/cpu_protocol.py PLAN --dry-run     # list the runs
    python benchmarks/cpu_protocol.py PLAN --trials NAME # one trial only
    python benchmarks/cpu_protocol.py PLAN --seeds 2 3   # two seeds only
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.protocol.artefacts import (commit_of,  # noqa: E402
                                           keep_artefacts)
from benchmarks.protocol.plan import (PlanError, Run,  # noqa: E402
                                      check_selection_exists, load_plan)

#: Environment of every run: one thread per run, runs side by side.
ONE_THREAD = {'OMP_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1',
              'NUMBA_NUM_THREADS': '1'}


def run_environment() -> dict[str, str]:
    r"""The environment of a plan's runs: one thread each, no data root
    from the caller, and this checkout first on ``PYTHONPATH``, so that
    ``scripts/train.py`` imports the package of the commit that is recorded
    rather than a copy installed from elsewhere (an editable install of
    another worktree, say)."""
    env = dict(os.environ, **ONE_THREAD)
    env.pop('GRAPHORMER_DATA_ROOT', None)
    env['PYTHONPATH'] = os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get('PYTHONPATH')])])
    return env


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


def run_plan(plan_path: Path, plan_runs: list[Run], jobs: int,
             dry_run: bool = False,
             trials: list[str] | None = None,
             seeds: list[int] | None = None) -> int:
    r"""Runs the unfinished runs of the plan :obj:`plan_path` (its
    :func:`load_plan` runs :obj:`plan_runs`), :obj:`jobs` at a time;
    returns the number of runs that failed. With :obj:`trials` or
    :obj:`seeds`, only the runs of those trials and seeds (a plan that holds
    none is skipped): two processes can then share a plan's runs out."""
    runs = [run for run in plan_runs
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
    commit = commit_of(todo, plan_path, REPO)
    prepare_datasets(todo)
    env = run_environment()
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


def bundle_reminders(destination: Path, workdir: Path,
                     shipped: Callable[[str], set] | None = None
                     ) -> list[str]:
    r"""What must be bundled before this machine goes: for every bundled
    model whose rule (:mod:`benchmarks.analysis.bundle_choice`) now chooses
    a family of other runs than it ships, a message with the
    ``scripts/bundle_model.py`` command over that family's weights, which
    stay on this machine only (below :obj:`workdir`, out of git). The rule
    reads the final runs of :data:`~.bundle_choice.RUNS_ROOT`, so another
    :obj:`destination` has none. :obj:`shipped` (bundled name -> its
    members) defaults to the installed member files."""
    from benchmarks.analysis.bundle_choice import (RUNS_ROOT,
                                                   shipped_members,
                                                   stale_bundles)
    from benchmarks.analysis.runs import group_runs, load_runs
    if destination != Path(RUNS_ROOT) or not destination.is_dir():
        return []
    groups = group_runs(load_runs(destination))
    messages = []
    for choice in stale_bundles(groups, shipped or shipped_members):
        kept = [Path(run['path']).relative_to(destination)
                for run in sorted(choice.chosen.runs,
                                  key=lambda run: run['seed'])]
        weights = ' '.join(str(workdir / destination.name / k)
                           for k in kept)
        results = ' '.join(f'--results {destination / k / "results.json"}'
                           for k in kept)
        messages.append(
            f"bundle now: the rule chooses {choice.chosen.label} for "
            f"--model {choice.name}, not the runs it ships, and their "
            f"weights are only below {workdir} on this machine, not in git "
            f"(scripts/README.md, \"Bundle your own\"):\n"
            f"  python scripts/bundle_model.py {choice.name} "
            f"{weights} {results}")
    return messages


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
        # Every plan read once, up front: a bad plan or selection stops
        # before any run starts.
        plans = [(plan, load_plan(plan, args.workdir)) for plan in args.plans]
        check_selection_exists([run for _, runs in plans for run in runs],
                               args.trials, args.seeds)
        for plan, runs in plans:
            failed += run_plan(plan, runs, args.jobs, args.dry_run,
                               args.trials, args.seeds)
        if not args.dry_run:
            for destination in dict.fromkeys(run.destination for _, runs
                                             in plans for run in runs):
                for message in bundle_reminders(destination, args.workdir):
                    print(message, flush=True)
    except PlanError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
