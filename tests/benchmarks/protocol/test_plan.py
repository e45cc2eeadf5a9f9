"""benchmarks/protocol/plan.py: every committed plan reads into runs of
valid configs; a chemprop plan's arguments reach the baseline's parser;
``{seed}`` becomes each run's seed; a norm set by the overrides
names the runs."""
from pathlib import Path

import pytest
import yaml

from benchmark_helpers import REPO, chemprop_plan, script_module
from benchmarks.protocol.plan import PlanError, load_plan


@pytest.mark.parametrize('plan_file', sorted(
    (REPO / 'benchmarks' / 'plans').glob('*.yaml')), ids=lambda p: p.stem)
def test_every_committed_plan_lists_runs_of_valid_configs(plan_file):
    # What --dry-run does: read the plan and every config with the plan's
    # overrides, as a real run would before it starts.
    runs = load_plan(plan_file, Path('runs/cpu'))
    assert runs


def test_a_chemprop_plan_passes_molecule_featurizers(tmp_path):
    # As a list under 'chemprop' (one option, several values) or as trial
    # arguments (after the plan's, so they win); the baseline's parser reads
    # them back, and the run folder
    # the baseline names after them is found.
    baseline = script_module('chemprop_baseline')
    plan = chemprop_plan(tmp_path, trials={
        'plain': [], 'rdkit': ['--molecule-featurizers', 'rdkit_2d']})
    text = yaml.safe_load(plan.read_text())
    text['chemprop']['molecule_featurizers'] = ['charge', 'morgan_count']
    plan.write_text(yaml.safe_dump(text))
    runs = load_plan(plan, tmp_path / 'work')
    parsed = [baseline.parse_args(run.command()[2:]).molecule_featurizers
              for run in runs]
    assert parsed == [['charge', 'morgan_count']] * 2 + [['rdkit_2d']] * 2
    inner = runs[2].workdir / 'rdkit' / 'chemprop_seed0' / \
        'molhiv_train2000_chemprop_rdkit_2d_seed0'
    inner.mkdir(parents=True)
    assert runs[2].run_dir == inner


def test_seed_placeholder_becomes_each_runs_seed(tmp_path):
    # A new scaffold split per seed: {seed} in the common and trial
    # overrides (ours) or the arguments (chemprop's) is the run's seed.
    plan = tmp_path / 'plan.yaml'
    plan.write_text(yaml.safe_dump({
        'destination': 'kept', 'seeds': [3, 7],
        'configs': ['configs/cpu/moleculenet/clintox.yaml'],
        'common': ['data.split_seed={seed}'],
        'trials': {'a': ['run_name=x{seed}y']}}))
    runs = load_plan(plan, Path('runs/cpu'))
    assert [(run.overrides, run.trial_overrides) for run in runs] == [
        (['data.split_seed=3'], ['run_name=x3y']),
        (['data.split_seed=7'], ['run_name=x7y'])]
    assert 'data.split_seed=7' in runs[1].command()
    plan = chemprop_plan(tmp_path, trials={'b': ['--split-seed', '{seed}']})
    runs = load_plan(plan, Path('runs/cpu'))
    assert [run.command()[run.command().index('--split-seed') + 1]
            for run in runs] == ['0', '1']


def test_a_norm_set_by_the_overrides_names_the_runs(tmp_path):
    # A trial that switches the config's SepNorm to ShareNorm keeps its runs
    # apart (share_seed<k>), rather than in the SepNorm runs' folders, where
    # they would be taken as finished or overwrite them.
    plan = tmp_path / 'plan.yaml'
    plan.write_text(yaml.safe_dump({
        'destination': 'kept', 'seeds': [0, 1],
        'configs': ['configs/cpu/moleculenet/clintox.yaml'],
        'trials': {'sep': [], 'share': ['model.norm=share']}}))
    runs = load_plan(plan, Path('runs/cpu'))
    assert [(run.trial, run.kept_dir.name) for run in runs] == [
        ('sep', 'sep_seed0'), ('sep', 'sep_seed1'),
        ('share', 'share_seed0'), ('share', 'share_seed1')]
    plan.write_text(yaml.safe_dump({
        'destination': 'kept', 'seeds': [0],
        'configs': ['configs/cpu/moleculenet/clintox.yaml'],
        'common': ['model.norm=share'], 'trials': {'a': []}}))
    assert load_plan(plan, Path('runs/cpu'))[0].kept_dir.name == 'share_seed0'


def test_a_trial_may_name_its_own_seeds(tmp_path):
    # {overrides, seeds}: that trial runs for its seeds, the others for the
    # plan's; the same in a chemprop plan; a mapping without seeds or with
    # another key is refused.
    plan = tmp_path / 'plan.yaml'
    body = {'destination': 'kept', 'seeds': [0, 1],
            'configs': ['configs/cpu/moleculenet/clintox.yaml'],
            'trials': {'a': ['optim.lr=1e-3'],
                       'b': {'overrides': ['optim.lr=2e-3'],
                             'seeds': [0, 1, 2, 5]}}}
    plan.write_text(yaml.safe_dump(body))
    runs = load_plan(plan, Path('runs/cpu'))
    assert [(run.trial, run.seed) for run in runs] == [
        ('a', 0), ('a', 1), ('b', 0), ('b', 1), ('b', 2), ('b', 5)]
    assert {tuple(run.trial_overrides) for run in runs if run.trial == 'b'
            } == {('optim.lr=2e-3',)}
    plan = chemprop_plan(tmp_path, trials={
        'plain': {'overrides': ['--max-epochs', '3'], 'seeds': [4]},
        'other': []})
    assert [(run.trial, run.seed) for run in load_plan(plan, tmp_path)] == [
        ('other', 0), ('other', 1), ('plain', 4)]
    for wrong in ({'overrides': []}, {'seeds': [0], 'epochs': 3},
                  {'seeds': []}, {'seeds': ['0']}):
        plan.write_text(yaml.safe_dump(dict(body, trials={'c': wrong})))
        with pytest.raises(PlanError, match="trial c"):
            load_plan(plan, Path('runs/cpu'))


def test_a_plan_or_trial_may_leave_test_predictions_out(tmp_path):
    # The plan's keep_test_predictions holds for its trials, unless a
    # trial's mapping sets its own; the default keeps them; a value that is
    # not a boolean is refused, naming where it stands.
    plan = tmp_path / 'plan.yaml'
    body = {'destination': 'kept', 'seeds': [0],
            'configs': ['configs/cpu/moleculenet/clintox.yaml'],
            'keep_test_predictions': False,
            'trials': {'search': [],
                       'chosen': {'overrides': [], 'seeds': [0, 3],
                                  'keep_test_predictions': True}}}
    plan.write_text(yaml.safe_dump(body))
    assert sorted((run.trial, run.seed, run.keep_test_predictions)
                  for run in load_plan(plan, Path('runs/cpu'))) == [
        ('chosen', 0, True), ('chosen', 3, True), ('search', 0, False)]
    del body['keep_test_predictions']
    plan.write_text(yaml.safe_dump(body))
    assert all(run.keep_test_predictions
               for run in load_plan(plan, Path('runs/cpu')))
    plan = chemprop_plan(tmp_path, trials={
        'plain': {'overrides': [], 'seeds': [1],
                  'keep_test_predictions': False}})
    assert [run.keep_test_predictions
            for run in load_plan(plan, tmp_path)] == [False]
    for where, wrong in (('the plan', dict(body, keep_test_predictions='no')),
                         ('trial chosen', dict(body, trials={'chosen': {
                             'seeds': [0], 'keep_test_predictions': 1}}))):
        plan.write_text(yaml.safe_dump(wrong))
        with pytest.raises(PlanError, match=f'keep_test_predictions of '
                                            f'{where}'):
            load_plan(plan, Path('runs/cpu'))
