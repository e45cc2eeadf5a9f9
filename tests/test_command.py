"""The graphormer-sepnorm command (graphormer_sepnorm/cli.py) in the
checkout: each subcommand is its script under another name (the same help,
the same exit status), the overview starts without importing any subcommand
(nor torch), and a wrong command is a one-line error. After a non-editable
install: test_installed_command.py."""
import os
import runpy
import subprocess
import sys

import pytest

from graphormer_sepnorm import __version__, cli

from conftest import REPO

# The script behind each subcommand: a new subcommand needs its line here.
SCRIPTS = {'train': 'train.py', 'configs': 'configs.py',
           'pretrain': 'pretrain.py',
           'evaluate': 'evaluate.py',
           'predict': 'predict.py', 'merge': 'merge_predictions.py',
           'convert-hf': 'convert_hf.py'}

# Prints the overview, then the modules it imported beyond the dispatcher.
OVERVIEW = """\
import sys
from graphormer_sepnorm import cli
try:
    cli.main(['--help'], prog='graphormer-sepnorm')
except SystemExit as exit_:
    assert exit_.code == 0, exit_.code
heavy = ('torch', 'numpy', 'torch_geometric', 'rdkit', 'yaml')
print('loaded:', *sorted(
    name for name in sys.modules if name.split('.')[0] in heavy
    or name.startswith('graphormer_sepnorm.')
    and name not in ('graphormer_sepnorm.cli', 'graphormer_sepnorm.lazy_imports')))
"""

# Prints the help of each command named in argv, then the heavy modules
# they imported.
HELPS = """\
import contextlib, io, sys
from graphormer_sepnorm import cli
for command in sys.argv[1:]:
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            cli.main([command, '--help'], prog='graphormer-sepnorm')
        except SystemExit as exit_:
            assert exit_.code == 0, (command, exit_.code)
heavy = ('torch', 'torch_geometric', 'lightning', 'rdkit', 'numpy')
print(*sorted({name.split('.')[0] for name in sys.modules
               if name.split('.')[0] in heavy}))
"""

RECORDED = []


def record(argv, prog):
    """A subcommand that keeps what it was given."""
    RECORDED.append((argv, prog))
    return 7


def help_text(run, capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        run()
    assert exit_.value.code == 0
    return capsys.readouterr().out


def command_names(overview: str) -> list[str]:
    """The first word of each line of the overview's table of commands."""
    table = overview.split('\ncommands:\n', 1)[1].split('\n\n', 1)[0]
    return [line.split()[0] for line in table.splitlines()]


def test_every_command_has_its_script():
    assert list(SCRIPTS) == list(cli.COMMANDS)
    for script in SCRIPTS.values():
        assert (REPO / 'scripts' / script).is_file(), script


@pytest.mark.parametrize('command', SCRIPTS)
def test_command_help_is_its_scripts_help(command, capsys, monkeypatch):
    """Word for word, with the program name replaced (argparse wraps the
    usage line by the length of the name)."""
    monkeypatch.setenv('COLUMNS', '80')
    script = REPO / 'scripts' / SCRIPTS[command]
    monkeypatch.setattr(sys, 'argv', [str(script), '--help'])
    monkeypatch.setattr(sys, 'path', list(sys.path))  # scripts may prepend
    script_help = help_text(
        lambda: runpy.run_path(str(script), run_name='__main__'), capsys)
    command_help = help_text(
        lambda: cli.main([command, '--help'], prog='graphormer-sepnorm'),
        capsys)
    prog = f'graphormer-sepnorm {command}'
    assert script_help.startswith(f'usage: {script.name} ')
    assert command_help.startswith(f'usage: {prog} ')
    assert script_help.replace(script.name, 'PROG').split() == \
        command_help.replace(prog, 'PROG').split()


@pytest.mark.parametrize('command', ['train', 'configs', 'evaluate', 'merge'])
def test_help_names_no_script(command, capsys, monkeypatch):
    """An installed package has no scripts/: these commands' help names
    commands, configs and files, never a script to run."""
    monkeypatch.setenv('COLUMNS', '80')
    text = help_text(lambda: cli.main([command, '--help'],
                                      prog='graphormer-sepnorm'), capsys)
    assert 'scripts/' not in text


def test_overview_lists_the_commands_without_importing_them():
    env = dict(os.environ, COLUMNS='80', PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, '-c', OVERVIEW],
                            capture_output=True, text=True, timeout=120,
                            cwd=REPO, env=env)
    assert result.returncode == 0, result.stderr
    overview, loaded = result.stdout.rsplit('loaded:', 1)
    assert overview.startswith('usage: graphormer-sepnorm [-h] [--version] '
                               'COMMAND [ARGS ...]')
    assert command_names(overview) == list(cli.COMMANDS)
    for name, command in cli.COMMANDS.items():
        assert command.summary in overview, name
    assert loaded.split() == []


def test_help_starts_without_torch():
    """--help is instant: argparse only, no torch, PyG, Lightning or RDKit
    (seconds each)."""
    env = dict(os.environ, COLUMNS='80', PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, '-c', HELPS, *cli.COMMANDS],
                            capture_output=True, text=True, timeout=120,
                            cwd=REPO, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == []


def test_pretrain_takes_no_csv(capsys):
    """--csv trains on labels; pretraining reads a corpus."""
    with pytest.raises(SystemExit) as exit_:
        cli.main(['pretrain', '--csv', 'x.csv', '--targets', 'y'],
                 prog='graphormer-sepnorm')
    assert exit_.value.code == 2
    assert 'unrecognized arguments: --csv' in capsys.readouterr().err


def test_version(capsys):
    assert help_text(lambda: cli.main(['--version'],
                                      prog='graphormer-sepnorm'),
                     capsys) == f'graphormer-sepnorm {__version__}\n'


@pytest.mark.parametrize('argv, problem', [
    ([], 'no COMMAND given'), (['trian'], "invalid choice: 'trian'"),
    (['--config', 'x.yaml'], 'COMMAND')])
def test_wrong_command_is_a_one_line_error(argv, problem, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv, prog='graphormer-sepnorm')
    assert exit_.value.code == 2
    usage, error = capsys.readouterr().err.splitlines()
    assert usage.startswith('usage: graphormer-sepnorm ')
    assert error.startswith('graphormer-sepnorm: error: ') and problem in error


def test_arguments_reach_the_command_verbatim(monkeypatch):
    """Everything after COMMAND, even '--', '-h' and '--version', is the
    command's; its exit status is the program's."""
    monkeypatch.setitem(cli.COMMANDS, 'record',
                        cli.Command(f'{__name__}:record', 'records'))
    RECORDED.clear()
    argv = ['--', '-h', '--version', 'a=b']
    assert cli.main(['record', *argv], prog='g') == 7
    assert RECORDED == [(argv, 'g record')]


def test_exit_status_of_a_real_command(tmp_path, capsys):
    part = tmp_path / 'part1.csv'
    part.write_text('smiles,prediction,error\nCCO,1.0,\n')
    assert cli.main(['merge', str(part), '--output',
                     str(tmp_path / 'merged.csv')],
                    prog='graphormer-sepnorm') == 2
    error = capsys.readouterr().err
    assert error.count('\n') == 1 and 'part1.csv.meta.json is missing' in error
    assert not (tmp_path / 'merged.csv').exists()
