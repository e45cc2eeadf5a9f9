"""The graphormer-sepnorm command after a non-editable install: the wheel of
this checkout (installed_package.py) holds every file of the package and the
console script; the command, run outside the checkout, imports the installed
package, shows the checkout's help texts, reads a config and predicts with
the bundled model."""
import configparser
import csv
import io
import json
import os
import zipfile
from contextlib import redirect_stdout

import pytest

from graphormer_sepnorm import __version__, cli
from graphormer_sepnorm.predict import Predictor

from conftest import REPO

PROG = 'graphormer-sepnorm'
# Real molecules (ethanol, phenol, aspirin, caffeine) and one that is not.
MOLECULES = [('CCO', 'ethanol'), ('c1ccccc1O', 'phenol'),
             ('CC(=O)Oc1ccccc1C(=O)O', 'aspirin'),
             ('Cn1cnc2c1c(=O)n(C)c(=O)n2C', 'caffeine'),
             ('C1CC', 'broken')]

pytestmark = pytest.mark.slow


def checkout_output(argv: list[str], monkeypatch) -> str:
    """What the checkout's command prints for ``argv`` (help and
    ``--print-config`` exit or return 0)."""
    monkeypatch.setenv('COLUMNS', '80')
    out = io.StringIO()
    with redirect_stdout(out):
        try:
            status = cli.main(argv, prog=PROG)
        except SystemExit as exit_:
            status = exit_.code
    assert status == 0
    return out.getvalue()


def test_wheel_holds_the_package_and_the_command(installed_package):
    with zipfile.ZipFile(installed_package.wheel) as archive:
        names = set(archive.namelist())
        entry_points, = (name for name in names
                         if name.endswith('.dist-info/entry_points.txt'))
        parser = configparser.ConfigParser()
        parser.read_string(archive.read(entry_points).decode())
    assert dict(parser['console_scripts']) == {
        PROG: 'graphormer_sepnorm.cli:main'}
    # Every module and every data file (the bundled models) of the source.
    package = installed_package.source / 'graphormer_sepnorm'
    files = {path.relative_to(installed_package.source).as_posix()
             for path in package.rglob('*') if path.is_file()}
    assert any(name.endswith('.safetensors') for name in files)
    assert sorted(files - names) == []
    # The library alone: no research tooling, and matplotlib only with the
    # extras that draw (pip install . installs none).
    assert not [n for n in names if n.split('/')[0] in ('benchmarks',
                                                        'scripts', 'tests')]
    with zipfile.ZipFile(installed_package.wheel) as archive:
        metadata, = (name for name in names
                     if name.endswith('.dist-info/METADATA'))
        requires = [line for line in archive.read(metadata).decode()
                    .splitlines() if line.startswith('Requires-Dist:')]
    plotting = [line for line in requires if 'matplotlib' in line]
    assert plotting and all('extra ==' in line for line in plotting)


def test_command_runs_the_installed_package(installed_package, monkeypatch):
    result = installed_package.run(
        'python', '-c', 'import graphormer_sepnorm; '
        'print(graphormer_sepnorm.__file__)')
    assert result.stdout.strip() == str(
        installed_package.site_packages / 'graphormer_sepnorm' / '__init__.py')
    assert installed_package.run(PROG, '--version').stdout == \
        f'{PROG} {__version__}\n'
    assert installed_package.run(PROG, '--help').stdout == \
        checkout_output(['--help'], monkeypatch)
    module = installed_package.run('python', '-m', 'graphormer_sepnorm',
                                   '--help').stdout
    assert module.startswith('usage: python -m graphormer_sepnorm [-h]')
    wrong = installed_package.run(PROG, 'trian', check=False)
    assert wrong.returncode == 2 and "invalid choice: 'trian'" in wrong.stderr


#: Prints {command: its --help} as JSON: the installed package's command
#: line (graphormer_sepnorm.cli.main, what the console script calls) for
#: every subcommand, in one interpreter rather than one per subcommand.
_EVERY_HELP = '''
import contextlib, io, json, sys
from graphormer_sepnorm import cli
helps = {}
for command in cli.COMMANDS:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            cli.main([command, '--help'], prog=sys.argv[1])
        except SystemExit:
            pass
    helps[command] = out.getvalue()
print(json.dumps(helps))
'''


@pytest.fixture(scope='module')
def installed_helps(installed_package) -> dict:
    result = installed_package.run('python', '-c', _EVERY_HELP, PROG)
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.parametrize('command', cli.COMMANDS)
def test_command_help(installed_helps, command, monkeypatch):
    """The installed command's help is the checkout's, character for
    character (which test_command.py compares with the scripts')."""
    installed = installed_helps[command]
    assert installed.startswith(f'usage: {PROG} {command} ')
    assert installed == checkout_output([command, '--help'], monkeypatch)


@pytest.mark.parametrize('name', ['cpu/zinc_subset_sepnorm',
                                  'configs/cpu/zinc_subset_sepnorm.yaml'])
def test_train_reads_a_shipped_config(installed_package, name, monkeypatch):
    """The configs ship in the package: a name (or the checkout's path)
    finds them from a folder without configs/, and reads as in the
    checkout."""
    assert not (installed_package.outside / 'configs').exists()
    argv = ['train', '--print-config', '--config', name, 'seed=7']
    installed = installed_package.run(PROG, *argv).stdout
    assert 'seed: 7\n' in installed and 'batch_size: 64\n' in installed
    assert installed == checkout_output(argv, monkeypatch)


def test_configs_lists_and_copies_the_shipped_configs(installed_package,
                                                      monkeypatch):
    listing = installed_package.run(PROG, 'configs').stdout
    assert listing == checkout_output(['configs'], monkeypatch)
    names = [line.split()[0] for line in listing.splitlines()]
    shipped = sorted(
        path.relative_to(REPO / 'configs').with_suffix('').as_posix()
        for path in (REPO / 'configs').rglob('*.yaml')
        if path.parent.name != 'base')
    assert names == shipped
    folder = installed_package.outside / 'copied'
    written = installed_package.run(PROG, 'configs', 'cpu/zinc_subset_sepnorm',
                                    '--to', str(folder)).stdout.split()
    assert sorted(written) == sorted(str(folder / name) for name in (
        'cpu/zinc_subset_sepnorm.yaml', 'zinc_subset_sepnorm.yaml',
        'base/common.yaml', 'base/zinc_subset.yaml'))
    for name in written:
        assert open(name).read() == open(
            REPO / 'configs' / os.path.relpath(name, folder)).read()
    # The copy reads as the shipped config.
    copy = installed_package.run(PROG, 'train', '--print-config', '--config',
                                 str(folder / 'cpu/zinc_subset_sepnorm.yaml'))
    shipped = installed_package.run(PROG, 'train', '--print-config',
                                    '--config', 'cpu/zinc_subset_sepnorm')
    assert copy.stdout == shipped.stdout
    again = installed_package.run(PROG, 'configs', 'cpu/zinc_subset_sepnorm',
                                  '--to', str(folder), check=False)
    assert again.returncode == 2 and 'already exist' in again.stderr
    assert again.stderr.count('\n') == 1


def test_predict_with_the_bundled_model(installed_package):
    """A file of molecules in, the checkout's predictions out."""
    folder = installed_package.outside
    (folder / 'molecules.smi').write_text(
        ''.join(f'{smiles} {name}\n' for smiles, name in MOLECULES))
    installed_package.run(PROG, 'predict', '--model', 'zinc', '--input',
                          'molecules.smi', '--output', 'out/all.csv',
                          '--quiet')
    assert (folder / 'out' / 'all.csv.meta.json').is_file()
    rows = list(csv.DictReader(open(folder / 'out' / 'all.csv')))
    assert [(row['smiles'], row['name']) for row in rows] == MOLECULES
    expected = Predictor.from_bundled(
        'zinc', directory=REPO / 'graphormer_sepnorm' / 'bundled').predict(
        [smiles for smiles, _ in MOLECULES], num_workers=0)
    for row, prediction in zip(rows, expected):
        if prediction.ok:
            assert row['error'] == ''
            assert float(row['prediction']) == pytest.approx(
                prediction.value, abs=1e-5), row['name']
        else:
            assert row['prediction'] == '' and row['error'] == \
                prediction.error
    assert [row['error'] != '' for row in rows] == [False] * 4 + [True]


def test_fine_tune_from_the_bundled_backbone(installed_package):
    """The CSV path, outside the checkout, from the backbone in the wheel:
    two steps on real molecules labelled with RDKit's TPSA."""
    from rdkit import Chem
    from rdkit.Chem import rdMolDescriptors

    from conftest import shared_path
    folder = installed_package.outside / 'finetune'
    folder.mkdir()
    lines = shared_path('zinc250k', 'jtvae_test.txt').read_text().split()
    rows = [(s, rdMolDescriptors.CalcTPSA(Chem.MolFromSmiles(s)))
            for s in lines[:60]]
    (folder / 'molecules.csv').write_text(
        'smiles,tpsa\n' + ''.join(f'{s},{v}\n' for s, v in rows))
    (folder / 'finetune.yaml').write_text(
        'data: {name: csv, path: molecules.csv, target_columns: [tpsa], '
        'task: regression, split: random, batch_size: 16, root: data}\n'
        'model: {init_from: "bundled:pretrained-sepnorm", num_layers: 12, '
        'hidden_channels: 80, ffn_channels: 80, num_heads: 8, '
        'multi_hop_max_dist: 5}\n'
        'train: {max_steps: 2, max_epochs: null, progress_bar: false}\n'
        'optim: {warmup_steps: 1}\n'
        'output_dir: runs\nrun_name: tuned\n')
    installed_package.run(PROG, 'train', '--config',
                          str(folder / 'finetune.yaml'),
                          f'data.path={folder / "molecules.csv"}',
                          f'data.root={folder / "data"}',
                          f'output_dir={folder / "runs"}')
    import json
    results = json.loads((folder / 'runs' / 'tuned' /
                          'results.json').read_text())
    record = results['init_from']
    assert record['source'] == 'bundled:pretrained-sepnorm'
    assert record['task'] == 'pretraining'
    assert record['pretraining']['pretraining']['steps'] > 0


def test_train_on_a_csv_then_predict(installed_package):
    """The README's CSV command outside the checkout: a few steps on real
    molecules labelled with RDKit's Crippen logP, then predictions by the
    run's model equal to the checkout's predictions with that model."""
    from rdkit import Chem
    from rdkit.Chem import Crippen

    from conftest import shared_path
    folder = installed_package.outside / 'own_csv'
    folder.mkdir()
    lines = shared_path('zinc250k', 'jtvae_test.txt').read_text().split()
    rows = [(s, Crippen.MolLogP(Chem.MolFromSmiles(s))) for s in lines[:60]]
    (folder / 'molecules.csv').write_text(
        'smiles,logp\n' + ''.join(f'{s},{v}\n' for s, v in rows))
    installed_package.run(PROG, 'train', '--csv',
                          str(folder / 'molecules.csv'), '--targets', 'logp',
                          'train.max_steps=2', 'data.batch_size=16',
                          'train.progress_bar=false',
                          f'data.root={folder / "data"}',
                          f'output_dir={folder / "runs"}')
    # Named after the CSV, beside the steps the run was given.
    run = folder / 'runs' / 'molecules_sep_seed0'
    import json
    assert json.loads((run / 'results.json').read_text())['steps'] == 2
    result = installed_package.run(
        PROG, 'predict', '--checkpoint', str(run / 'model.safetensors'),
        '--smiles', 'CCO', 'c1ccccc1O', '--quiet')
    header, *lines = result.stdout.splitlines()
    expected = Predictor.from_checkpoint(run / 'model.safetensors').predict(
        ['CCO', 'c1ccccc1O'], num_workers=0)
    # One column per target, named as in the training CSV.
    assert header.split() == ['smiles', 'logp', 'error']
    for line, prediction in zip(lines, expected, strict=True):
        assert float(line.split()[1]) == pytest.approx(prediction.value,
                                                       abs=1e-5)
