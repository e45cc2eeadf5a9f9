"""The CSV keys of the configuration: required with data.name=csv,
refused for the built-in datasets, split sizes and split column checked,
columns checked in the file's header before any work."""
import math

import pytest

from graphormer_sepnorm.training.config import (ConfigError, load_config,
                                                resolved_run_name)

from conftest import REPO

CONFIG = str(REPO / 'configs' / 'csv_zinc_properties.yaml')


def test_config_keys():
    zinc = str(REPO / 'configs' / 'zinc_subset_sepnorm.yaml')
    with pytest.raises(ConfigError, match=r"'data.target_columns' applies to "
                       r"data.name=csv only"):
        load_config(zinc, ['data.target_columns=y'], env={})
    with pytest.raises(ConfigError, match=r"'data.split_sizes' must be three "
                       r"fractions > 0 \(train, valid, test\) that sum to 1"):
        load_config(CONFIG, ['data.split_sizes=[0.8,0.1,0.2]'], env={},
                    check_paths=False)
    with pytest.raises(ConfigError, match=r"data.split=column needs "
                       r"'data.split_column'"):
        load_config(CONFIG, ['data.split=column'], env={}, check_paths=False)
    with pytest.raises(ConfigError, match=r"'data.target_columns' must be a "
                       r"non-empty list of non-empty strings, got \[\]"):
        load_config(CONFIG, ['data.target_columns=[]'], env={},
                    check_paths=False)
    config = load_config(CONFIG, ['data.target_columns=logS'], env={},
                         check_paths=False)
    assert config['data']['target_columns'] == ['logS']
    assert math.isclose(sum(config['data']['split_sizes']), 1.0)


def test_columns_are_checked_in_the_header(tmp_path):
    path = tmp_path / 'x.csv'
    path.write_text('SMILES,LogS\nCCO,1\n')
    with pytest.raises(ConfigError, match=r"has no column 'smiles' \(named by "
                       r"data.smiles_column\); columns present: 'SMILES', "
                       r"'LogS'. Did you mean 'SMILES'\?"):
        load_config(CONFIG, [f'data.path={path}', 'data.target_columns=LogS'],
                    env={})
    config = load_config(CONFIG, [f'data.path={path}',
                                  'data.target_columns=LogS',
                                  'data.smiles_column=SMILES'], env={})
    assert config['run_name'] is None
    assert resolved_run_name(config) == 'x_sep_seed0'


def _monitor(*overrides):
    """The selection metric of the CSV example with :obj:`overrides`, and
    the mode of the best-checkpoint callback."""
    from graphormer_sepnorm.training.metrics import (HIGHER_IS_BETTER,
                                                     monitor_metric)
    config = load_config(CONFIG, list(overrides), env={}, check_paths=False)
    metric = monitor_metric(config)
    return metric, 'max' if HIGHER_IS_BETTER[metric] else 'min'


def test_monitor_follows_the_task_unless_set():
    """The CSV example sets no train.monitor: switching it to a binary task
    needs no other change. An explicit monitor wins, and one the task does
    not report is refused."""
    assert _monitor('data.task=binary', 'data.target_columns=active') == (
        'rocauc', 'max')
    assert _monitor('data.task=binary', 'data.target_columns=[p,q]') == (
        'rocauc', 'max')
    # The example's two regression targets: the standardized MAE
    assert _monitor() == ('std_mae', 'min')
    assert _monitor('data.target_columns=logS') == ('mae', 'min')
    # Explicit
    assert _monitor('data.task=binary', 'data.target_columns=active',
                    'train.monitor=prauc') == ('prauc', 'max')
    assert _monitor('train.monitor=mae') == ('mae', 'min')
    assert _monitor('train.monitor=r2') == ('r2', 'max')
    with pytest.raises(ConfigError, match=r"'train.monitor' is 'mae', a "
                       r"metric the binary task does not report; choose one "
                       r"of rocauc, prauc, or null for the default "
                       r"\(rocauc\)"):
        _monitor('data.task=binary', 'data.target_columns=active',
                 'train.monitor=mae')
    with pytest.raises(ConfigError, match=r"'train.monitor' is 'std_mae', a "
                       r"metric one regression target does not report; "
                       r"choose one of mae, rmse, r2, or null for the "
                       r"default \(mae\)"):
        _monitor('data.target_columns=logS', 'train.monitor=std_mae')
    with pytest.raises(ConfigError, match=r"'train.monitor' is 'std_rmse', a "
                       r"metric the binary task does not report"):
        _monitor('data.task=binary', 'data.target_columns=[p,q]',
                 'train.monitor=std_rmse')


def test_id_column(tmp_path):
    """data.id_column (copied into test_predictions.csv) must be a column
    of the file, and neither the SMILES, a target, nor a name that file
    gives another column; only a CSV has one."""
    path = tmp_path / 'x.csv'
    path.write_text('name,smiles,a,b\nethanol,CCO,1,2\n')
    base = [f'data.path={path}', 'data.target_columns=[a,b]']
    config = load_config(CONFIG, base + ['data.id_column=name'], env={})
    assert config['data']['id_column'] == 'name'
    assert load_config(CONFIG, base, env={})['data']['id_column'] is None
    with pytest.raises(ConfigError, match=r"has no column 'Name' \(named by "
                       r"data.id_column\).* Did you mean 'name'\?"):
        load_config(CONFIG, base + ['data.id_column=Name'], env={})
    for name in ('a', 'smiles', 'b_prediction'):
        with pytest.raises(ConfigError, match=rf"'data.id_column' is "
                           rf"'{name}', the name of another column of "
                           rf"test_predictions.csv"):
            load_config(CONFIG, base + [f'data.id_column={name}'], env={},
                        check_paths=False)
    # One target: its label and prediction are 'target' and 'prediction'
    with pytest.raises(ConfigError, match=r"'data.id_column' is "
                       r"'prediction'"):
        load_config(CONFIG, [f'data.path={path}', 'data.target_columns=a',
                             'data.id_column=prediction'], env={},
                    check_paths=False)
    # Without an id column the index is 'id': no SMILES column of that name
    with pytest.raises(ConfigError, match=r"'data.smiles_column' is 'id'"):
        load_config(CONFIG, base + ['data.smiles_column=id'], env={},
                    check_paths=False)
    zinc = str(REPO / 'configs' / 'zinc_subset_sepnorm.yaml')
    with pytest.raises(ConfigError, match=r"'data.id_column' applies to "
                       r"data.name=csv only"):
        load_config(zinc, ['data.id_column=name'], env={})
