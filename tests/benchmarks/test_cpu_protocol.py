"""benchmarks/cpu_protocol.py: a tiny plan of real runs, side by side, kept
artefacts without checkpoints or absolute paths, skip when finished, resume
when interrupted."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from benchmark_helpers import REPO, chemprop_plan, relative

RUNNER = 'benchmarks/cpu_protocol.py'
TINY = ['model.num_layers=1', 'model.hidden_channels=16',
        'model.ffn_channels=16', 'model.num_heads=2', 'data.limit_train=64',
        'data.limit_val=32', 'data.limit_test=32', 'data.batch_size=16',
        'train.max_steps=8', 'train.checkpoint_every_n_steps=4',
        'train.eval_test=false']


def _run(*args):
    env = dict(os.environ)
    env.pop('GRAPHORMER_DATA_ROOT', None)
    return subprocess.run([sys.executable, RUNNER, *args], cwd=REPO,
                          capture_output=True, text=True, timeout=600,
                          env=env)


@pytest.fixture(scope='module')
def plan(zinc_root, tmp_path_factory):
    root, source = zinc_root
    folder = tmp_path_factory.mktemp('protocol')
    plan = folder / 'plan.yaml'
    plan.write_text(yaml.safe_dump({
        'destination': relative(folder / 'kept'),
        'configs': ['configs/cpu/zinc_subset_sepnorm.yaml',
                    'configs/cpu/zinc_subset_sharenorm.yaml'],
        'seeds': [0],
        'common': [f'data.root={relative(root)}',
                   f'data.raw_source={relative(source)}', *TINY],
        'trials': {'lr1e-3': ['optim.lr=1e-3']},
        'variant': 'tiny',
    }))
    workdir = relative(folder / 'work')
    result = _run(relative(plan), '--workdir', workdir)
    assert result.returncode == 0, result.stdout + result.stderr
    return folder, plan, workdir, result


def test_a_plan_keeps_each_runs_artefacts(plan):
    folder, plan_path, _, result = plan
    assert 'done   lr1e-3/sep_seed0' in result.stdout
    assert 'done   lr1e-3/share_seed0' in result.stdout
    for norm in ('sep', 'share'):
        kept = folder / 'kept' / 'lr1e-3' / f'{norm}_seed0'
        assert sorted(p.name for p in kept.iterdir()) == [
            'config.yaml', 'metrics.csv', 'results.json']
        results = json.loads((kept / 'results.json').read_text())
        assert results['norm'] == norm and results['steps'] == 8
        assert results['test_metric_at_best_val'] is None  # never read
        assert results['protocol']['trial'] == 'lr1e-3'
        assert results['variant'] == 'tiny'
        assert 'benchmark' not in results  # not in the plan
        assert results['protocol']['overrides'] == ['optim.lr=1e-3']
        config = yaml.safe_load((kept / 'config.yaml').read_text())
        assert config['optim']['lr'] == 1e-3 and config['seed'] == 0
        # No path of this machine: every path is relative.
        paths = [results['run_dir'], results['best_checkpoint'],
                 config['output_dir'], config['data']['root'],
                 config['data']['raw_source']]
        assert not [p for p in paths if os.path.isabs(p)]
        assert results['best_checkpoint'] == 'checkpoints/best.ckpt'


def test_weights_and_curves_are_not_kept(plan):
    """The kept copy holds no weights (nor the curves plot): the run's
    model.safetensors stays in the work directory, at the path below it
    that scripts/graph_token_analysis.py --weights maps the kept run to."""
    from graphormer_sepnorm.checkpoint import load_model
    folder, _, workdir, _ = plan
    for norm in ('sep', 'share'):
        kept = folder / 'kept' / 'lr1e-3' / f'{norm}_seed0'
        assert not (kept / 'model.safetensors').exists()
        assert not (kept / 'curves.png').exists()
        trained = REPO / workdir / 'kept' / kept.relative_to(folder / 'kept')
        assert (trained / 'curves.png').is_file()
        model, card = load_model(trained / 'model.safetensors')
        assert model.config['norm'] == norm and card.extra['seed'] == 0


def test_a_plan_with_keep_model_is_refused(tmp_path):
    """keep_model (which copied the weights) is gone: a plan naming it is
    an error, not weights silently dropped."""
    plan = tmp_path / 'plan.yaml'
    plan.write_text(yaml.safe_dump({
        'destination': 'kept', 'configs': [], 'seeds': [0],
        'trials': {'a': []}, 'keep_model': True}))
    result = _run(relative(plan), '--dry-run')
    assert result.returncode == 2
    assert "unknown keys ['keep_model']" in result.stderr


def test_finished_runs_are_skipped(plan):
    _, plan_path, workdir, _ = plan
    result = _run(relative(plan_path), '--workdir', workdir)
    assert result.returncode == 0
    assert '2 finished, 0 to run' in result.stdout


def test_an_interrupted_run_is_resumed(plan):
    folder, plan_path, workdir, _ = plan
    kept = folder / 'kept' / 'lr1e-3' / 'sep_seed0'
    (kept / 'results.json').unlink()  # as if the run had not finished
    result = _run(relative(plan_path), '--workdir', workdir, '--dry-run')
    assert result.returncode == 0
    assert '1 to run' in result.stdout and '--resume' in result.stdout


def test_bad_plans_are_clear_errors(tmp_path):
    plan = tmp_path / 'plan.yaml'
    plan.write_text(yaml.safe_dump({'configs': [], 'seeds': [0]}))
    result = _run(relative(plan))
    assert result.returncode == 2
    assert 'lacks destination, trials' in result.stderr
    result = _run(relative(tmp_path / 'missing.yaml'))
    assert result.returncode == 2 and 'does not exist' in result.stderr


def test_trials_option_runs_only_the_named_trials(tmp_path):
    plan = chemprop_plan(tmp_path, trials={
        'first': ['--max-epochs', '3'], 'second': ['--max-epochs', '5']})
    result = _run(relative(plan), '--dry-run', '--trials', 'second')
    assert result.returncode == 0, result.stderr
    listed = [line for line in result.stdout.splitlines()
              if line.startswith('benchmarks/chemprop_baseline.py')]
    assert len(listed) == 2 and all('/second/' in line for line in listed)
    assert '2 runs, 0 finished, 2 to run' in result.stdout
    result = _run(relative(plan), '--dry-run', '--trials', 'secnod')
    assert result.returncode == 2
    assert 'no plan holds the trials secnod' in result.stderr
    assert 'first, second' in result.stderr


def test_seeds_option_runs_only_the_named_seeds(tmp_path):
    plan = chemprop_plan(tmp_path, seeds=[0, 1, 2])
    result = _run(relative(plan), '--dry-run', '--seeds', '2', '0')
    assert result.returncode == 0, result.stderr
    listed = [line.split('--seed ')[1].split()[0]
              for line in result.stdout.splitlines()
              if line.startswith('benchmarks/chemprop_baseline.py')]
    assert listed == ['0', '2']
    result = _run(relative(plan), '--dry-run', '--seeds', '7')
    assert result.returncode == 2
    assert 'no plan holds the seeds 7; their seeds: 0, 1, 2' in result.stderr


def test_a_missing_dataset_file_is_a_clear_error(tmp_path):
    # A plan whose config reads a CSV that was never made stops before any
    # run starts, naming the run and the file, without a traceback. (The
    # path is moved under tmp_path: a machine that made the config's CSV
    # would otherwise train.)
    plan = tmp_path / 'plan.yaml'
    plan.write_text(yaml.safe_dump({
        'destination': relative(tmp_path / 'kept'),
        'configs': ['configs/cpu/molhiv_train2000_sepnorm.yaml'],
        'seeds': [0], 'common': [f'data.root={relative(tmp_path)}',
                                 f'data.path={relative(tmp_path)}/'
                                 f'molhiv_train2000.csv',
                                 'train.eval_test=false'],
        'trials': {'small': []}}))
    result = _run(relative(plan), '--workdir', relative(tmp_path / 'w'))
    assert result.returncode == 2
    assert 'run small/sep_seed0: CSV file' in result.stderr
    assert 'molhiv_train2000.csv does not exist' in result.stderr
    assert 'Traceback' not in result.stderr


@pytest.mark.parametrize('extra,message', [
    ({'configs': ['configs/cpu/molhiv_sepnorm.yaml']}, 'not both'),
    ({'common': ['--epochs', '1']}, "takes no 'common'")])
def test_bad_chemprop_plans_are_clear_errors(tmp_path, extra, message):
    plan = chemprop_plan(tmp_path, **extra)
    result = _run(relative(plan), '--dry-run')
    assert result.returncode == 2 and message in result.stderr


def test_a_stale_bundle_gets_its_bundling_command(tmp_path, monkeypatch):
    """On the committed final runs, with nothing shipped: one reminder per
    bundled model, whose command names the chosen family's weights below
    the workdir, seed by seed, each with its committed results.json. With
    the members the package ships: none (they are the rule's choice)."""
    from benchmarks.analysis.bundle_choice import choose_families
    from benchmarks.analysis.runs import group_runs, load_runs
    from benchmarks.cpu_protocol import bundle_reminders
    monkeypatch.chdir(REPO)
    runs = Path('benchmarks/results/runs')
    choices = choose_families(group_runs(load_runs(runs)))
    reminders = bundle_reminders(runs, Path('work'), shipped=lambda _: set())
    assert len(reminders) == len(choices) == 2
    for message, (name, choice) in zip(reminders, choices.items()):
        command = message.split('\n  ', 1)[1].split()
        assert command[:3] == ['python', 'scripts/bundle_model.py', name]
        kept = sorted((Path(run['path']) for run in choice.chosen.runs),
                      key=lambda path: path.name)
        assert command[3:3 + len(kept)] == [
            str(Path('work/runs') / path.relative_to(runs)) for path in kept]
        assert command[3 + len(kept):] == [
            word for path in kept
            for word in ('--results', str(path / 'results.json'))]
    assert bundle_reminders(runs, Path('work')) == []
    # The rule reads the final runs of benchmarks/results/runs only.
    assert bundle_reminders(tmp_path, Path('work'),
                            shipped=lambda _: set()) == []


def test_runs_import_the_package_of_this_checkout(tmp_path, monkeypatch):
    # The recorded commit is this checkout's, so its runs must run its
    # code: from another folder, with a foreign path first on PYTHONPATH,
    # the runs' environment still finds the package here.
    from benchmarks.cpu_protocol import run_environment
    elsewhere = tmp_path / 'elsewhere' / 'graphormer_sepnorm'
    elsewhere.mkdir(parents=True)
    (elsewhere / '__init__.py').write_text("raise ImportError('not ours')")
    monkeypatch.setenv('PYTHONPATH', str(elsewhere.parent))
    env = run_environment()
    assert env['OMP_NUM_THREADS'] == '1'
    found = subprocess.run(
        [sys.executable, '-c',
         'import graphormer_sepnorm; print(graphormer_sepnorm.__file__)'],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert Path(found.stdout.strip()).parent == REPO / 'graphormer_sepnorm'
