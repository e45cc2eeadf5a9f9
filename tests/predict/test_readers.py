"""Tests for graphormer_sepnorm.predict.readers: CSV (Excel byte-order mark,
CRLF, quoted commas), TSV, SMILES and SDF files of real ZINC molecules,
gzipped or not, and their fast row count and hash."""
import gzip
import hashlib
from pathlib import Path

import pytest
from rdkit import Chem

from graphormer_sepnorm.data.featurize import FeaturizationError
from graphormer_sepnorm.predict import MoleculeReader, PredictionError
from graphormer_sepnorm.predict.molecules import SDF, sdf_record_to_smiles

from predict_helpers import zinc_smiles  # noqa: F401


def _write(path: Path, text: str, encoding: str = 'utf-8') -> Path:
    data = text.encode(encoding)
    path.write_bytes(gzip.compress(data) if path.suffix == '.gz' else data)
    return path


def _read(reader: MoleculeReader) -> list[tuple[list[str], str]]:
    return list(reader.rows())


def sdf_text(smiles: list[str], names: list[str]) -> str:
    """An SDF file of the molecules, as RDKit's SDWriter writes it."""
    blocks = []
    for s, name in zip(smiles, names):
        mol = Chem.MolFromSmiles(s)
        mol.SetProp('_Name', name)
        blocks.append(Chem.MolToMolBlock(mol) + '> <source>\nZINC\n\n$$$$\n')
    return ''.join(blocks)


#: A record RDKit cannot parse at all, and one it parses but rejects
#: (a carbon with five bonds).
GARBAGE_RECORD = 'broken\n  this is not a mol block\nM  END\n$$$$\n'


def pentavalent_record() -> str:
    mol = Chem.MolFromSmiles('C(C)(C)(C)(C)C', sanitize=False)
    mol.SetProp('_Name', 'pentavalent')
    return Chem.MolToMolBlock(mol, kekulize=False) + '$$$$\n'


# CSV and TSV (issue 12, item 4) ##############################################


def test_excel_csv_with_bom_crlf_and_quoted_commas(zinc_smiles, tmp_path):
    smiles = zinc_smiles[:4]
    lines = ['smiles,name,note'] + [
        f'{s},"ZINC{i}, batch 2","said ""hi"""' for i, s in enumerate(smiles)]
    path = _write(tmp_path / 'excel.csv', '\r\n'.join(lines) + '\r\n',
                  encoding='utf-8-sig')
    assert path.read_bytes().startswith(b'\xef\xbb\xbfsmiles')
    reader = MoleculeReader(path)
    assert reader.columns == ['smiles', 'name', 'note']
    rows = _read(reader)
    assert [molecule for _, molecule in rows] == smiles
    assert rows[1][0] == [smiles[1], 'ZINC1, batch 2', 'said "hi"']
    assert not any('\r' in field for fields, _ in rows for field in fields)


@pytest.mark.parametrize('name,delimiter', [('in.tsv', '\t'),
                                            ('in.csv.gz', ','),
                                            ('in.tsv.gz', '\t')])
def test_tsv_and_gzip(name, delimiter, zinc_smiles, tmp_path):
    text = f'id{delimiter}smiles\n' + ''.join(
        f'{i}{delimiter}{s}\n' for i, s in enumerate(zinc_smiles[:5]))
    reader = MoleculeReader(_write(tmp_path / name, text))
    assert reader.format == name.split('.')[1]
    assert reader.smiles_index == 1
    assert _read(reader) == [([str(i), s], s)
                             for i, s in enumerate(zinc_smiles[:5])]


def test_short_long_and_blank_rows(tmp_path):
    path = _write(tmp_path / 'in.csv', 'smiles,id\nCCO\n\nCCN,2,extra\n')
    assert _read(MoleculeReader(path)) == [(['CCO', ''], 'CCO'),
                                           (['CCN', '2'], 'CCN')]


def test_csv_errors(tmp_path):
    path = _write(tmp_path / 'in.csv', 'id,SMILES\n0,CCO\n')
    with pytest.raises(PredictionError) as exc:
        MoleculeReader(path)
    assert "no column 'smiles' (columns present: 'id', 'SMILES')" in str(
        exc.value)
    assert MoleculeReader(path, smiles_column='SMILES').smiles_index == 1
    with pytest.raises(PredictionError, match='does not exist'):
        MoleculeReader(tmp_path / 'missing.csv')
    (tmp_path / 'folder.csv').mkdir()
    with pytest.raises(PredictionError, match='it is a directory'):
        MoleculeReader(tmp_path / 'folder.csv')
    binary = tmp_path / 'binary.csv'
    binary.write_bytes(b'\xff\xfe\x00\x81' * 100)
    with pytest.raises(PredictionError, match='Cannot read'):
        MoleculeReader(binary)
    empty = _write(tmp_path / 'empty.csv', '')
    with pytest.raises(PredictionError, match='columns present: none'):
        MoleculeReader(empty)


def test_unreadable_row_in_the_middle(tmp_path):
    path = tmp_path / 'in.csv'
    # Far enough that the header is read before the decoder meets it.
    path.write_bytes(b'smiles\n' + b'CCO\n' * 50_000 + b'C\xff\xfeC\n')
    rows = MoleculeReader(path).rows()
    assert next(rows) == (['CCO'], 'CCO')
    with pytest.raises(PredictionError, match='Cannot read .* as a CSV'):
        list(rows)


# SMILES files ################################################################


@pytest.mark.parametrize('name', ['lib.smi', 'lib.smi.gz'])
def test_smi_with_and_without_names(name, zinc_smiles, tmp_path):
    smiles = zinc_smiles[:6]
    lines = [f'{smiles[0]}\tZINC000001', f'{smiles[1]} ZINC 2 (a name)',
             f'  {smiles[2]}  ', '', smiles[3], f'{smiles[4]}\tx', smiles[5]]
    reader = MoleculeReader(_write(tmp_path / name, '\n'.join(lines)))
    assert reader.columns == ['smiles', 'name'] and reader.format == 'smi'
    rows = _read(reader)
    assert [molecule for _, molecule in rows] == smiles
    assert [fields[1] for fields, _ in rows] == [
        'ZINC000001', 'ZINC 2 (a name)', '', '', 'x', '']


def test_smi_that_is_a_csv_is_refused(tmp_path):
    path = _write(tmp_path / 'lib.smi', 'smiles,name\nCCO,ethanol\n')
    with pytest.raises(PredictionError, match='looks like a CSV'):
        _read(MoleculeReader(path))


# SDF #########################################################################


@pytest.mark.parametrize('name', ['lib.sdf', 'lib.sdf.gz'])
def test_sdf_names_and_broken_records(name, zinc_smiles, tmp_path):
    smiles = zinc_smiles[:4]
    text = (sdf_text(smiles[:2], ['ZINC-A', 'ZINC-B']) + GARBAGE_RECORD +
            pentavalent_record() + sdf_text(smiles[2:], ['ZINC-C', 'ZINC-D']))
    reader = MoleculeReader(_write(tmp_path / name, text))
    assert reader.kind == SDF and reader.columns == ['name', 'smiles']
    rows = _read(reader)
    assert [fields for fields, _ in rows] == [
        ['ZINC-A', ''], ['ZINC-B', ''], ['broken', ''],
        ['pentavalent', ''], ['ZINC-C', ''], ['ZINC-D', '']]
    # Each record converts to the molecule written (same canonical SMILES).
    converted = [sdf_record_to_smiles(rows[k][1]) for k in (0, 1, 4, 5)]
    assert converted == [Chem.MolToSmiles(Chem.MolFromSmiles(s))
                         for s in smiles]
    with pytest.raises(FeaturizationError, match="SDF record 'broken' could "
                       "not be read by RDKit .not a valid mol block"):
        sdf_record_to_smiles(rows[2][1])
    with pytest.raises(FeaturizationError, match="'pentavalent'.*Explicit "
                       "valence"):
        sdf_record_to_smiles(rows[3][1])


def test_sdf_last_record_without_terminator(tmp_path):
    text = sdf_text(['CCO', 'CCN'], ['a', 'b'])
    text = text[:text.rindex('$$$$')]
    rows = _read(MoleculeReader(_write(tmp_path / 'x.sdf', text)))
    assert [fields[0] for fields, _ in rows] == ['a', 'b']
    assert sdf_record_to_smiles(rows[1][1]) == 'CCN'


# Format and scan #############################################################


def test_format_from_name(tmp_path):
    path = _write(tmp_path / 'lib.txt', 'CCO\n')
    with pytest.raises(PredictionError, match='--input-format'):
        MoleculeReader(path)
    assert _read(MoleculeReader(path, 'smi')) == [(['CCO', ''], 'CCO')]
    with pytest.raises(PredictionError, match='Unknown input format'):
        MoleculeReader(path, 'xlsx')
    assert MoleculeReader('-').format == 'smi'
    assert MoleculeReader('-').scan() == (None, None)


@pytest.mark.parametrize('name', ['a.csv', 'a.csv.gz', 'a.smi', 'a.smi.gz',
                                  'a.sdf', 'a.sdf.gz'])
def test_scan_counts_rows_and_hashes_bytes(name, zinc_smiles, tmp_path):
    smiles = zinc_smiles[:37]
    text = {'csv': 'smiles\n' + '\n'.join(smiles),  # no final line break
            'smi': '\n'.join(smiles) + '\n',
            'sdf': sdf_text(smiles, [str(i) for i in range(37)])
            }[name.split('.')[1]]
    path = _write(tmp_path / name, text)
    reader = MoleculeReader(path)
    rows, digest = reader.scan()
    assert rows == 37 == len(_read(reader))
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
