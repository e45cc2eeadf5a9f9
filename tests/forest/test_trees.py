"""The forest as tensors (forest/trees.py, forest/fitting.py): its
predictions are scikit-learn's, bit for bit, for classifiers with missing
labels and for regressors; the blend weight is the one a hand count
picks; bad input is refused with a message."""
import numpy as np
import pytest
import torch
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.metrics import roc_auc_score

from graphormer_sepnorm.forest import (BLEND_WEIGHTS, FeatureForest,
                                       choose_blend_weight, fit_feature_forest)


@pytest.fixture(scope='module')
def counts():
    """Count-like features (Poisson), 400 training and 150 new rows."""
    rng = np.random.default_rng(0)
    return (rng.poisson(1.0, (400, 32)).astype(np.float32),
            rng.poisson(1.0, (150, 32)).astype(np.float32), rng)


def test_binary_forests_predict_what_scikit_learn_predicts(counts):
    train, new, rng = counts
    first = (train[:, 0] + train[:, 3] > 2).astype(float)
    second = (train[:, 5] > 1).astype(float)
    second[rng.random(len(second)) < 0.25] = np.nan  # missing labels
    forest = fit_feature_forest(train, np.stack([first, second], 1),
                                'binary', trees=15, seed=3)
    ours = forest(torch.from_numpy(new)).numpy()
    labeled = ~np.isnan(second)
    expected = [
        RandomForestClassifier(15, max_features='sqrt', random_state=3)
        .fit(train, first).predict_proba(new)[:, 1],
        RandomForestClassifier(15, max_features='sqrt', random_state=4)
        .fit(train[labeled], second[labeled]).predict_proba(new)[:, 1]]
    assert ours.shape == (150, 2) and ours.dtype == np.float64
    np.testing.assert_array_equal(ours, np.stack(expected, 1))
    assert forest.trees_per_target == 15 and forest.num_targets == 2


def test_regression_forests_predict_what_scikit_learn_predicts(counts):
    train, new, _ = counts
    target = train[:, 1] * 2.5 - train[:, 7]
    forest = fit_feature_forest(train, target[:, None], 'regression',
                                trees=10, seed=1)
    expected = RandomForestRegressor(10, max_features='sqrt',
                                     random_state=1).fit(train, target)
    np.testing.assert_allclose(forest(torch.from_numpy(new))[:, 0].numpy(),
                               expected.predict(new), rtol=0, atol=1e-12)


def test_a_target_seen_positive_only_predicts_one(counts):
    train, new, _ = counts
    forest = fit_feature_forest(train, np.ones((len(train), 1)), 'binary',
                                trees=3)
    assert torch.equal(forest(torch.from_numpy(new)),
                       torch.ones(len(new), 1, dtype=torch.float64))


def test_blend_mixes_probabilities_and_logits(counts):
    train, new, _ = counts
    forest = fit_feature_forest(train, (train[:, :1] > 1), 'binary', trees=4)
    forest.weight.fill_(0.25)
    x = torch.from_numpy(new)
    network = torch.rand(len(new), 1, dtype=torch.float64)
    expected = 0.25 * network + 0.75 * forest(x)
    torch.testing.assert_close(forest.blend(network, x), expected)
    blended = torch.sigmoid(forest.blend_logits(torch.logit(network), x))
    torch.testing.assert_close(blended, expected.clamp(1e-12, 1 - 1e-12))


def test_a_forest_round_trips_through_its_state_dict(counts):
    train, new, _ = counts
    forest = fit_feature_forest(train, (train[:, :1] > 1), 'binary', trees=4)
    forest.weight.fill_(0.6)
    again = FeatureForest.from_state_dict(dict(forest.state_dict()))
    x = torch.from_numpy(new)
    assert torch.equal(again.blend(torch.zeros(len(new), 1), x),
                       forest.blend(torch.zeros(len(new), 1), x))
    with pytest.raises(ValueError, match='lacks threshold'):
        FeatureForest.from_state_dict({k: v for k, v in
                                       forest.state_dict().items()
                                       if k != 'threshold'})


def test_wrong_features_and_weights_are_refused(counts):
    train, new, _ = counts
    forest = fit_feature_forest(train, (train[:, :1] > 1), 'binary', trees=2)
    with pytest.raises(ValueError, match='reads 32 molecule features per '
                                         'graph, got 31'):
        forest(torch.from_numpy(new[:, :31]))
    state = dict(forest.state_dict())
    state['weight'] = torch.tensor(1.5)
    with pytest.raises(ValueError, match=r'must be in \[0, 1\]'):
        FeatureForest.from_state_dict(state)
    with pytest.raises(ValueError, match='no labeled training molecule'):
        fit_feature_forest(train, np.full((len(train), 1), np.nan), 'binary',
                           trees=2)
    with pytest.raises(ValueError, match="not 'multiclass'"):
        fit_feature_forest(train, train[:, :1], 'multiclass', trees=2)


def test_the_blend_weight_is_the_best_on_validation():
    """Hand-made: the network ranks the first pair of molecules right, the
    forest the second pair; only a blend ranks all four right."""
    labels = torch.tensor([[0.], [1.], [0.], [1.]], dtype=torch.float64)
    network = torch.tensor([[0.1], [0.9], [0.6], [0.5]], dtype=torch.float64)
    forest = torch.tensor([[0.5], [0.4], [0.2], [0.8]], dtype=torch.float64)

    def auc(scores):
        return roc_auc_score(labels.numpy().ravel(), scores.numpy().ravel())

    weight, scores = choose_blend_weight(network, forest, auc, True)
    assert list(scores) == list(BLEND_WEIGHTS)
    assert scores[1.0] == 0.75 and scores[0.0] == 0.75
    # By hand: at w = 0.5 the blend is 0.3, 0.65, 0.4, 0.65 (AUC 0.875);
    # the first w from 1 down that ranks all pairs right wins.
    perfect = [w for w in BLEND_WEIGHTS
               if auc(w * network + (1 - w) * forest) == 1.0]
    assert perfect and weight == perfect[0] and scores[weight] == 1.0
    # Lower is better (an error): the same rule, ties to the network.
    weight, _ = choose_blend_weight(network, network.clone(),
                                    lambda p: float((p - labels).abs().mean()),
                                    False)
    assert weight == 1.0
