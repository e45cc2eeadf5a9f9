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
