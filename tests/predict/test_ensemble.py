"""Tests for the EnsemblePredictor (graphormer_sepnorm.predict.ensemble):
the mean and the population std of the members' values (against each member
predicting alone and NumPy), probabilities averaged for binary models,
mismatching members refused, and the fingerprint, resume, shards, top-K and
worker processes covering every member."""
import pickle
from pathlib import Path

import numpy as np
import pytest

from graphormer_sepnorm.checkpoint import CheckpointError
from graphormer_sepnorm.predict import (EnsemblePredictor, PredictionError,
                                        Predictor, merge_predictions)
from graphormer_sepnorm.data import molecule_graphs
from graphormer_sepnorm.predict.run_record import read_record, write_record

from predict_helpers import (MAX_NODES, one_thread, read_csv,  # noqa: F401
                             save_ogb_model, save_zinc_model, write_csv,
                             zinc_ckpt, zinc_members, zinc_smiles)

BAD = ['not a smiles', 'C' * (MAX_NODES + 1)]


@pytest.fixture(scope='module')
def ensemble(zinc_members) -> EnsemblePredictor:
    return Predictor.from_checkpoints(zinc_members)


@pytest.fixture
def library(zinc_smiles, tmp_path) -> Path:
    """A CSV of 200 real ZINC molecules with ids and two bad rows."""
    smiles = zinc_smiles[:198] + BAD
    return write_csv(tmp_path / 'library.csv', ['id', 'smiles'],
                     [[f'Z{i}', s] for i, s in enumerate(smiles)])


def _member_values(paths, smiles, **options) -> np.ndarray:
    """Each checkpoint predicting alone: [members, molecules, outputs]."""
    values = [[p.value for p in Predictor.from_checkpoint(path).predict(
        smiles, num_workers=0, **options)] for path in paths]
    return np.array(values, dtype=np.float64).reshape(
        len(paths), len(smiles), -1)


def _predict(predictor, path, out, **options):
    return predictor.predict_file(path, out, chunk_size=64, num_workers=0,
                                  progress=False, **options)


# Values ######################################################################


def test_mean_and_population_std_of_the_members(ensemble, zinc_members,
                                                zinc_smiles):
    smiles = zinc_smiles[:50]
    predictions = ensemble.predict(smiles + BAD, batch_size=16,
                                   num_workers=0)
    members = _member_values(zinc_members, smiles, batch_size=16)[..., 0]
    values = [p.value for p in predictions[:50]]
    stds = [p.std for p in predictions[:50]]
    assert values == pytest.approx(members.mean(axis=0), rel=1e-12)
    assert stds == pytest.approx(members.std(axis=0, ddof=0), rel=1e-9)
    # The population std, not the sample std (3 members: a factor 1.22).
    assert not np.allclose(stds, members.std(axis=0, ddof=1), rtol=0.1)
    assert min(stds) > 0
    for p in predictions[50:]:
        assert not p.ok and p.value is None and p.std is None
    assert 'max_nodes' in predictions[-1].error


def test_binary_members_average_probabilities(molhiv_smiles, tmp_path):
    paths = [save_ogb_model(tmp_path / f'm{seed}.safetensors', seed)
             for seed in (1, 2, 3)]
    smiles = molhiv_smiles[:30]
    ensemble = Predictor.from_checkpoints(paths)
    predictions = ensemble.predict(smiles, num_workers=0)
    ok = [k for k, p in enumerate(predictions) if p.ok]
    assert len(ok) >= 28
    probabilities = _member_values(paths, [smiles[k] for k in ok])[..., 0]
    values = np.array([predictions[k].value for k in ok])
    assert values == pytest.approx(probabilities.mean(axis=0), rel=1e-12)
    assert [predictions[k].std for k in ok] == pytest.approx(
        probabilities.std(axis=0), rel=1e-9)
    assert ((0 < values) & (values < 1)).all()
    # Not the probability of the mean logit.
    logits = np.log(probabilities / (1 - probabilities))
    of_mean_logit = 1 / (1 + np.exp(-logits.mean(axis=0)))
    assert np.abs(values - of_mean_logit).max() > 1e-3
    assert ensemble.value_description == (
        'mean over the 3 members of the probability of the positive class')


def test_several_outputs_get_a_std_column_each(zinc_smiles, tmp_path):
    paths = [save_zinc_model(tmp_path / f'm{seed}.safetensors', seed,
                             mean=[0.5, -1.0], std=[2.0, 0.5],
                             target_names=('logp', 'qed'), out_channels=2)
             for seed in (4, 5)]
    ensemble = Predictor.from_checkpoints(paths)
    assert ensemble.prediction_columns == ['logp', 'qed']
    assert ensemble.output_columns == ['logp', 'logp_std', 'qed', 'qed_std']
    smiles = zinc_smiles[:20]
    members = _member_values(paths, smiles)
    predictions = ensemble.predict(smiles, num_workers=0)
    assert all(len(p.value) == 2 and len(p.std) == 2 for p in predictions)
    assert np.array([p.value for p in predictions]) == pytest.approx(
        members.mean(axis=0), rel=1e-12)
    assert np.array([p.std for p in predictions]) == pytest.approx(
        members.std(axis=0), rel=1e-9)
    row = ensemble.predict_table(smiles, num_workers=0)[0]
    assert list(row) == ['smiles', 'logp', 'logp_std', 'qed', 'qed_std',
                         'error']
    assert (row['logp'], row['qed']) == predictions[0].value
    assert (row['logp_std'], row['qed_std']) == predictions[0].std


def test_one_checkpoint_is_a_single_model(zinc_ckpt, zinc_smiles):
    single = Predictor.from_checkpoints([zinc_ckpt])
    assert type(single) is Predictor and not single.with_std
    assert single.output_columns == ['prediction']
    direct = Predictor.from_checkpoint(zinc_ckpt)
    assert single.fingerprint == direct.fingerprint
    predictions = single.predict(zinc_smiles[:10])
    assert predictions == direct.predict(zinc_smiles[:10])
    assert all(p.std is None for p in predictions)
    assert list(single.predict_table(['CCO'])[0]) == ['smiles', 'prediction',
                                                      'error']


def _recording(function, calls: list, what):
    """:obj:`function`, appending :obj:`what(first argument)` to
    :obj:`calls` on each call."""
    def recorded(first, *args):
        calls.append(what(first))
        return function(first, *args)
    return recorded


def test_molecules_are_featurized_once_for_all_members(
        ensemble, zinc_smiles, monkeypatch):
    featurized, forwards = [], []
    monkeypatch.setattr(molecule_graphs, 'prepare_graph', _recording(
        molecule_graphs.prepare_graph, featurized, lambda smiles: smiles))
    for k, member in enumerate(ensemble.members):
        monkeypatch.setattr(member.model, 'graph_embedding', _recording(
            member.model.graph_embedding, forwards,
            lambda batch, k=k: (k, batch.num_graphs)))
    ensemble.predict(zinc_smiles[:20], batch_size=8, num_workers=0)
    assert featurized == zinc_smiles[:20]
    # Each member encodes each of the three batches once.
    assert sorted(forwards) == [(k, n) for k in range(3) for n in (4, 8, 8)]


# Members that do not fit #####################################################


@pytest.mark.parametrize('field,options', [
    ('task', {'task': 'binary'}),
    ('number of outputs', {'out_channels': 2}),
    ('target names', {'target_names': ('logp', )}),
    ('max_nodes', {'max_nodes': MAX_NODES + 10}),
])
def test_mismatching_member_is_named(zinc_members, tmp_path, field,
                                     options):
    odd = save_zinc_model(tmp_path / 'odd.safetensors', seed=7, **options)
    with pytest.raises(CheckpointError) as exc:
        Predictor.from_checkpoints(zinc_members[:2] + [odd])
    message = str(exc.value)
    assert message.startswith(f'Ensemble member {odd} has {field} ')
    assert f'but {zinc_members[0]} has' in message
    assert '\n' not in message


def test_other_featurizer_and_repeated_members(zinc_members, tmp_path):
    ogb = save_ogb_model(tmp_path / 'ogb.safetensors')
    with pytest.raises(CheckpointError,
                       match=f"member {ogb} has featurizer 'ogb' but"):
        Predictor.from_checkpoints([zinc_members[0], ogb])
    copy = tmp_path / 'copy.safetensors'
    copy.write_bytes(zinc_members[1].read_bytes())
    with pytest.raises(CheckpointError, match=f'{zinc_members[1]} and {copy} '
                       f'are the same model'):
        Predictor.from_checkpoints([zinc_members[1], copy])
    with pytest.raises(PredictionError, match='at least one'):
        Predictor.from_checkpoints([])
    with pytest.raises(PredictionError, match='list of checkpoints'):
        Predictor.from_checkpoints(str(zinc_members[0]))
    with pytest.raises(PredictionError, match='two or more'):
        EnsemblePredictor([Predictor.from_checkpoint(zinc_members[0])])


# Fingerprint, pickling, workers ##############################################


def test_fingerprint_covers_every_member_in_order(ensemble, zinc_members,
                                                  tmp_path):
    again = Predictor.from_checkpoints(list(zinc_members))
    assert again.fingerprint == ensemble.fingerprint
    assert len(ensemble.fingerprint) == 64
    other = save_zinc_model(tmp_path / 'other.safetensors', seed=20)
    others = [zinc_members[:2], zinc_members[::-1],
              zinc_members[:2] + [other], zinc_members + [other]]
    fingerprints = {Predictor.from_checkpoints(paths).fingerprint
                    for paths in others}
    fingerprints |= {m.fingerprint for m in ensemble.members}
    assert len(fingerprints) == len(others) + 3
    assert ensemble.fingerprint not in fingerprints


def test_pickled_ensemble_predicts_the_same(ensemble, zinc_smiles):
    copy = pickle.loads(pickle.dumps(ensemble))
    assert copy.fingerprint == ensemble.fingerprint
    assert copy.predict(zinc_smiles[:20], num_workers=0) == \
        ensemble.predict(zinc_smiles[:20], num_workers=0)


def test_worker_processes_equal_in_process(ensemble, zinc_smiles):
    smiles = zinc_smiles[:100] + BAD
    local = ensemble.predict(smiles, batch_size=16, num_workers=0,
                             chunk_size=20)
    pooled = ensemble.predict(smiles, batch_size=16, num_workers=2,
                              chunk_size=20)
    assert pooled == local  # Same chunks, same batches: the same floats.
    assert all(p.std is not None for p in pooled[:100])


# Files: columns, resume, shards, top-K #######################################


def test_file_has_std_columns_and_resumes_only_the_same_members(
        ensemble, zinc_members, library, tmp_path):
    reference = tmp_path / 'reference.csv'
    _predict(ensemble, library, reference)
    rows = read_csv(reference)
    assert list(rows[0]) == ['id', 'smiles', 'prediction', 'prediction_std',
                             'error']
    expected = ensemble.predict([r['smiles'] for r in rows], chunk_size=64,
                                num_workers=0)
    assert [(float(r['prediction']), float(r['prediction_std']))
            for r in rows[:198]] == [(p.value, p.std) for p in expected[:198]]
    assert rows[-1]['prediction_std'] == '' and rows[-1]['error']
    # Interrupted after 100 rows.
    out = tmp_path / 'out.csv'
    lines = reference.read_bytes().split(b'\n')
    out.write_bytes(b'\n'.join(lines[:101]) + b'\n')
    record = read_record(reference)
    record.complete = False
    write_record(out, record)
    for members in (zinc_members[:2], zinc_members[::-1]):
        with pytest.raises(PredictionError, match='what differs: the model'):
            _predict(Predictor.from_checkpoints(members), library, out,
                     resume=True)
    summary = _predict(Predictor.from_checkpoints(zinc_members), library,
                       out, resume=True)
    assert summary.kept == 100
    assert out.read_bytes() == reference.read_bytes()


def test_shards_merge_and_workers_give_the_unsharded_file(ensemble, library,
                                                          tmp_path):
    reference = tmp_path / 'reference.csv'
    _predict(ensemble, library, reference)
    parts = [tmp_path / f'part{k}.csv' for k in (1, 2)]
    for k, part in enumerate(parts, 1):
        ensemble.predict_file(library, part, chunk_size=64, num_workers=2,
                              shard=f'{k}/2', progress=False)
    merged = tmp_path / 'merged.csv'
    merge_predictions(parts, merged, progress=False)
    assert merged.read_bytes() == reference.read_bytes()


def test_top_k_ranks_on_the_mean(ensemble, library, tmp_path):
    _predict(ensemble, library, tmp_path / 'all.csv')
    full = read_csv(tmp_path / 'all.csv')
    top = tmp_path / 'top.csv'
    _predict(ensemble, library, top, top=10, by='prediction')
    rows = read_csv(top)
    assert list(rows[0]) == ['row', 'id', 'smiles', 'prediction',
                             'prediction_std']
    best = sorted((r for r in full if r['prediction']),
                  key=lambda r: -float(r['prediction']))[:10]
    assert [(r['id'], r['prediction'], r['prediction_std'])
            for r in rows] == [(r['id'], r['prediction'], r['prediction_std'])
                               for r in best]
    with pytest.raises(PredictionError, match='choose one of: prediction$'):
        _predict(ensemble, library, top, top=10, by='prediction_std')
