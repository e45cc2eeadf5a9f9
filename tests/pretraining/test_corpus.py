"""The pretraining corpus on a tiny fake molsets wheel and tiny exclusion
sources laid out like ../shared/data; every count below is counted by hand
from the molecules listed here."""
import csv
import gzip
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from rdkit import Chem

from graphormer_sepnorm.data.errors import DataError
from graphormer_sepnorm.pretraining import corpus as corpus_module
from graphormer_sepnorm.pretraining.corpus import (build_corpus, corpus_dir,
                                                   read_manifest)
from graphormer_sepnorm.pretraining.exclusions import (
    MissingExclusionSourceError)
from graphormer_sepnorm.pretraining.moses_wheel import (WheelDownloadError,
                                                        fetch_moses_wheel,
                                                        read_moses_member)

REPO = Path(__file__).resolve().parents[2]

# Excluded molecules, as the sources write them.
ETHOXYBENZENE = 'CCOc1ccccc1'        # ZINC-subset val, ZINC-full val
PARACETAMOL = 'CC(=O)Nc1ccc(O)cc1'   # ZINC-subset test, ZINC-full test
PYRIDONE = 'O=c1cccc[nH]1'           # ZINC-full val
L_ALANINE = 'C[C@H](N)C(=O)O'        # ZINC-full test (= the CSV example)
METHYLPYRAZOLE = 'Cc1cc[nH]n1'       # MolHIV valid
GLYCEROL = 'OCC(O)CO'                # MolHIV test

# The corpus files. Comments: what happens to each row.
KEPT = ['CCO', 'c1ccccc1', 'CCCCCC', 'c1ccc2ccccc2c1', 'CCN', 'CCCl',
        'CCBr', 'CC(C)O', 'CC(C)=O', 'c1ccncc1', 'C1CCCCC1', 'CCOC(C)=O',
        'CN(C)C', 'CCS', 'CC#N', 'O=C(O)c1ccccc1', 'Cc1ccccc1', 'CCCCO',
        'NCCO']
TRAIN_ROWS = [
    'CCO', 'OCC',                 # kept; a duplicate written differently
    'c1ccccc1OCC',                # ethoxybenzene written differently: SMILES
    'Oc1ccccn1',                  # 2-hydroxypyridine: InChIKey of 2-pyridone
    'CC(N)C(=O)O',                # alanine without stereo: connectivity
    'C1=CC=CC=C1', 'not_a_smiles',  # kept (Kekule benzene); unparsable
    'CCCCCC', 'c1ccc2ccccc2c1',   # kept: in ZINC-subset / MolHIV *train*
    'Cc1ccn[nH]1',                # the other methylpyrazole tautomer
    'C(O)C(O)CO', 'OC(CO)CO',     # glycerol: SMILES match; then a duplicate
    'CCN', 'CCCl', 'CCBr', 'CC(C)O', 'CC(C)=O', 'C1CCCCC1', 'CCOC(C)=O',
]
TEST_ROWS = ['CC(=O)Nc1ccc(O)cc1', 'CCO', 'C1CC', 'n1ccccc1', 'CN(C)C',
             'CCS', 'CC#N', 'OC(=O)c1ccccc1']
SCAFFOLD_ROWS = ['Cc1ccccc1', 'CCCCO', 'NCCO', 'C(C)O']


def write_gz_csv(path, header, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, 'wt', newline='') as f:
        writer = csv.writer(f)
        if header:
            writer.writerow(header)
        writer.writerows(rows)


def fake_wheel(path, members=None):
    members = members or {'train': TRAIN_ROWS, 'test': TEST_ROWS,
                          'test_scaffolds': SCAFFOLD_ROWS}
    with zipfile.ZipFile(path, 'w') as wheel:
        wheel.writestr('moses/__init__.py', '')
        for name, rows in members.items():
            buffer = io.StringIO()
            buffer.write('SMILES\n' + ''.join(r + '\n' for r in rows))
            wheel.writestr(f'moses/dataset/data/{name}.csv.gz',
                           gzip.compress(buffer.getvalue().encode()))
    return path


def exclusion_root(root):
    smiles = root / 'ZINC-proxy' / 'smiles'
    smiles.mkdir(parents=True)
    for split, molecules in (('train', ['CCCCCC']), ('val', [ETHOXYBENZENE]),
                             ('test', [PARACETAMOL])):
        (smiles / f'{split}.csv').write_text(
            'smiles,y\n' + ''.join(f'{m},0.5\n' for m in molecules))
    zinc = root / 'zinc250k'
    zinc.mkdir()
    (zinc / 'jtvae_valid.txt').write_text(f'{ETHOXYBENZENE}\n{PYRIDONE}\n')
    (zinc / 'jtvae_test.txt').write_text(f'{PARACETAMOL}\n{L_ALANINE}\n')
    hiv = root / 'ogbg_molhiv'
    write_gz_csv(hiv / 'mapping' / 'mol.csv.gz', ['HIV_active', 'smiles',
                                                  'mol_id'],
                 [[0, 'c1ccc2ccccc2c1', ''], [1, METHYLPYRAZOLE, ''],
                  [0, GLYCEROL, ''], [0, 'CCN(CC)CC', '']])
    for split, ids in (('train', [0, 3]), ('valid', [1]), ('test', [2])):
        write_gz_csv(hiv / 'split' / 'scaffold' / f'{split}.csv.gz', None,
                     [[i] for i in ids])
    return root


@pytest.fixture
def setup(tmp_path):
    return (fake_wheel(tmp_path / 'molsets-0.3.1-py3-none-any.whl'),
            exclusion_root(tmp_path / 'shared'), tmp_path / 'data')


def canonical(smiles):
    return Chem.MolToSmiles(Chem.MolFromSmiles(smiles))


def read_lines(path):
    return path.read_text().splitlines()


def build(setup, **kwargs):
    wheel, shared, data = setup
    options = dict(wheel=wheel, exclusion_root=shared, val_size=5, seed=0,
                   processes=1, progress=False)
    options.update(kwargs)
    return build_corpus(data, **options)


def test_the_pairs_are_what_the_rules_need():
    # The truth the tests rely on, from RDKit: different canonical SMILES,
    # the same InChIKey (tautomers) or the same first block only (stereo).
    for a, b in (('Oc1ccccn1', PYRIDONE), ('Cc1ccn[nH]1', METHYLPYRAZOLE)):
        assert canonical(a) != canonical(b)
        assert Chem.MolToInchiKey(Chem.MolFromSmiles(a)) == \
            Chem.MolToInchiKey(Chem.MolFromSmiles(b))
    flat, chiral = (Chem.MolToInchiKey(Chem.MolFromSmiles(s))
                    for s in ('CC(N)C(=O)O', L_ALANINE))
    assert flat != chiral and flat[:14] == chiral[:14]


def test_counts_and_files_against_hand_count(setup):
    manifest = build(setup)
    counts = manifest['counts']
    assert counts == {'read': 31, 'unparsable': 2, 'duplicates': 4,
                      'unique': 25, 'removed': 6, 'train': 14, 'val': 5}
    files = manifest['source']['files']
    assert files['train'] == {'member': 'moses/dataset/data/train.csv.gz',
                              'columns': ['SMILES'], 'read': 19,
                              'unparsable': 1, 'duplicates': 2,
                              'removed': 5, 'kept': 11}
    assert (files['test']['removed'], files['test']['duplicates'],
            files['test_scaffolds']['duplicates']) == (1, 1, 1)
    exclusions = manifest['exclusions']
    assert exclusions['removed_by_rule'] == {
        'canonical_smiles': 3, 'inchikey': 2, 'inchikey_connectivity': 1}
    matched = {(s['source'], s['split']): tuple(s['matched'].values())
               for s in exclusions['splits']}
    assert matched == {('zinc_subset', 'val'): (1, 0, 0),
                       ('zinc_subset', 'test'): (1, 0, 0),
                       ('zinc_full', 'val'): (1, 1, 0),
                       ('zinc_full', 'test'): (1, 0, 1),
                       ('molhiv', 'val'): (0, 1, 0),
                       ('molhiv', 'test'): (1, 0, 0),
                       ('csv_example', 'all'): (1, 0, 1)}
    assert [s['molecules'] for s in exclusions['splits']] == \
        [1, 1, 2, 2, 1, 1, 2]
    assert exclusions['skipped'] == []
    # The files: the kept molecules, canonical, each once, val held out.
    directory = corpus_dir(setup[2])
    train, val = (read_lines(directory / f) for f in ('train.smi',
                                                      'val.smi'))
    assert len(val) == 5 and not set(train) & set(val)
    assert sorted(train + val) == sorted(canonical(s) for s in KEPT)
    assert manifest['files']['train.smi']['lines'] == 14
    assert json.loads((directory / 'manifest.json').read_text()) == manifest
    assert sorted(p.name for p in directory.parent.iterdir()) == ['moses']


def test_shuffle_is_seeded_and_workers_change_nothing(setup, tmp_path):
    build(setup)
    other = tmp_path / 'other'
    build((setup[0], setup[1], other), processes=2)
    for name in ('train.smi', 'val.smi'):
        assert read_lines(corpus_dir(setup[2]) / name) == \
            read_lines(corpus_dir(other) / name)
    reseeded = tmp_path / 'reseeded'
    build((setup[0], setup[1], reseeded), seed=1)
    assert read_lines(corpus_dir(reseeded) / 'train.smi') != \
        read_lines(corpus_dir(setup[2]) / 'train.smi')


def test_rerun_is_a_no_op_and_other_settings_are_refused(setup, tmp_path):
    first = build(setup)
    train = corpus_dir(setup[2]) / 'train.smi'
    stamp = train.stat().st_mtime_ns
    # Neither the wheel nor the exclusion sources are read again.
    again = build(setup, wheel=tmp_path / 'absent.whl',
                  exclusion_root=tmp_path / 'absent')
    assert again == first and train.stat().st_mtime_ns == stamp
    with pytest.raises(DataError, match='val_size.*remove'):
        build(setup, val_size=6)


def test_missing_exclusion_source_is_an_error_unless_skipped(setup):
    wheel, shared, data = setup
    (shared / 'ogbg_molhiv' / 'split' / 'scaffold' / 'test.csv.gz').unlink()
    with pytest.raises(MissingExclusionSourceError,
                       match='--molhiv.*--skip molhiv'):
        build(setup)
    assert not (data / 'pretraining').exists()
    manifest = build(setup, skip=['molhiv'])
    assert manifest['exclusions']['skipped'] == ['molhiv']
    assert manifest['settings']['skipped_exclusions'] == ['molhiv']
    assert {s['source'] for s in manifest['exclusions']['splits']} == \
        {'zinc_subset', 'zinc_full', 'csv_example'}
    # The methylpyrazole tautomer and glycerol now stay.
    assert manifest['counts']['removed'] == 4
    kept = read_lines(corpus_dir(data) / 'train.smi') + \
        read_lines(corpus_dir(data) / 'val.smi')
    assert {canonical('Cc1ccn[nH]1'), canonical(GLYCEROL)} <= set(kept)


def test_a_source_given_by_path_overrides_the_root(setup, tmp_path):
    other = tmp_path / 'jtvae'
    other.mkdir()
    (other / 'valid.txt').write_text('CCN\n')   # JT-VAE's own file names
    (other / 'test.txt').write_text('CCCl\n')
    manifest = build(setup, exclusion_paths={'zinc_full': other})
    zinc_full = [s for s in manifest['exclusions']['splits']
                 if s['source'] == 'zinc_full']
    assert [s['path'] for s in zinc_full] == [str(other / 'valid.txt'),
                                              str(other / 'test.txt')]
    assert [s['matched']['canonical_smiles'] for s in zinc_full] == [1, 1]


def test_interrupted_build_leaves_nothing_that_looks_complete(setup,
                                                              monkeypatch):
    def fail(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(corpus_module, '_manifest', fail)
    with pytest.raises(KeyboardInterrupt):
        build(setup)
    parent = corpus_dir(setup[2]).parent
    assert list(parent.iterdir()) == []
    monkeypatch.undo()
    corpus_dir(setup[2]).mkdir()
    (corpus_dir(setup[2]) / 'train.smi').write_text('CCO\n')
    assert read_manifest(corpus_dir(setup[2])) is None
    with pytest.raises(DataError, match='no complete corpus.*remove it'):
        build(setup)


def test_bad_wheels_and_val_sizes(setup, tmp_path):
    wheel = tmp_path / 'bad.whl'
    with zipfile.ZipFile(wheel, 'w') as archive:
        archive.writestr('moses/dataset/data/train.csv.gz',
                         gzip.compress(b'smile,x\nCCO,1\n'))
    with pytest.raises(DataError, match='no SMILES column.*--wheel'):
        read_moses_member(wheel, 'train')
    with pytest.raises(DataError, match='lacks moses/dataset/data/test'):
        read_moses_member(wheel, 'test')
    with pytest.raises(DataError, match='leaves no training molecule'):
        build(setup, val_size=19)
    assert build(setup, val_size=18)['counts']['train'] == 1


def _wheel_with_member(path, data: bytes):
    """A wheel whose train member holds ``data`` (its other members good)."""
    fake_wheel(path)
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members['moses/dataset/data/train.csv.gz'] = data
    with zipfile.ZipFile(path, 'w') as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return path


GOOD_MEMBER = ('SMILES\n' + ''.join(r + '\n' for r in TRAIN_ROWS)).encode()


# mtime=0: the same bytes in every process (test workers collect the
# parameters separately and must agree on them).
@pytest.mark.parametrize('data, message', [
    (gzip.compress(GOOD_MEMBER, mtime=0)[:40], 'train.csv.gz of .* ends '
     r'early \(a truncated gzip stream\)'),
    (GOOD_MEMBER, 'train.csv.gz of .* is not a valid gzip file'),
    (gzip.compress(GOOD_MEMBER.replace(b'CCCl', b'CC\xe9l'), mtime=0),
     r'train.csv.gz of .*: line 15 is not UTF-8 text \(byte 0xe9\)'),
], ids=['truncated', 'not-gzip', 'not-utf8'])
def test_a_broken_wheel_member_is_named(tmp_path, data, message):
    wheel = _wheel_with_member(tmp_path / 'w.whl', data)
    with pytest.raises(DataError, match=message + '.*--wheel'):
        read_moses_member(wheel, 'train')


def test_no_molecule_kept_says_why(setup, tmp_path):
    unparsable = fake_wheel(tmp_path / 'bad.whl', {
        'train': ['xx(', 'C1CC'], 'test': ['nope'], 'test_scaffolds': []})
    with pytest.raises(DataError, match=r'no molecule to keep: of 3 SMILES '
                       r'read, 3 do not parse, 0 are duplicates and 0 are '
                       r'excluded.*--wheel'):
        build(setup, wheel=unparsable)
    excluded = fake_wheel(tmp_path / 'excluded.whl', {
        'train': [PARACETAMOL, GLYCEROL], 'test': [GLYCEROL],
        'test_scaffolds': []})
    with pytest.raises(DataError, match=r'of 3 SMILES read, 0 do not parse, '
                       r'1 are duplicates and 2 are excluded'):
        build(setup, wheel=excluded)
    empty = fake_wheel(tmp_path / 'empty.whl', {
        'train': [], 'test': [], 'test_scaffolds': []})
    with pytest.raises(DataError, match=r'of 0 SMILES read'):
        build(setup, wheel=empty)


def test_a_rerun_with_another_wheel_is_refused_by_its_sha256(setup, tmp_path,
                                                              capsys):
    wheel, _, data = setup
    build(setup, progress=False)
    build(setup, progress=True)
    assert 'built from this wheel (sha256' in capsys.readouterr().out
    other = fake_wheel(tmp_path / 'other.whl', {
        'train': ['CCO'], 'test': ['CCN'], 'test_scaffolds': ['CCC']})
    with pytest.raises(DataError, match=r'was built from molsets-0.3.1-py3-'
                       r'none-any.whl \(sha256 [0-9a-f]{16}\.\.\.\), not from '
                       r'.*other.whl \(sha256 [0-9a-f]{16}\.\.\.\); remove'):
        build(setup, wheel=other)


def test_a_data_root_that_is_a_file_is_named(setup, tmp_path):
    wheel, shared, _ = setup
    root = tmp_path / 'a_file'
    root.write_text('')
    with pytest.raises(ValueError, match=r"'--data-root' must be a writable "
                       r"folder.*a_file is a file"):
        build((wheel, shared, root))
    assert not any(p.name.startswith('.moses') for p in tmp_path.iterdir())


def test_wheel_download_failure_names_the_fix(tmp_path, monkeypatch):
    def offline(command, **kwargs):
        assert command[1:4] == ['-m', 'pip', 'download']
        return subprocess.CompletedProcess(
            command, 1, '', 'ERROR: No matching distribution found for '
            'molsets==0.3.1\n')
    monkeypatch.setattr(subprocess, 'run', offline)
    with pytest.raises(WheelDownloadError,
                       match='No matching distribution.*--wheel PATH'):
        fetch_moses_wheel(tmp_path / 'downloads')
    # A wheel already there is used without pip.
    fake_wheel(tmp_path / 'downloads' / 'molsets-0.3.1-py3-none-any.whl')
    assert fetch_moses_wheel(tmp_path / 'downloads').name == \
        'molsets-0.3.1-py3-none-any.whl'


def run_script(*args):
    return subprocess.run(
        [sys.executable, str(REPO / 'scripts' / 'make_pretraining_corpus.py'),
         *map(str, args)], capture_output=True, text=True, cwd=REPO,
        env={'PYTHONPATH': str(REPO), 'PATH': '/usr/bin:/bin'}, timeout=300)


def test_script_builds_and_reports_errors(setup):
    wheel, shared, data = setup
    assert '--exclusion-root' in run_script('--help').stdout
    result = run_script('--data-root', data, '--wheel', wheel,
                        '--exclusion-root', shared, '--val-size', 5,
                        '--skip', 'zinc_subset', '--quiet')
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout[:result.stdout.rindex('}') + 1])
    assert printed == read_manifest(corpus_dir(data))
    assert printed['exclusions']['skipped'] == ['zinc_subset']
    result = run_script('--data-root', data.parent / 'other', '--wheel',
                        wheel, '--exclusion-root', data.parent / 'absent')
    assert result.returncode == 2
    assert result.stderr.startswith('error: exclusion source zinc_subset')
    assert len(result.stderr.splitlines()) == 1
    # A data root that is a file: one line, before any work.
    (data.parent / 'file').write_text('')
    result = run_script('--data-root', data.parent / 'file', '--wheel', wheel,
                        '--exclusion-root', shared, '--val-size', 5)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert 'is a file' in result.stderr
