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
