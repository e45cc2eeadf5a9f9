"""The registry of bundled models: members by seed, the messages when none
or several are installed."""
import pytest

from graphormer_sepnorm.bundled import (ENV_VAR,
                                        BundledModelNotInstalled,
                                        available_bundled_models,
                                        bundled_model_paths, member_filename)
from graphormer_sepnorm.checkpoint import CheckpointError, save_model
from graphormer_sepnorm.cli import predict as cli
from graphormer_sepnorm.predict import Predictor

from bundle_helpers import tiny_model, zinc_card


def _member(folder, seed: int):
    return save_model(folder / member_filename('zinc', seed), tiny_model(seed),
                      zinc_card({'name': 'zinc_subset'}))


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
    assert available_bundled_models(tmp_path) == ['zinc']
    with pytest.raises(BundledModelNotInstalled):
        bundled_model_paths('molhiv', tmp_path)


def test_not_installed_says_how_to_train_and_bundle(tmp_path):
    with pytest.raises(BundledModelNotInstalled) as exc:
        bundled_model_paths('molhiv', tmp_path / 'absent')
    message = str(exc.value)
    assert 'molhiv_seed<seed>.safetensors' in message
    assert ('python scripts/train.py --config configs/molhiv_sepnorm.yaml'
            in message)
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
    card = zinc_card({'name': 'zinc_subset'})
    card.task = 'binary'
    save_model(tmp_path / member_filename('zinc', 1), tiny_model(1), card)
    with pytest.raises(CheckpointError, match="zinc_seed1.safetensors is "
                       "installed as a member of the bundled 'zinc' model"):
        Predictor.from_bundled('zinc', directory=tmp_path)
