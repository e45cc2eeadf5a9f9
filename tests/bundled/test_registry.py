"""The registry of bundled models: members by seed, the messages when none
or several are installed."""
import hashlib

import pytest

from graphormer_sepnorm.bundled import (BUNDLED_MODELS, ENV_VAR,
                                        BundledModelNotInstalled,
                                        available_bundled_models, bundled_dir,
                                        bundled_model_paths, member_filename,
                                        member_paths)
from graphormer_sepnorm.checkpoint import (CheckpointError, read_card,
                                           save_model)
from graphormer_sepnorm.cli import predict as cli
from graphormer_sepnorm.predict import Predictor

from bundle_helpers import tiny_model, zinc_card
from conftest import REPO


def _member(folder, seed: int, val_mae: float = 0.5):
    """A member of the bundled 'zinc' model (OGB features, as the shipped
    ones), whose card records :obj:`val_mae`."""
    card = zinc_card({'name': 'zinc_subset'}, featurizer='ogb')
    card.extra['evaluation'] = {'val': {'metric': 'mae', 'value': val_mae}}
    return save_model(folder / member_filename('zinc', seed),
                      tiny_model(seed, featurizer='ogb'), card)


def test_members_by_seed(tmp_path):
    for seed in (10, 0, 2):
        _member(tmp_path, seed)
    # Not members: another name, a seed not written as bundle_runs writes it,
    # no seed, a folder.
    for name in ('zinc_subset_sepnorm.safetensors', 'zinc_seed01.safetensors',
                 'zinc_seedx.safetensors', 'molhiv_seed0.json'):
        (tmp_path / name).write_bytes(b'')
    (tmp_path / 'zinc_seed3.safetensors').mkdir()
    assert [p.name for p in bundled_model_paths('ZINC', tmp_path)] == [
        'zinc_seed0.safetensors', 'zinc_seed2.safetensors',
        'zinc_seed10.safetensors']
    assert available_bundled_models(tmp_path) == ['zinc', 'zinc-single']
    with pytest.raises(BundledModelNotInstalled):
        bundled_model_paths('molhiv', tmp_path)


def test_not_installed_says_how_to_train_and_bundle(tmp_path):
    with pytest.raises(BundledModelNotInstalled) as exc:
        bundled_model_paths('molhiv', tmp_path / 'absent')
    message = str(exc.value)
    assert 'molhiv_seed<seed>.safetensors' in message
    assert ('python scripts/train.py --config '
            'configs/cpu/molhiv_pretrained_sepnorm.yaml '
            'model.init_from=bundled:pretrained-sepnorm '
            "'data.molecule_features=[morgan]'" in message)
    assert 'python scripts/bundle_model.py molhiv runs/<run>' in message
    assert '--checkpoint runs/<run>/model.safetensors' in message
    assert available_bundled_models(tmp_path / 'absent') == []


def test_one_member_predicts_alone_several_as_their_ensemble(
        tmp_path, monkeypatch, capsys):
    path = _member(tmp_path, 0)
    predictor = Predictor.from_bundled('zinc', directory=tmp_path)
    assert predictor.source == str(path)
    alone = predictor.predict(['CCO', 'c1ccccc1O'], num_workers=0)
    assert all(p.ok and p.std is None for p in alone)
    _member(tmp_path, 1)
    other = Predictor.from_checkpoint(tmp_path / member_filename('zinc', 1))
    ensemble = Predictor.from_bundled('zinc', directory=tmp_path)
    together = ensemble.predict(['CCO', 'c1ccccc1O'], num_workers=0)
    for first, second, both in zip(
            alone, other.predict(['CCO', 'c1ccccc1O'], num_workers=0),
            together):
        assert both.value == pytest.approx((first.value + second.value) / 2,
                                           rel=1e-6)
        assert both.std == pytest.approx(abs(first.value - second.value) / 2,
                                         rel=1e-5, abs=1e-7)
    # The command line shows the spread column.
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    assert cli.predict_main(['--model', 'zinc', '--smiles', 'CCO']) == 0
    assert 'prediction_std' in capsys.readouterr().out


def test_a_member_of_the_wrong_task_is_refused(tmp_path):
    _member(tmp_path, 0)
    card = zinc_card({'name': 'zinc_subset'}, featurizer='ogb')
    card.task = 'binary'
    save_model(tmp_path / member_filename('zinc', 1),
               tiny_model(1, featurizer='ogb'), card)
    with pytest.raises(CheckpointError, match="zinc_seed1.safetensors is "
                       "installed as a member of the bundled 'zinc' model"):
        Predictor.from_bundled('zinc', directory=tmp_path)


def test_a_single_model_is_the_best_validation_member(tmp_path):
    """zinc-single is the member of zinc with the lowest validation MAE in
    its card (seed 2 here), loaded alone; it has no files of its own."""
    for seed, mae in ((0, 0.50), (2, 0.30), (5, 0.40)):
        _member(tmp_path, seed, mae)
    assert [p.name for p in bundled_model_paths('zinc-single', tmp_path)] == [
        'zinc_seed2.safetensors']
    single = Predictor.from_bundled('zinc-single', directory=tmp_path)
    assert single.source == str(tmp_path / 'zinc_seed2.safetensors')
    assert all(p.std is None for p in single.predict(['CCO'],
                                                     num_workers=0))
    with pytest.raises(BundledModelNotInstalled, match='bundle_model.py zinc '):
        bundled_model_paths('zinc-single', tmp_path / 'absent')


def test_a_single_model_needs_validation_scores_in_the_cards(tmp_path):
    path = _member(tmp_path, 0)
    card = zinc_card({'name': 'zinc_subset'}, featurizer='ogb')
    save_model(path, tiny_model(0, featurizer='ogb'), card)  # no evaluation
    with pytest.raises(CheckpointError, match='no validation score in its '
                       'model card'):
        bundled_model_paths('zinc-single', tmp_path)


def test_shipped_zinc_takes_a_csv_run_of_zinc_molecules(tmp_path):
    """The bundled 'zinc' model is trained on a CSV of ZINC-subset's
    molecules with OGB features: such a run (results.json's benchmark) fits;
    a run of the ZINC dataset with the ZINC featurizer does not."""
    import json

    import yaml

    from benchmarks.bundling.build import BundleError, _read_run
    from graphormer_sepnorm.bundled import get_bundled_model

    from bundle_helpers import write_run
    zinc_run = write_run(tmp_path / 'zinc_run', seed=0)
    with pytest.raises(BundleError, match="featurizer 'zinc'.* needs "
                       "'zinc_subset' \\('ogb'"):
        _read_run(get_bundled_model('zinc'), zinc_run, None)
    csv_run = tmp_path / 'csv_run'
    csv_run.mkdir()
    data = {'name': 'csv', 'path': 'data/zinc_subset_smiles.csv'}
    save_model(csv_run / 'model.safetensors', tiny_model(0, featurizer='ogb'),
               zinc_card(data, featurizer='ogb'))
    (csv_run / 'config.yaml').write_text(yaml.safe_dump({'data': data}))
    results = json.loads((zinc_run / 'results.json').read_text())
    (csv_run / 'results.json').write_text(json.dumps(
        {**results, 'dataset': 'csv', 'benchmark': 'zinc_subset'}))
    assert _read_run(get_bundled_model('zinc'), csv_run, None).seed == 0


@pytest.mark.parametrize('name', [n for n, e in BUNDLED_MODELS.items()
                                  if e.single_of is None])
def test_the_training_command_is_the_one_of_the_installed_members(name):
    # The command that a missing model's message gives reproduces the
    # shipped members: their cards' config and overrides, and a backbone
    # with the same bytes as the one they were fine-tuned from.
    from graphormer_sepnorm.training.config import load_config
    from graphormer_sepnorm.training.init_from import resolve_init_from
    entry = BUNDLED_MODELS[name]
    paths = member_paths(entry.name, bundled_dir())
    if not paths:
        pytest.skip(f'no {name} members installed')
    config = load_config(REPO / entry.train_config,
                         list(entry.train_overrides), env={},
                         check_paths=False)
    backbone = resolve_init_from(config['model']['init_from'])
    digest = hashlib.sha256(backbone.read_bytes()).hexdigest()
    for path in paths:
        card, _ = read_card(path)
        protocol = card.extra['protocol']
        assert protocol['config'] == entry.train_config, path.name
        assert set(protocol['overrides']) <= set(entry.train_overrides)
        assert card.extra['init_from']['sha256'] == digest, path.name
