"""The baseline's settings are ``chemprop train``'s own defaults, read from
chemprop's command-line parser (the installed version), and the model built
from them has the layers those settings describe."""
import numpy as np
import pytest

pytest.importorskip('chemprop', reason='the chemprop baseline needs the '
                    '[baselines] extra (pip install ".[baselines]")')

from chemprop.cli.common import add_common_args  # noqa: E402
from chemprop.cli.train import add_train_args  # noqa: E402
from configargparse import ArgumentParser  # noqa: E402

from benchmarks.baselines.chemprop_model import (  # noqa: E402
                                                 CHEMPROP_DEFAULTS, build_chemprop_model, chemprop_datasets)
from graphormer_sepnorm.data.molecule_splits import (  # noqa: E402
                                                     MoleculeSplit)


def _cli_defaults():
    parser = add_train_args(add_common_args(ArgumentParser()))
    return parser.parse_args(['--data-path', 'unused.csv'])


def _first(value):
    # chemprop takes some sizes per message-passing block, as a list.
    return value[0] if isinstance(value, list) else value


def test_settings_are_chemprop_trains_defaults():
    cli = _cli_defaults()
    d = CHEMPROP_DEFAULTS
    assert d['message_passing'] == ('atom' if cli.atom_messages else 'bond')
    assert d['atom_features'] == cli.multi_hot_atom_featurizer_mode
    assert d['activation'] == cli.activation.lower()
    assert d['max_epochs'] == cli.epochs
    for key in ('message_hidden_dim', 'depth', 'message_bias', 'dropout',
                'aggregation', 'aggregation_norm', 'ffn_hidden_dim',
                'ffn_num_layers', 'batch_norm', 'warmup_epochs', 'init_lr',
                'max_lr', 'final_lr', 'batch_size'):
        assert d[key] == _first(getattr(cli, key)), key


@pytest.mark.parametrize('dataset,head', [('zinc_subset', 'RegressionFFN'),
                                          ('molhiv',
                                           'BinaryClassificationFFN')])
def test_model_has_the_layers_of_the_settings(dataset, head):
    part = MoleculeSplit(smiles=['CCO', 'c1ccccc1O'],
                         targets=np.array([0.0, 1.0]), ids=np.arange(2))
    featurizer, datasets = chemprop_datasets({'train': part})
    assert len(datasets['train']) == 2
    model = build_chemprop_model(dataset, featurizer, None)
    d = CHEMPROP_DEFAULTS
    assert type(model.message_passing).__name__ == 'BondMessagePassing'
    assert model.message_passing.depth == d['depth']
    assert model.message_passing.output_dim == d['message_hidden_dim']
    assert model.agg.norm == d['aggregation_norm']
    assert type(model.predictor).__name__ == head
    # One hidden layer of 300, then the single task's output.
    linear = [m for m in model.predictor.modules()
              if type(m).__name__ == 'Linear']
    assert [m.out_features for m in linear] == [d['ffn_hidden_dim'], 1]


def test_task_mean_auroc_is_the_mean_over_tasks_with_both_classes():
    # By hand with scikit-learn: task 0 scored on its 4 labelled molecules,
    # task 1 on its 5, task 2 (one class only) left out of the mean.
    import torch
    from sklearn.metrics import roc_auc_score

    from benchmarks.baselines.chemprop_model import TaskMeanAUROC
    nan = float('nan')
    targets = torch.tensor([[1., 0., 1.], [0., 1., 1.], [nan, 0., 1.],
                            [1., 1., nan], [0., 0., 1.]])
    preds = torch.tensor([[.9, .2, .5], [.4, .7, .1], [.3, .1, .9],
                          [.2, .8, .4], [.6, .3, .3]])
    metric = TaskMeanAUROC()
    mask = targets.isfinite()
    # chemprop hands over NaN labels as 0 with a mask; two batches.
    for rows in (slice(0, 2), slice(2, 5)):
        metric.update(preds[rows], targets[rows].nan_to_num(0.0), mask[rows])
    labelled = ~torch.isnan(targets[:, 0])
    expected = (roc_auc_score(targets[labelled, 0], preds[labelled, 0]) +
                roc_auc_score(targets[:, 1], preds[:, 1])) / 2
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-6)
    assert expected != pytest.approx(roc_auc_score(
        targets[mask], preds[mask]), abs=1e-3)  # not chemprop's pooled roc


def test_several_tasks_get_one_output_each():
    part = MoleculeSplit(smiles=['CCO', 'c1ccccc1O'],
                         targets=np.array([[0.0, np.nan, 1.0],
                                           [1.0, 1.0, 0.0]]),
                         ids=np.arange(2))
    featurizer, datasets = chemprop_datasets({'train': part})
    assert datasets['train'][1].y.tolist() == [1.0, 1.0, 0.0]
    model = build_chemprop_model('csv', featurizer, None, n_tasks=3)
    assert model.predictor.n_tasks == 3
    assert type(model.metrics[0]).__name__ == 'TaskMeanAUROC'
