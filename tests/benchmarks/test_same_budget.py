"""benchmarks/same_budget.py: a committed run replayed from its plan (test
scored once at the end), two processes measured side by side with the
operating system's count of their CPU time, and a pair written for each
seed; failures name what to fix."""
import json
import sys
import time
from pathlib import Path

import pytest
import yaml

from benchmark_helpers import REPO, chemprop_plan, relative, script_module

same_budget = script_module('same_budget')
from benchmarks.analysis.budget import load_pairs  # noqa: E402
from benchmarks.analysis.from_smiles import from_smiles_sets  # noqa: E402
from benchmarks.protocol.plan import PlanError, Run  # noqa: E402


@pytest.fixture(autouse=True)
def at_repository_root(monkeypatch):
    monkeypatch.chdir(REPO)  # plans name configs relative to it


def _our_plan(folder):
    plan = folder / 'ours.yaml'
    plan.write_text(yaml.safe_dump({
        'destination': relative(folder / 'kept'),
        'configs': ['configs/cpu/moleculenet/tox21.yaml'],
        'seeds': [0, 1],
        'common': ['train.eval_test=true', 'train.test_at=every_validation',
                   'data.split_seed={seed}'],
        'trials': {'tuned': ['optim.lr=1e-3']}}))
    return plan


def _committed(plan, trial, seed, chemprop=False, **extra):
    run = {'benchmark': 'tox21', 'dataset': 'tox21', 'seed': seed,
           'metric': 'rocauc', 'test_metric_at_best_val': 0.7 + seed / 100,
           'best_val_metric': 0.8 - seed / 100, 'cpu_time_s': 100.0,
           'wall_time_s': 100.0, 'hardware': {'device_name': 'CPU Z'},
           'test_protocol': 'test scored once at the end, by the '
                            'best-validation checkpoint',
           'path': f'kept/{trial}/seed{seed}',
           'protocol': {'plan': relative(plan), 'trial': trial}}
    if chemprop:
        run.update(model_family='chemprop D-MPNN', molecule_featurizers=[])
    else:
        run.update(norm='sep', init_from=None, molecule_features=None)
    run.update(extra)
    return run


def test_a_replay_is_the_plans_run_scoring_test_once(tmp_path):
    plan = _our_plan(tmp_path)
    found, replay = same_budget.replay_of(_committed(plan, 'tuned', 1),
                                          tmp_path / 'work')
    assert found == Path(relative(plan))
    command = replay.command()
    assert command[1:4] == ['scripts/train.py', '--config',
                            'configs/cpu/moleculenet/tox21.yaml']
    # The plan's every-validation test is gone; today's protocol is last.
    assert 'train.test_at=every_validation' not in command
    assert command.count('train.test_at=end') == 1
    assert command.index('optim.lr=1e-3') < command.index('train.test_at=end')
    assert 'data.split_seed=1' in command and 'seed=1' in command
    assert replay.run_dir == tmp_path / 'work' / 'kept' / 'tuned' / \
        'sep_seed1'


def test_a_chemprop_replay_keeps_the_plans_arguments(tmp_path):
    plan = chemprop_plan(tmp_path)
    _, replay = same_budget.replay_of(
        _committed(plan, 'small', 0, chemprop=True), tmp_path / 'work')
    assert replay.command()[1:] == [
        'benchmarks/chemprop_baseline.py', '--dataset', 'molhiv', '--source',
        '../shared/data/x', '--train-molecules', '2000', '--max-epochs', '3',
        '--seed', '0', '--output-dir',
        str(tmp_path / 'work' / 'kept' / 'small' / 'chemprop_seed0'),
        '--no-progress-bar']


def test_a_run_from_before_protocols_is_found_by_its_folder(tmp_path):
    plans = tmp_path / 'plans'
    plans.mkdir()
    plan = chemprop_plan(plans)
    _our_plan(plans)
    kept = relative(plans / 'kept' / 'small' / 'chemprop_seed1')
    run = _committed(plan, 'small', 1, chemprop=True, protocol=None,
                     path=kept)
    found, replay = same_budget.replay_of(run, tmp_path / 'work', plans)
    assert (found, replay.trial, replay.seed) == (Path(relative(plan)),
                                                  'small', 1)
    # The committed plans write down the runs from before protocols.
    committed = _committed(plan, 'x', 2, chemprop=True, protocol=None,
                           path='benchmarks/results/runs/molhiv/'
                                'chemprop_seed2')
    found, replay = same_budget.replay_of(committed, tmp_path / 'work')
    assert found == Path('benchmarks/plans/final_chemprop_default.yaml')
    assert replay.command()[2:9] == ['--max-minutes', '35', '--dataset',
                                     'molhiv', '--source',
                                     '../shared/data/ogbg_molhiv',
                                     '--max-epochs']


def test_a_run_without_its_plan_cannot_be_replayed(tmp_path):
    plan = _our_plan(tmp_path)
    with pytest.raises(PlanError, match='no plan in .* writes its folder'):
        same_budget.replay_of(_committed(plan, 'tuned', 0, protocol=None),
                              tmp_path, tmp_path)
    with pytest.raises(PlanError, match='holds no run of trial gone, seed 0'):
        same_budget.replay_of(_committed(plan, 'gone', 0), tmp_path)
    with pytest.raises(PlanError, match='holds no run of trial tuned, seed 7'):
        same_budget.replay_of(_committed(plan, 'tuned', 7), tmp_path)


class _Scripted(Run):
    r"""A run whose command is a Python snippet (the test's stand-in for
    training)."""
    def __init__(self, folder, name, code):
        super().__init__(trial='t', seed=0, config='', overrides=[],
                         trial_overrides=[], norm=name,
                         destination=folder / 'kept', workdir=folder)
        self.code = code

    def command(self):
        return [sys.executable, '-c', self.code]


def _burn(seconds, stamp):
    return (f"import time\nopen({str(stamp)!r}, 'w').write(str(time.time()))"
            f"\nend = time.process_time() + {seconds}\n"
            f"while time.process_time() < end: pass\n")


def test_side_by_side_counts_each_process_cpu_time_and_overlaps(tmp_path):
    stamps = [tmp_path / 'long.start', tmp_path / 'short.start']
    replays = [_Scripted(tmp_path, 'long', _burn(0.6, stamps[0])),
               _Scripted(tmp_path, 'short', _burn(0.2, stamps[1]))]
    started = time.time()
    measured = same_budget.run_side_by_side(
        replays, [sys.executable] * 2, tmp_path / 'logs')
    elapsed = time.time() - started
    (code_long, cpu_long, wall_long), (code_short, cpu_short,
                                       wall_short) = measured
    assert (code_long, code_short) == (0, 0)
    # Each wall time ends with its own process, not when it is looked at.
    assert wall_short < wall_long - 0.2
    # The operating system's count includes the interpreter's start-up.
    assert 0.6 <= cpu_long < 0.6 + 3 and 0.2 <= cpu_short < 0.2 + 3
    assert cpu_long - cpu_short > 0.2
    assert wall_long >= cpu_long * 0.5
    # Both started before either could have finished: side by side.
    first, second = (float(p.read_text()) for p in stamps)
    assert abs(first - second) < 0.6 and elapsed < 30
    assert sorted(p.name for p in (tmp_path / 'logs').iterdir()) == [
        't_long_seed0.log', 't_short_seed0.log']


def test_a_failing_replay_gives_its_exit_code_and_stops_the_other(
        tmp_path):
    replays = [_Scripted(tmp_path, 'ok', 'pass'),
               _Scripted(tmp_path, 'bad', 'raise SystemExit(3)')]
    codes = [code for code, _, _ in same_budget.run_side_by_side(
        replays, [sys.executable] * 2, tmp_path / 'logs')]
    assert codes == [0, 3]
    # A replay that fails at once (a missing input) does not leave the
    # other running for its whole length: it is stopped.
    replays = [_Scripted(tmp_path, 'long', 'import time; time.sleep(60)'),
               _Scripted(tmp_path, 'bad', 'raise SystemExit(2)')]
    started = time.monotonic()
    (long_code, _, _), (bad_code, _, _) = same_budget.run_side_by_side(
        replays, [sys.executable] * 2, tmp_path / 'logs')
    assert bad_code == 2 and long_code != 0
    assert time.monotonic() - started < 20


def _tox21_sets(tmp_path):
    ours, theirs = _our_plan(tmp_path), chemprop_plan(tmp_path)
    runs = ([_committed(ours, 'tuned', s) for s in (0, 1)]
            + [_committed(theirs, 'small', s, chemprop=True,
                          test_metric_at_best_val=0.6 + s / 50)
               for s in (0, 1)])
    return from_smiles_sets(runs)


def test_measure_writes_a_pair_per_seed(tmp_path, monkeypatch):
    sets = _tox21_sets(tmp_path)

    def fake_side_by_side(replays, pythons, log_dir):
        # What the two replays would leave: ours reproduces seed 1's
        # committed metrics, chemprop's does not.
        for replay, test in zip(replays, (0.71, 0.5)):
            replay.run_dir.mkdir(parents=True, exist_ok=True)
            (replay.run_dir / 'results.json').write_text(json.dumps(
                {'best_val_metric': 0.79, 'test_metric_at_best_val': test,
                 'cpu_time_s': 50.0}))
        assert pythons == [sys.executable, '/chemprop/python']
        return [(0, 120.0, 121.0), (0, 60.0, 61.0)]

    monkeypatch.setattr(same_budget, 'run_side_by_side', fake_side_by_side)
    pair, = same_budget.measure('tox21', [1], tmp_path / 'work',
                                tmp_path / 'out', '/chemprop/python',
                                'abc1234', sets)
    assert pair.ratio == pytest.approx(2.0)
    assert (pair.commit, pair.seed, pair.threads) == ('abc1234', 1, 1)
    assert pair.ours['method'] == 'Graphormer from scratch'
    assert pair.reference['method'] == 'chemprop D-MPNN (default)'
    assert pair.reproduced('ours') and not pair.reproduced('reference')
    assert load_pairs(tmp_path / 'out') == [pair]
    assert (tmp_path / 'out' / 'tox21_seed1.json').is_file()


def test_measure_names_what_is_missing_or_failed(tmp_path, monkeypatch):
    sets = _tox21_sets(tmp_path)
    with pytest.raises(PlanError, match='seed 5 has no committed run in '
                       'Graphormer from scratch and chemprop'):
        same_budget.measure('tox21', [5], tmp_path, tmp_path, 'python',
                            'abc', sets)
    with pytest.raises(PlanError, match="clintox: no row of ours"):
        same_budget.measure('clintox', [0], tmp_path, tmp_path, 'python',
                            'abc', sets)
    monkeypatch.setattr(same_budget, 'run_side_by_side',
                        lambda *args: [(0, 1.0, 1.0), (1, 1.0, 1.0)])
    with pytest.raises(PlanError, match='the replay of small/chemprop_seed0 '
                       'failed \\(exit 1\\)'):
        same_budget.measure('tox21', [0], tmp_path, tmp_path, 'python',
                            'abc', sets)


def test_help_and_a_dirty_tree(monkeypatch, capsys):
    with pytest.raises(SystemExit):
        same_budget.main(['--help'])
    assert 'side by side' in capsys.readouterr().out
    monkeypatch.setattr(same_budget, 'dirty_paths', lambda repo: ['x.py'])
    assert same_budget.main(['--sets', 'tox21']) == 2
    assert 'uncommitted changes (x.py)' in capsys.readouterr().err


def test_the_written_down_plan_is_how_the_committed_runs_ran():
    # Each run of final_chemprop_default.yaml, parsed by the baseline as
    # it would run, against the config.yaml its committed run recorded.
    baseline = script_module('chemprop_baseline')
    runs = same_budget.load_plan(
        Path('benchmarks/plans/final_chemprop_default.yaml'), Path('work'))
    assert len(runs) == 8
    for run in runs:
        args = baseline.parse_args(run.command()[2:])
        ran = yaml.safe_load((run.kept_dir / 'config.yaml').read_text())
        assert (args.dataset, args.source, args.seed, args.max_epochs,
                args.max_minutes, args.batch_size, args.threads) == (
            ran['dataset'], ran['source'], ran['seed'], ran['max_epochs'],
            ran['max_cpu_minutes'], ran['batch_size'], ran['threads'])
        assert not args.molecule_featurizers
