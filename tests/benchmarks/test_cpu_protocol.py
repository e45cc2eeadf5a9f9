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

REPO = Path(__file__).resolve().parents[2]
RUNNER = 'benchmarks/cpu_protocol.py'
TINY = ['model.num_layers=1', 'model.hidden_channels=16',
        'model.ffn_channels=16', 'model.num_heads=2', 'data.limit_train=64',
        'data.limit_val=32', 'data.limit_test=32', 'data.batch_size=16',
        'train.max_steps=8', 'train.checkpoint_every_n_steps=4',
        'train.eval_test=false']


def _relative(path) -> str:
    return os.path.relpath(path, REPO)


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
        'destination': _relative(folder / 'kept'),
        'configs': ['configs/cpu/zinc_subset_sepnorm.yaml',
                    'configs/cpu/zinc_subset_sharenorm.yaml'],
        'seeds': [0],
        'common': [f'data.root={_relative(root)}',
                   f'data.raw_source={_relative(source)}', *TINY],
        'trials': {'lr1e-3': ['optim.lr=1e-3']},
        'variant': 'tiny',
    }))
    workdir = _relative(folder / 'work')
    result = _run(_relative(plan), '--workdir', workdir)
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
    result = _run(_relative(plan), '--dry-run')
    assert result.returncode == 2
    assert "unknown keys ['keep_model']" in result.stderr


def test_finished_runs_are_skipped(plan):
    _, plan_path, workdir, _ = plan
    result = _run(_relative(plan_path), '--workdir', workdir)
    assert result.returncode == 0
    assert '2 finished, 0 to run' in result.stdout


def test_an_interrupted_run_is_resumed(plan):
    folder, plan_path, workdir, _ = plan
    kept = folder / 'kept' / 'lr1e-3' / 'sep_seed0'
    (kept / 'results.json').unlink()  # as if the run had not finished
    result = _run(_relative(plan_path), '--workdir', workdir, '--dry-run')
    assert result.returncode == 0
    assert '1 to run' in result.stdout and '--resume' in result.stdout


def test_bad_plans_are_clear_errors(tmp_path):
    plan = tmp_path / 'plan.yaml'
    plan.write_text(yaml.safe_dump({'configs': [], 'seeds': [0]}))
    result = _run(_relative(plan))
    assert result.returncode == 2
    assert 'lacks destination, trials' in result.stderr
    result = _run(_relative(tmp_path / 'missing.yaml'))
    assert result.returncode == 2 and 'does not exist' in result.stderr


@pytest.mark.parametrize('plan_file', sorted(
    (REPO / 'benchmarks' / 'plans').glob('*.yaml')), ids=lambda p: p.stem)
def test_every_committed_plan_lists_runs_of_valid_configs(plan_file):
    # What --dry-run does: read the plan and every config with the plan's
    # overrides, as a real run would before it starts.
    from benchmark_helpers import script_module
    runs = script_module('cpu_protocol').load_plan(plan_file,
                                                   Path('runs/cpu'))
    assert runs


def _chemprop_plan(folder, **extra):
    plan = folder / 'chemprop.yaml'
    plan.write_text(yaml.safe_dump({
        'destination': _relative(folder / 'kept'),
        'chemprop': {'dataset': 'molhiv', 'source': '../shared/data/x',
                     'train_molecules': 2000},
        'seeds': [0, 1], 'trials': {'small': ['--max-epochs', '3']},
        **extra}))
    return plan


def test_a_chemprop_plan_runs_the_baseline_and_keeps_its_artefacts(
        tmp_path):
    from benchmark_helpers import script_module
    protocol = script_module('cpu_protocol')
    plan = _chemprop_plan(tmp_path)
    runs = protocol.load_plan(plan, Path('runs/cpu'))
    assert [run.name for run in runs] == ['chemprop_seed0', 'chemprop_seed1']
    assert runs[1].command()[1:] == [
        'benchmarks/chemprop_baseline.py', '--dataset', 'molhiv', '--source',
        '../shared/data/x', '--train-molecules', '2000', '--max-epochs', '3',
        '--seed', '1', '--output-dir', 'runs/cpu/kept/small/chemprop_seed1',
        '--no-progress-bar']
    # The baseline names its run directory inside the output folder; a
    # finished one is found there and its artefacts kept.
    run = protocol.load_plan(plan, tmp_path / 'work')[0]
    inner = tmp_path / 'work' / 'kept' / 'small' / 'chemprop_seed0' / \
        'molhiv_train2000_chemprop_seed0'
    (inner / 'checkpoints').mkdir(parents=True)
    (inner / 'checkpoints' / 'last.ckpt').write_text('')
    assert run.run_dir == inner and run.command()[-1] == '--resume'
    (inner / 'config.yaml').write_text('seed: 0\n')
    (inner / 'metrics.csv').write_text('epoch,val_rocauc\n0,0.7\n')
    (inner / 'results.json').write_text(json.dumps({'seed': 0}))
    protocol.keep_artefacts(run, Path('plan.yaml'), 'abc123')
    kept_dir = (REPO / run.kept_dir).resolve()  # relative to the repository
    assert kept_dir == tmp_path.resolve() / 'kept' / 'small' / \
        'chemprop_seed0'
    kept = json.loads((kept_dir / 'results.json').read_text())
    assert kept['protocol']['chemprop_arguments'][:2] == ['--dataset',
                                                          'molhiv']
    assert kept['protocol']['config'] is None
    # Recorded like ours: the plan and the code's commit.
    assert kept['protocol']['plan'] == 'plan.yaml'
    assert kept['protocol']['commit'] == 'abc123'
    assert sorted(p.name for p in kept_dir.iterdir()) == [
        'config.yaml', 'metrics.csv', 'results.json']


def test_a_chemprop_plan_passes_molecule_featurizers(tmp_path):
    # As a list under 'chemprop' (one option, several values) or as trial
    # arguments (after the plan's, so they win); the baseline's parser reads
    # them back, and the run folder
    # the baseline names after them is found.
    from benchmark_helpers import script_module
    protocol = script_module('cpu_protocol')
    baseline = script_module('chemprop_baseline')
    plan = _chemprop_plan(tmp_path, trials={
        'plain': [], 'rdkit': ['--molecule-featurizers', 'rdkit_2d']})
    text = yaml.safe_load(plan.read_text())
    text['chemprop']['molecule_featurizers'] = ['charge', 'morgan_count']
    plan.write_text(yaml.safe_dump(text))
    runs = protocol.load_plan(plan, tmp_path / 'work')
    parsed = [baseline.parse_args(run.command()[2:]).molecule_featurizers
              for run in runs]
    assert parsed == [['charge', 'morgan_count']] * 2 + [['rdkit_2d']] * 2
    inner = runs[2].workdir / 'rdkit' / 'chemprop_seed0' / \
        'molhiv_train2000_chemprop_rdkit_2d_seed0'
    inner.mkdir(parents=True)
    assert runs[2].run_dir == inner


def test_trials_option_runs_only_the_named_trials(tmp_path):
    plan = _chemprop_plan(tmp_path, trials={
        'first': ['--max-epochs', '3'], 'second': ['--max-epochs', '5']})
    result = _run(_relative(plan), '--dry-run', '--trials', 'second')
    assert result.returncode == 0, result.stderr
    listed = [line for line in result.stdout.splitlines()
              if line.startswith('benchmarks/chemprop_baseline.py')]
    assert len(listed) == 2 and all('/second/' in line for line in listed)
    assert '2 runs, 0 finished, 2 to run' in result.stdout
    result = _run(_relative(plan), '--dry-run', '--trials', 'secnod')
    assert result.returncode == 2
    assert 'no plan holds the trials secnod' in result.stderr
    assert 'first, second' in result.stderr


def test_seeds_option_runs_only_the_named_seeds(tmp_path):
    plan = _chemprop_plan(tmp_path, seeds=[0, 1, 2])
    result = _run(_relative(plan), '--dry-run', '--seeds', '2', '0')
    assert result.returncode == 0, result.stderr
    listed = [line.split('--seed ')[1].split()[0]
              for line in result.stdout.splitlines()
              if line.startswith('benchmarks/chemprop_baseline.py')]
    assert listed == ['0', '2']
    result = _run(_relative(plan), '--dry-run', '--seeds', '7')
    assert result.returncode == 2
    assert 'no plan holds the seeds 7; their seeds: 0, 1, 2' in result.stderr


def test_a_missing_dataset_file_is_a_clear_error(tmp_path):
    # A plan whose config reads a CSV that was never made stops before any
    # run starts, naming the run and the file, without a traceback.
    plan = tmp_path / 'plan.yaml'
    plan.write_text(yaml.safe_dump({
        'destination': _relative(tmp_path / 'kept'),
        'configs': ['configs/cpu/molhiv_train2000_sepnorm.yaml'],
        'seeds': [0], 'common': [f'data.root={_relative(tmp_path)}',
                                 'train.eval_test=false'],
        'trials': {'small': []}}))
    result = _run(_relative(plan), '--workdir', _relative(tmp_path / 'w'))
    assert result.returncode == 2
    assert 'run small/sep_seed0: CSV file' in result.stderr
    assert 'molhiv_train2000.csv does not exist' in result.stderr
    assert 'Traceback' not in result.stderr


@pytest.mark.parametrize('extra,message', [
    ({'configs': ['configs/cpu/molhiv_sepnorm.yaml']}, 'not both'),
    ({'common': ['--epochs', '1']}, "takes no 'common'")])
def test_bad_chemprop_plans_are_clear_errors(tmp_path, extra, message):
    plan = _chemprop_plan(tmp_path, **extra)
    result = _run(_relative(plan), '--dry-run')
    assert result.returncode == 2 and message in result.stderr


def test_test_predictions_are_kept_gzipped_and_read_back(tmp_path):
    """The per-molecule predictions (most of the committed tree) are kept
    as test_predictions.csv.gz, named so in results.json, the same bytes
    for the same file, and the results generator reads them as the CSV."""
    from types import SimpleNamespace

    from benchmark_helpers import script_module

    from benchmarks.analysis.test_predictions import \
        read_test_predictions
    protocol = script_module('cpu_protocol')
    run_dir, kept = tmp_path / 'run', tmp_path / 'kept'
    run_dir.mkdir()
    (run_dir / 'config.yaml').write_text('seed: 0\n')
    (run_dir / 'results.json').write_text(json.dumps(
        {'test_predictions': 'test_predictions.csv'}))
    rows = 'id,target,prediction\n3,1.5,1.25\n7,-2.0,-1.75\n'
    (run_dir / 'test_predictions.csv').write_text(rows)
    run = SimpleNamespace(run_dir=run_dir, kept_dir=kept, trial='t',
                          trial_overrides=[], config='c.yaml',
                          chemprop_args=None, labels={})
    protocol.keep_artefacts(run, Path('plan.yaml'), 'abc')
    assert sorted(p.name for p in kept.iterdir()) == [
        'config.yaml', 'results.json', 'test_predictions.csv.gz']
    results = json.loads((kept / 'results.json').read_text())
    assert results['test_predictions'] == 'test_predictions.csv.gz'
    first = (kept / 'test_predictions.csv.gz').read_bytes()
    protocol.keep_artefacts(run, Path('plan.yaml'), 'abc')
    assert (kept / 'test_predictions.csv.gz').read_bytes() == first
    assert read_test_predictions(dict(results, path=str(kept))) == {
        3: (1.5, 1.25), 7: (-2.0, -1.75)}


def _git(repo, *args):
    subprocess.run(['git', '-c', 'user.name=t', '-c', 'user.email=t@t', *args],
                   cwd=repo, check=True, capture_output=True)


def test_a_final_plan_refuses_a_dirty_tree(tmp_path):
    """A plan that reads test refuses uncommitted code (untracked files
    included), naming the files; a tuning plan records the commit with
    +dirty; a clean tree gives the commit itself. Checked on a git
    repository of its own, so the test never depends on this checkout."""
    from benchmark_helpers import script_module
    protocol = script_module('cpu_protocol')
    repo = tmp_path / 'repo'
    (repo / 'graphormer_sepnorm').mkdir(parents=True)
    (repo / 'graphormer_sepnorm' / 'a.py').write_text('x = 1\n')
    (repo / 'notes.txt').write_text('not code\n')
    _git(repo, 'init', '-q')
    _git(repo, 'add', '.')
    _git(repo, 'commit', '-q', '-m', 'first')
    head = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=repo,
                          capture_output=True, text=True).stdout.strip()
    plan = _chemprop_plan(tmp_path)
    final = protocol.load_plan(plan, Path('runs/cpu'))
    assert all(run.reads_test for run in final)
    (repo / 'notes.txt').write_text('changed, but not code\n')
    assert protocol.commit_of(final, plan, repo) == head
    (repo / 'graphormer_sepnorm' / 'a.py').write_text('x = 2\n')
    (repo / 'graphormer_sepnorm' / 'new.py').write_text('y = 1\n')
    assert protocol.dirty_paths(repo) == ['graphormer_sepnorm/a.py',
                                          'graphormer_sepnorm/new.py']
    with pytest.raises(protocol.PlanError, match=(
            r"reads the test split, but the tree has uncommitted changes "
            r"\(graphormer_sepnorm/a.py, graphormer_sepnorm/new.py\); "
            r"commit or stash them")):
        protocol.commit_of(final, plan, repo)
    tuning = protocol.Run(trial='t', seed=0,
                          config='configs/cpu/zinc_subset_sepnorm.yaml',
                          overrides=['train.eval_test=false'],
                          trial_overrides=[], norm='sep',
                          destination=Path('kept'), workdir=Path('work'))
    assert not tuning.reads_test
    assert protocol.commit_of([tuning], plan, repo) == head + '+dirty'


def test_seed_placeholder_becomes_each_runs_seed(tmp_path):
    # A new scaffold split per seed: {seed} in the common and trial
    # overrides (ours) or the arguments (chemprop's) is the run's seed.
    from benchmark_helpers import script_module
    protocol = script_module('cpu_protocol')
    plan = tmp_path / 'plan.yaml'
    plan.write_text(yaml.safe_dump({
        'destination': 'kept', 'seeds': [3, 7],
        'configs': ['configs/cpu/moleculenet/clintox.yaml'],
        'common': ['data.split_seed={seed}'],
        'trials': {'a': ['run_name=x{seed}y']}}))
    runs = protocol.load_plan(plan, Path('runs/cpu'))
    assert [(run.overrides, run.trial_overrides) for run in runs] == [
        (['data.split_seed=3'], ['run_name=x3y']),
        (['data.split_seed=7'], ['run_name=x7y'])]
    assert 'data.split_seed=7' in runs[1].command()
    plan = _chemprop_plan(tmp_path, trials={'b': ['--split-seed', '{seed}']})
    runs = protocol.load_plan(plan, Path('runs/cpu'))
    assert [run.command()[run.command().index('--split-seed') + 1]
            for run in runs] == ['0', '1']
