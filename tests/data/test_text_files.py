"""Plain or compressed text, told by the name as pandas tells it."""
import bz2
import gzip
import lzma

import pandas as pd
import pytest
from pandas.io.common import infer_compression

from conftest import shared_path
from graphormer_sepnorm.data.text_files import (is_gzipped, open_text,
                                                read_smiles_lines)

NAMES = ['x.csv.gz', 'x.CSV.GZ', 'x.Gz', 'x.csv', 'x.gzip', 'x.tgz', 'gz',
         'x.gz.csv', '.gz']


@pytest.mark.parametrize('name', NAMES)
def test_gzip_is_told_as_pandas_tells_it(name):
    assert is_gzipped(name) == (infer_compression(name, 'infer') == 'gzip')


@pytest.mark.parametrize('name', ['x.csv', 'x.CSV.GZ'])
def test_open_text_reads_what_pandas_reads(tmp_path, name):
    # A byte-order mark (spreadsheet exports) and a Windows line end in a
    # quoted cell: the header loses the mark, the cell keeps its line end.
    content = '\ufeffsmiles,y\r\n"C\r\nC",1.5\r\nCCO,2\r\n'.encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(content) if is_gzipped(name) else content)
    with open_text(path) as f:
        text = f.read()
    assert text == content.decode('utf-8-sig')
    assert list(pd.read_csv(path).columns) == ['smiles', 'y']


COMPRESSORS = {'gzip': gzip.compress, 'bz2': bz2.compress,
               'xz': lzma.compress, None: bytes}


@pytest.mark.parametrize('name', NAMES + ['x.csv.bz2', 'x.BZ2', 'x.csv.xz',
                                          'x.XZ', 'x.xz.csv', '.bz2'])
def test_open_text_decompresses_as_pandas_infers(tmp_path, name):
    # Written with the compression pandas infers from the name: open_text
    # reads back the text (and pandas the table) whatever it is.
    path = tmp_path / name
    content = 'id,prediction\n1,0.25\n'
    path.write_bytes(COMPRESSORS[infer_compression(name, 'infer')](
        content.encode()))
    with open_text(path) as f:
        assert f.read() == content
    assert pd.read_csv(path)['prediction'].tolist() == [0.25]


def test_read_smiles_lines(tmp_path):
    path = tmp_path / 's.txt'
    path.write_text('CCO\n\n c1ccccc1 \nCCN\n')
    assert read_smiles_lines(path) == ['CCO', 'c1ccccc1', 'CCN']
    assert read_smiles_lines(path, limit=1) == ['CCO']
    first = read_smiles_lines(shared_path('zinc250k', 'jtvae_test.txt'))
    assert len(first) == 5000
    gzipped = tmp_path / 's.txt.gz'
    gzipped.write_bytes(gzip.compress(path.read_bytes()))
    assert read_smiles_lines(gzipped) == ['CCO', 'c1ccccc1', 'CCN']
