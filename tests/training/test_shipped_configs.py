"""The configs shipped in the package (training/config/shipped.py): found
by name or by their configs/ path from any folder, listed and copied with
their includes, and a wrong name is a one-line error naming the shipped
ones."""
import pytest

from graphormer_sepnorm.training.config import ConfigError, load_config
from graphormer_sepnorm.training.config.shipped import (
    SHIPPED_CONFIGS, copy_config, find_config, shipped_config_names)
from graphormer_sepnorm.cli.configs import configs_main
from training_helpers import CONFIGS


def test_the_shipped_folder_is_the_repository_configs():
    assert SHIPPED_CONFIGS == CONFIGS.resolve()


def test_names_are_the_runnable_yaml_files():
    names = shipped_config_names()
    on_disk = sorted(p.relative_to(CONFIGS).with_suffix('').as_posix()
                     for p in CONFIGS.rglob('*.yaml'))
    assert names == [n for n in on_disk if not n.startswith('base/')]
    assert 'zinc_subset_sepnorm' in names and \
        'cpu/zinc_subset_sepnorm' in names


@pytest.mark.parametrize('name', ['cpu/zinc_subset_sepnorm',
                                  'cpu/zinc_subset_sepnorm.yaml',
                                  'configs/cpu/zinc_subset_sepnorm.yaml'])
def test_a_name_or_a_configs_path_finds_the_file_from_anywhere(
        name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no configs/ here
    path = find_config(name)
    assert path == CONFIGS.resolve() / 'cpu' / 'zinc_subset_sepnorm.yaml'
    config = load_config(name, ['seed=3'], env={})
    assert config['data']['batch_size'] == 64 and config['seed'] == 3


def test_an_existing_file_wins_over_a_shipped_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'configs').mkdir()
    mine = tmp_path / 'configs' / 'zinc_subset_sepnorm.yaml'
    mine.write_text(f"defaults: [{CONFIGS / 'zinc_subset_sepnorm.yaml'}]\n"
                    "seed: 11\n")
    assert find_config('configs/zinc_subset_sepnorm.yaml') == \
        mine.relative_to(tmp_path)
    assert load_config('configs/zinc_subset_sepnorm.yaml', env={})[
        'seed'] == 11


def test_an_unknown_name_lists_the_shipped_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as error:
        find_config('zinc_subset_sepnrom')
    message = str(error.value)
    assert '\n' not in message
    assert message.startswith('Config file zinc_subset_sepnrom does not '
                              'exist; pass an existing YAML file')
    assert "Did you mean 'zinc_subset_sepnorm'?" in message
    assert 'cpu/molhiv_sepnorm' in message
    with pytest.raises(ConfigError, match='does not exist'):
        find_config(tmp_path / 'absent.yaml')


def test_copy_writes_the_config_and_its_includes(tmp_path):
    written = copy_config('cpu/zinc_subset_sepnorm', tmp_path / 'mine')
    relative = sorted(p.relative_to(tmp_path / 'mine').as_posix()
                      for p in written)
    # cpu/zinc_subset_sepnorm.yaml includes ../zinc_subset_sepnorm.yaml,
    # which includes base/common.yaml and base/zinc_subset.yaml.
    assert relative == ['base/common.yaml', 'base/zinc_subset.yaml',
                        'cpu/zinc_subset_sepnorm.yaml',
                        'zinc_subset_sepnorm.yaml']
    for name in relative:
        assert (tmp_path / 'mine' / name).read_bytes() == \
            (CONFIGS / name).read_bytes()
    assert load_config(tmp_path / 'mine' / 'cpu' / 'zinc_subset_sepnorm.yaml',
                       env={}) == load_config('cpu/zinc_subset_sepnorm',
                                              env={})
    with pytest.raises(ConfigError, match='already exist'):
        copy_config('cpu/zinc_subset_sepnorm', tmp_path / 'mine')
    with pytest.raises(ConfigError, match="'base/common' is not a shipped "
                       "config"):
        copy_config('base/common', tmp_path / 'other')


def test_configs_command(tmp_path, capsys):
    assert configs_main([]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listing] == shipped_config_names()
    row = next(line for line in listing
               if line.startswith('cpu/zinc_subset_sepnorm '))
    first = (CONFIGS / 'cpu' / 'zinc_subset_sepnorm.yaml').read_text(
    ).splitlines()[0]
    assert row.split(None, 1)[1] == first.lstrip('# ')
    assert configs_main(['csv_zinc_properties', '--to',
                         str(tmp_path)]) == 0
    assert capsys.readouterr().out.split() == [
        str(tmp_path / 'csv_zinc_properties.yaml'),
        str(tmp_path / 'base' / 'common.yaml')]
    assert configs_main(['nope', '--to', str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: 'nope' is not a shipped config") and \
        error.count('\n') == 1
