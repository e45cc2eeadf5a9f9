#!/usr/bin/env python
r"""Issue 45's same budget, measured side by side: our row that best from
SMILES reads on a set (the best mean validation) against chemprop's
default, on this machine, at the same time.

The committed rows ran in different sessions, on processors up to twice
as fast as each other, so their CPU minutes compare only roughly. This
script replays, for each seed asked for, the committed run of each row
from its plan (``results.json``'s ``protocol``; for a run from before
protocols were recorded, the plan in ``benchmarks/plans/`` that writes
its folder): both start together, one thread each, each a fresh run in ``--workdir``, so that they share the
machine under the same conditions. Test is scored once, at the end, by
the best-validation checkpoint, as every plan does today (a run that
scored it at every validation too is replayed scoring it once). Each run's CPU
time is its whole process's, as the operating system counts it (user +
system: start-up, featurization, training, validation and test), the
same way for both; the replay's validation and test metrics are recorded
beside the committed run's, which shows whether the run reproduced.

One JSON file per set and seed goes to ``--output``
(``benchmarks/results/budget/`` by default, read by
``scripts/results_table.py``); the script prints, per set, the median CPU
minutes of each row and their ratio. The code must be committed (a replay
reads test), so that the recorded commit is the code that ran. chemprop
runs in the environment of ``--chemprop-python`` (its ``[baselines]``
extra pins another RDKit than ours).

Example::

    python benchmarks/same_budget.py --sets clintox molhiv_train2000 \
        --seeds 0 1 --chemprop-python /work/venv-chemprop/bin/python
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.analysis.budget import (BUDGET_ROOT, Pair,  # noqa: E402
                                        budget_lines, load_pairs)
from benchmarks.analysis.from_smiles import SETS, from_smiles_sets  # noqa
from benchmarks.analysis.runs import load_runs  # noqa: E402
from benchmarks.cpu_protocol import run_environment  # noqa: E402
from benchmarks.protocol.artefacts import (dirty_paths,  # noqa: E402
                                           head_commit)
from benchmarks.protocol.plan import PlanError, Run, load_plan  # noqa: E402

#: Where the final runs and the reach runs are (best from SMILES reads
#: both).
RUN_ROOTS = ('benchmarks/results/runs', 'benchmarks/results/reach')
#: Today's protocol: test scored once, by the best-validation checkpoint.
TEST_ONCE = 'train.test_at=end'
#: Seconds between looks at whether a replay has ended.
POLL_S = 0.2
#: The plans, where a run from before protocols were recorded is looked
#: up by its folder.
PLANS = REPO / 'benchmarks' / 'plans'


def plan_of(run: dict, plans: Path = PLANS) -> tuple[Path, str]:
    r"""The plan and trial that made the committed :obj:`run`: its
    ``protocol``'s, or for a run from before protocols were recorded, those
    of the plan in :obj:`plans` that writes its folder (the plan's
    destination, trial and run name are the run's path).

    Raises:
        PlanError: No plan writes the run's folder.
    """
    protocol = run.get('protocol')
    if protocol:
        return Path(protocol['plan']), protocol['trial']
    folder = Path(run['path'])
    for path in sorted(plans.glob('*.yaml')):
        for candidate in load_plan(path, Path('unused')):
            if candidate.kept_dir == folder:
                # Relative, as the protocol records a plan.
                return Path(os.path.relpath(path, REPO)), candidate.trial
    raise PlanError(f"{run['path']} recorded no protocol and no plan in "
                    f"{plans} writes its folder, so it cannot be replayed; "
                    f"write down how it ran as a plan")


def replay_of(run: dict, workdir: Path, plans: Path = PLANS
              ) -> tuple[Path, Run]:
    r"""The plan (:func:`plan_of`) and its run that made the committed
    :obj:`run` (same trial, seed and norm), with its run directory below
    :obj:`workdir`, scoring test once at the end.

    Raises:
        PlanError: No plan is known for the run, or its plan no longer
            holds that run.
    """
    plan, trial = plan_of(run, plans)
    norm = 'chemprop' if run.get('model_family') else run['norm']
    for candidate in load_plan(plan, workdir):
        if (candidate.trial, candidate.seed, candidate.norm) == (
                trial, run['seed'], norm):
            if not candidate.chemprop_args:
                candidate.trial_overrides = [
                    o for o in candidate.trial_overrides
                    if not o.startswith('train.test_at=')] + [TEST_ONCE]
                candidate.overrides = [o for o in candidate.overrides
                                       if not o.startswith('train.test_at=')]
            return plan, candidate
    raise PlanError(f"plan {plan} holds no run of trial {trial}, seed "
                    f"{run['seed']}, norm {norm} (the run {run['path']})")


def run_side_by_side(replays: Sequence[Run], pythons: Sequence[str],
                     log_dir: Path) -> list[tuple[int, float, float]]:
    r"""Starts the :obj:`replays` together (fresh run directories, one
    thread each, :obj:`pythons[i]` running replay i) and waits for all;
    returns each one's (exit code, CPU seconds of its process and the
    children it waited for, wall seconds)."""
    env = run_environment()
    log_dir.mkdir(parents=True, exist_ok=True)
    started = []
    for replay, python in zip(replays, pythons):
        shutil.rmtree(replay.workdir / replay.trial / replay.name,
                      ignore_errors=True)
        replay.run_dir.parent.mkdir(parents=True, exist_ok=True)
        command = [python, *replay.command()[1:]]
        log = open(log_dir / f'{replay.trial}_{replay.name}.log', 'w')
        started.append((subprocess.Popen(command, cwd=REPO, env=env,
                                         stdout=log, stderr=subprocess.STDOUT),
                        time.monotonic(), log))
    measured: list = [None] * len(started)
    while None in measured:
        for i, (process, start, log) in enumerate(started):
            if measured[i] is not None:
                continue
            # wait4 reaps the process once it has ended, with its resource
            # usage (children it waited for included): the same count for
            # either program. Polled, so that each wall time ends when its
            # own process does.
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid == 0:
                continue
            process.returncode = os.waitstatus_to_exitcode(status)
            log.close()
            measured[i] = (process.returncode,
                           usage.ru_utime + usage.ru_stime,
                           time.monotonic() - start)
            if process.returncode != 0:
                # A failed replay leaves nothing to measure the other
                # against (e.g. a missing CSV): stop it rather than wait.
                for other, _, _ in started:
                    if other.returncode is None:
                        other.terminate()
        time.sleep(POLL_S)
    return measured


def side(run: dict, plan: Path, replay: Run, cpu_s: float, wall_s: float,
         label: str) -> dict:
    r"""One row's half of a :class:`~benchmarks.analysis.budget.Pair`:
    the replay's measured times and metrics beside the committed run's."""
    results = json.loads((replay.run_dir / 'results.json').read_text())
    return {
        'method': label,
        'committed_run': run['path'],
        'plan': str(plan),
        'trial': replay.trial,
        'cpu_s': cpu_s,
        'wall_s': wall_s,
        'reported_cpu_time_s': results.get('cpu_time_s'),
        'committed_cpu_time_s': run.get('cpu_time_s'),
        'best_val_metric': results['best_val_metric'],
        'committed_best_val_metric': run['best_val_metric'],
        'test_metric': results['test_metric_at_best_val'],
        'committed_test_metric': run['test_metric_at_best_val'],
    }


def committed_sets() -> list:
    r"""Best from SMILES's sets from the committed final and reach runs
    (:data:`RUN_ROOTS`)."""
    return from_smiles_sets([run for root in RUN_ROOTS if Path(root).is_dir()
                             for run in load_runs(root)])


def measure(set_key: str, seeds: Sequence[int], workdir: Path,
            output: Path, chemprop_python: str, code_commit: str,
            sets: Sequence) -> list[Pair]:
    r"""Replays set :obj:`set_key`'s best row and chemprop's default side
    by side for each of :obj:`seeds`, writing each pair to
    ``output/<set>_seed<seed>.json`` with :obj:`code_commit`, the commit
    the replays run; :obj:`sets` are best from SMILES's
    (:func:`committed_sets`). Returns the pairs.

    Raises:
        PlanError: The set has no best row or no chemprop row, a seed has
            no committed run in one of them, or a replay failed.
    """
    from graphormer_sepnorm.training.hardware import cpu_model
    result = next(s for s in sets if s.key == set_key)
    if result.best is None or result.reference is None:
        raise PlanError(f"{set_key}: no row of ours compared with chemprop's "
                        f"default, nothing to measure")
    pairs = []
    for seed in seeds:
        rows = (result.best, result.reference)
        committed = [next((r for r in row.runs if r['seed'] == seed), None)
                     for row in rows]
        if None in committed:
            missing = [row.label for row, run in zip(rows, committed)
                       if run is None]
            raise PlanError(f"{set_key}: seed {seed} has no committed run in "
                            f"{' and '.join(missing)}")
        plans, replays = zip(*(replay_of(run, workdir / set_key)
                               for run in committed))
        print(f"{set_key} seed {seed}: {rows[0].label} beside "
              f"{rows[1].label}", flush=True)
        measured = run_side_by_side(
            replays, [sys.executable, chemprop_python], workdir / set_key)
        for (code, _, _), replay in zip(measured, replays):
            if code != 0:
                raise PlanError(f"{set_key} seed {seed}: the replay of "
                                f"{replay.trial}/{replay.name} failed (exit "
                                f"{code}); see its log in "
                                f"{workdir / set_key}")
        pair = Pair(
            set=set_key, seed=seed,
            processor=cpu_model(), threads=1, commit=code_commit,
            date=datetime.date.today().isoformat(),
            ours=side(committed[0], plans[0], replays[0], *measured[0][1:],
                      rows[0].label),
            reference=side(committed[1], plans[1], replays[1],
                           *measured[1][1:], rows[1].label))
        output.mkdir(parents=True, exist_ok=True)
        path = output / f'{set_key}_seed{seed}.json'
        path.write_text(json.dumps(pair.to_json(), indent=1) + '\n')
        print(f"  ours {pair.ours['cpu_s'] / 60:.1f} CPU min, chemprop "
              f"{pair.reference['cpu_s'] / 60:.1f}: {pair.ratio:.2f}x "
              f"-> {path}", flush=True)
        pairs.append(pair)
    return pairs


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        epilog=__doc__.split('\n\n', 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--sets', nargs='+', choices=list(SETS),
                        required=True, help='the sets to measure')
    parser.add_argument('--seeds', nargs='+', type=int, default=[0],
                        help='the seeds whose committed runs are replayed, '
                        'one pair each, one after the other (default: '
                        '%(default)s)')
    parser.add_argument('--chemprop-python', default=sys.executable,
                        help='the Python of an environment with chemprop '
                        '(pip install ".[baselines]"); default: this one')
    parser.add_argument('--workdir', type=Path, default=Path('runs/budget'),
                        help='where the replays run, out of git (default: '
                        '%(default)s)')
    parser.add_argument('--output', type=Path, default=Path(BUDGET_ROOT),
                        help='where the pairs are written (default: '
                        '%(default)s)')
    args = parser.parse_args(argv)
    if Path.cwd().resolve() != REPO:
        print(f"error: run from the repository root ({REPO})",
              file=sys.stderr)
        return 2
    dirty = dirty_paths(REPO)
    if dirty:
        print(f"error: the replays read test, but the code has uncommitted "
              f"changes ({', '.join(dirty[:3])}); commit them first",
              file=sys.stderr)
        return 2
    code_commit = head_commit(REPO)  # once: a later one is not what ran
    sets = committed_sets()  # once for every set asked for
    try:
        for set_key in args.sets:
            measure(set_key, args.seeds, args.workdir, args.output,
                    args.chemprop_python, code_commit, sets)
    except PlanError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for line in budget_lines(load_pairs(args.output)):
        print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main())
