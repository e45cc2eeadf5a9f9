"""benchmarks/protocol/artefacts.py: a finished run's artefacts kept
without checkpoints, its predictions compressed, the protocol entry in
results.json; the recorded commit, and a final plan's refusal of a dirty
tree."""
import bz2
import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmark_helpers import REPO, chemprop_plan
from benchmarks.analysis.test_predictions import read_test_predictions
from benchmarks.protocol.artefacts import (commit_of, dirty_paths,
                                           keep_artefacts)
from benchmarks.protocol.plan import PlanError, Run, load_plan


def test_a_chemprop_plan_runs_the_baseline_and_keeps_its_artefacts(
        tmp_path):
    plan = chemprop_plan(tmp_path)
    runs = load_plan(plan, Path('runs/cpu'))
    assert [run.name for run in runs] == ['chemprop_seed0', 'chemprop_seed1']
    assert runs[1].command()[1:] == [
        'benchmarks/chemprop_baseline.py', '--dataset', 'molhiv', '--source',
        '../shared/data/x', '--train-molecules', '2000', '--max-epochs', '3',
        '--seed', '1', '--output-dir', 'runs/cpu/kept/small/chemprop_seed1',
        '--no-progress-bar']
    # The baseline names its run directory inside the output folder; a
    # finished one is found there and its artefacts kept.
    run = load_plan(plan, tmp_path / 'work')[0]
    inner = tmp_path / 'work' / 'kept' / 'small' / 'chemprop_seed0' / \
        'molhiv_train2000_chemprop_seed0'
    (inner / 'checkpoints').mkdir(parents=True)
    (inner / 'checkpoints' / 'last.ckpt').write_text('')
    assert run.run_dir == inner and run.command()[-1] == '--resume'
    (inner / 'config.yaml').write_text('seed: 0\n')
    (inner / 'metrics.csv').write_text('epoch,val_rocauc\n0,0.7\n')
    (inner / 'results.json').write_text(json.dumps({'seed': 0}))
    keep_artefacts(run, Path('plan.yaml'), 'abc123')
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


def test_test_predictions_are_kept_compressed_and_read_back(tmp_path):
    """The per-molecule predictions (most of the committed tree) are kept
    as test_predictions.csv.bz2, named so in results.json, the same bytes
    for the same file, and the results generator reads them as the CSV."""
    run_dir, kept = tmp_path / 'run', tmp_path / 'kept'
    run_dir.mkdir()
    (run_dir / 'config.yaml').write_text('seed: 0\n')
    (run_dir / 'results.json').write_text(json.dumps(
        {'test_predictions': 'test_predictions.csv'}))
    rows = 'id,target,prediction\n3,1.5,1.25\n7,-2.0,-1.75\n'
    (run_dir / 'test_predictions.csv').write_text(rows)
    run = SimpleNamespace(run_dir=run_dir, kept_dir=kept, trial='t',
                          trial_overrides=[], config='c.yaml',
                          chemprop_args=None, labels={},
                          keep_test_predictions=True)
    keep_artefacts(run, Path('plan.yaml'), 'abc')
    assert sorted(p.name for p in kept.iterdir()) == [
        'config.yaml', 'results.json', 'test_predictions.csv.bz2']
    results = json.loads((kept / 'results.json').read_text())
    assert results['test_predictions'] == 'test_predictions.csv.bz2'
    first = (kept / 'test_predictions.csv.bz2').read_bytes()
    assert bz2.decompress(first).decode() == rows
    keep_artefacts(run, Path('plan.yaml'), 'abc')
    assert (kept / 'test_predictions.csv.bz2').read_bytes() == first
    assert read_test_predictions(dict(results, path=str(kept))) == {
        3: (1.5, 1.25), 7: (-2.0, -1.75)}
    # A run of a plan or trial with keep_test_predictions: false leaves
    # them in its run directory, and its results.json names no kept file.
    run.kept_dir = tmp_path / 'kept_without'
    run.keep_test_predictions = False
    keep_artefacts(run, Path('plan.yaml'), 'abc')
    assert sorted(p.name for p in run.kept_dir.iterdir()) == [
        'config.yaml', 'results.json']
    results = json.loads((run.kept_dir / 'results.json').read_text())
    assert 'test_predictions' not in results
    assert results['protocol']['commit'] == 'abc'
    assert (run_dir / 'test_predictions.csv').read_text() == rows


def _git(repo, *args):
    subprocess.run(['git', '-c', 'user.name=t', '-c', 'user.email=t@t', *args],
                   cwd=repo, check=True, capture_output=True)


def test_a_final_plan_refuses_a_dirty_tree(tmp_path):
    """A plan that reads test refuses uncommitted code (untracked files
    included), naming the files; a tuning plan records the commit with
    +dirty; a clean tree gives the commit itself. Checked on a git
    repository of its own, so the test never depends on this checkout."""
    repo = tmp_path / 'repo'
    (repo / 'graphormer_sepnorm').mkdir(parents=True)
    (repo / 'graphormer_sepnorm' / 'a.py').write_text('x = 1\n')
    (repo / 'notes.txt').write_text('not code\n')
    _git(repo, 'init', '-q')
    _git(repo, 'add', '.')
    _git(repo, 'commit', '-q', '-m', 'first')
    head = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=repo,
                          capture_output=True, text=True).stdout.strip()
    plan = chemprop_plan(tmp_path)
    final = load_plan(plan, Path('runs/cpu'))
    assert all(run.reads_test for run in final)
    (repo / 'notes.txt').write_text('changed, but not code\n')
    assert commit_of(final, plan, repo) == head
    (repo / 'graphormer_sepnorm' / 'a.py').write_text('x = 2\n')
    (repo / 'graphormer_sepnorm' / 'new.py').write_text('y = 1\n')
    assert dirty_paths(repo) == ['graphormer_sepnorm/a.py',
                                 'graphormer_sepnorm/new.py']
    with pytest.raises(PlanError, match=(
            r"reads the test split, but the tree has uncommitted changes "
            r"\(graphormer_sepnorm/a.py, graphormer_sepnorm/new.py\); "
            r"commit or stash them")):
        commit_of(final, plan, repo)
    tuning = Run(trial='t', seed=0,
                 config='configs/cpu/zinc_subset_sepnorm.yaml',
                 overrides=['train.eval_test=false'],
                 trial_overrides=[], norm='sep',
                 destination=Path('kept'), workdir=Path('work'))
    assert not tuning.reads_test
    assert commit_of([tuning], plan, repo) == head + '+dirty'
