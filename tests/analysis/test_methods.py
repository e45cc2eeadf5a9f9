"""benchmarks/analysis/methods.py: a run's method from its results.json,
molecule features (chemprop's and ours) and backbone included."""
import pytest
import yaml

from benchmarks.analysis.methods import (FINE_TUNING_RECIPE, base_method_of,
                                         bundled_backbone_steps,
                                         method_of, molecule_features_of)
from conftest import REPO
from test_from_smiles import bundled_6000  # noqa: F401

CHEMPROP = {'model_family': 'chemprop D-MPNN', 'molecule_featurizers': []}
BACKBONE = {'source': 'bundled:pretrained-sepnorm', 'task': 'pretraining',
            'pretraining': {'pretraining': {'objectives': {
                'masked_atoms': {'weight': 1.0},
                'descriptors': {'weight': 1.0}}}}}


def _ours(**fields):
    return {'norm': 'sep', 'init_from': None, 'molecule_features': None,
            **fields}


def _features(*featurizers, columns=()):
    # results.json's molecule_features record (run_results.py): settings
    # and the molecules each split rejected.
    return {'featurizers': list(featurizers), 'descriptors': [],
            'morgan_radius': 2, 'morgan_size': 2048,
            'feature_columns': list(columns), 'channels': 39,
            'rejected': {'test': 2}}


def test_plain_methods():
    assert method_of(_ours()) == 'scratch'
    assert method_of(_ours(init_from=BACKBONE)) == 'fine-tuned'
    assert method_of(CHEMPROP) == 'chemprop'
    # A chemprop run written before molecule_featurizers existed.
    assert method_of({'model_family': 'chemprop D-MPNN'}) == 'chemprop'


def test_molecule_features_make_methods_of_their_own():
    featurized = dict(CHEMPROP, molecule_featurizers=['rdkit_2d',
                                                      'morgan_count'])
    assert method_of(featurized) == 'chemprop + rdkit_2d + morgan_count'
    assert method_of(_ours(molecule_features=_features('rdkit2d'))) == \
        'scratch + rdkit2d'
    assert method_of(_ours(init_from=BACKBONE, molecule_features=_features(
        'morgan', columns=['logp']))) == 'fine-tuned + morgan + logp'
    assert molecule_features_of(_ours()) == []
    assert base_method_of(featurized) == 'chemprop'


def test_another_backbone_or_a_trained_model_is_its_own_method():
    masked = {**BACKBONE, 'pretraining': {'pretraining': {'objectives': {
        'masked_atoms': {'weight': 1.0}, 'descriptors': {'weight': 0.0}}}}}
    assert method_of(_ours(init_from=masked)) == \
        'fine-tuned (without descriptors)'
    trained = {'source': 'runs/x', 'task': 'regression'}
    assert method_of(_ours(init_from=trained)) == \
        'fine-tuned (from a trained model)'


def test_the_bundled_backbone_steps_are_its_configs():
    # The bundled backbone is configs/pretrain/cpu_sepnorm_long.yaml's
    # (graphormer_sepnorm/bundled/__init__.py), read from its card.
    config = yaml.safe_load((REPO / 'configs/pretrain/cpu_sepnorm_long.yaml')
                            .read_text())
    assert bundled_backbone_steps() == config['train']['max_steps']


def test_a_backbone_of_other_steps_than_the_bundled_one_is_its_own_method(
        bundled_6000):
    bundled = 6000

    def trained_for(steps):
        objectives = BACKBONE['pretraining']['pretraining']['objectives']
        return {**BACKBONE, 'pretraining': {'pretraining': {
            'objectives': objectives, 'steps': steps}}}
    assert method_of(_ours(init_from=trained_for(bundled))) == 'fine-tuned'
    assert method_of(_ours(init_from=trained_for(60000), molecule_features=(
        _features('morgan')))) == \
        'fine-tuned (60,000-step backbone) + morgan'


def test_an_unknown_model_family_is_refused():
    with pytest.raises(ValueError, match="model family 'random forest'"):
        method_of({'model_family': 'random forest', 'path': 'runs/rf'})


def _run_dir(tmp_path, name, optim):
    # A run directory as cpu_protocol.py keeps it: its config.yaml beside
    # results.json.
    run_dir = tmp_path / name
    run_dir.mkdir()
    (run_dir / 'config.yaml').write_text(yaml.safe_dump(
        {'seed': 0, 'optim': {'lr': 1e-3, **optim}}))
    return str(run_dir)


def test_layer_wise_decay_from_the_runs_config_is_its_own_method(
        tmp_path, bundled_6000):
    decayed = _run_dir(tmp_path, 'decayed', {'layer_lr_decay': 0.8})
    one_rate = _run_dir(tmp_path, 'one_rate', {'layer_lr_decay': 1.0})
    unset = _run_dir(tmp_path, 'unset', {})
    morgan = _features('morgan')
    assert method_of(_ours(init_from=BACKBONE, path=decayed,
                           molecule_features=morgan)) == \
        'fine-tuned (layer-wise learning-rate decay 0.8) + morgan'
    for plain in (one_rate, unset, str(tmp_path / 'no_config')):
        assert method_of(_ours(init_from=BACKBONE, path=plain)) == \
            'fine-tuned'
    longer = {**BACKBONE, 'pretraining': {'pretraining': {
        **BACKBONE['pretraining']['pretraining'], 'steps': 60000}}}
    assert base_method_of(_ours(init_from=longer, path=decayed)) == \
        'fine-tuned (60,000-step backbone, layer-wise learning-rate decay 0.8)'
    # From scratch there is no backbone to decay towards.
    assert method_of(_ours(path=decayed)) == 'scratch'


def test_a_weight_average_from_the_runs_config_is_its_own_method(
        tmp_path, bundled_6000):
    averaged = _run_dir(tmp_path, 'averaged', {'ema_decay': 0.999})
    both = _run_dir(tmp_path, 'both', {'layer_lr_decay': 0.8,
                                       'ema_decay': 0.99})
    off = _run_dir(tmp_path, 'off', {'ema_decay': None})
    assert method_of(_ours(init_from=BACKBONE, path=averaged)) == \
        'fine-tuned (weight EMA 0.999)'
    assert method_of(_ours(init_from=BACKBONE, path=both,
                           molecule_features=_features('morgan'))) == \
        'fine-tuned (layer-wise learning-rate decay 0.8, weight EMA 0.99)' \
        ' + morgan'
    assert method_of(_ours(init_from=BACKBONE, path=off)) == 'fine-tuned'


def test_a_blended_forest_is_its_own_method(tmp_path, bundled_6000):
    decayed = _run_dir(tmp_path, 'decayed', {'layer_lr_decay': 0.8})
    both = _run_dir(tmp_path, 'both', {'layer_lr_decay': 0.8,
                                       'ema_decay': 0.99})
    forest = {'trees_per_target': 50, 'weight': 0.4}
    assert method_of(_ours(init_from=BACKBONE, path=decayed, forest=forest,
                           molecule_features=_features('morgan'))) == \
        'fine-tuned (layer-wise learning-rate decay 0.8, 50-tree forest)' \
        ' + morgan'
    assert base_method_of(_ours(init_from=BACKBONE, path=both,
                                forest=forest)) == \
        'fine-tuned (layer-wise learning-rate decay 0.8, weight EMA 0.99, ' \
        '50-tree forest)'
    assert base_method_of(_ours(init_from=BACKBONE, forest=forest)) == \
        'fine-tuned (50-tree forest)'
    # From scratch too: never mixed with the plain scratch runs.
    assert base_method_of(_ours(forest=forest)) == 'scratch (50-tree forest)'
    assert base_method_of(_ours(init_from=BACKBONE, forest=None)) == \
        'fine-tuned'
    for method in ('fine-tuned (50-tree forest)',
                   'fine-tuned (weight EMA 0.99, 50-tree forest)',
                   'fine-tuned (layer-wise learning-rate decay 0.8, '
                   '50-tree forest)'):
        assert FINE_TUNING_RECIPE.match(method).group('forest') == '50'
    assert not FINE_TUNING_RECIPE.match('fine-tuned (50-tree forest, '
                                        'weight EMA 0.99)')
    # Another backbone's recipe names its steps; the backbone alone is
    # OTHER_BACKBONE's, not a recipe.
    other = FINE_TUNING_RECIPE.match('fine-tuned (6,000-step backbone, '
                                     '50-tree forest)')
    assert other.group('steps') == '6,000' and other.group('forest') == '50'
    assert not FINE_TUNING_RECIPE.match('fine-tuned (6,000-step backbone)')


def test_committed_variants_name_the_backbone_their_runs_read():
    # A variant is the plan's label, written before the run; the init_from
    # record is what the run read. Runs that meant the 60,000-step backbone
    # but imported an older package that bundled the 6,000-step one once
    # carried the wrong label, and the variant tables merged them with the
    # 60,000-step runs (8 "seeds" 0,0,1,1,...).
    import json
    import re
    wrong = []
    for path in sorted((REPO / 'benchmarks/results').rglob('results.json')):
        run = json.loads(path.read_text())
        named = re.search(r'its ([\d,]+)-step pretrained backbone',
                          run.get('variant') or '')
        steps = (((run.get('init_from') or {}).get('pretraining') or {})
                 .get('pretraining') or {}).get('steps')
        if named and int(named.group(1).replace(',', '')) != steps:
            wrong.append(f'{path.parent.relative_to(REPO)}: {steps}')
    assert not wrong, wrong
