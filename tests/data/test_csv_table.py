"""Reading a training CSV: line numbers, missing labels, and one clear
CSVDataError per problem a user can fix."""
import gzip
import math

import numpy as np
import pytest

from graphormer_sepnorm.data.csv_table import (CSVDataError,
                                               parse_split_column,
                                               parse_targets, read_header,
                                               read_table)

COLUMNS = {'data.smiles_column': ['smiles'], 'data.target_columns': ['a']}


def _write(path, text):
    path.write_text(text)
    return path


def _write_csv(path, text, encoding='utf-8'):
    """Writes text as it is (gzipped for a .gz name), line ends untouched."""
    opener = gzip.open if path.name.lower().endswith('.gz') else open
    with opener(path, 'wt', encoding=encoding, newline='') as f:
        f.write(text)
    return path


def _targets(path, columns=('a', ), task='regression'):
    table = read_table(path, {'data.target_columns': list(columns)})
    return table, parse_targets(table, path, list(columns), task)


def test_values_missing_labels_and_line_numbers(tmp_path):
    path = _write(tmp_path / 'x.csv',
                  'smiles,a,b\nCCO,1.5,\n\nCCN, NA ,2e-3\nCCC,-3,nan\n'
                  'CCCl,none,7\n')
    table, y = _targets(path, ('a', 'b'))
    # The blank line is dropped, but the lines keep their place in the file
    assert table.index.tolist() == [2, 4, 5, 6]
    assert table['smiles'].tolist() == ['CCO', 'CCN', 'CCC', 'CCCl']
    expected = [[1.5, math.nan], [math.nan, 2e-3], [-3, math.nan],
                [math.nan, 7]]
    np.testing.assert_array_equal(y, np.array(expected))


@pytest.mark.parametrize('name', ['x.csv', 'x.csv.gz'])
def test_excel_csv_byte_order_mark_crlf_and_quoted_commas(tmp_path, name):
    # As Excel saves "CSV UTF-8": a byte-order mark, CRLF line ends, and
    # quotes around cells holding a comma or a quote
    text = ('smiles,name,a\r\n"C(C)O","ethanol, 96%",1\r\n'
            'CCN,"said ""amine""",\r\n')
    path = _write_csv(tmp_path / name, text, encoding='utf-8-sig')
    assert read_header(path) == ['smiles', 'name', 'a']
    table, y = _targets(path)
    assert table.index.tolist() == [2, 3]
    assert table['smiles'].tolist() == ['C(C)O', 'CCN']
    assert table['name'].tolist() == ['ethanol, 96%', 'said "amine"']
    np.testing.assert_array_equal(y, [[1.0], [math.nan]])


def test_missing_column_lists_the_columns_present(tmp_path):
    path = _write(tmp_path / 'x.csv', 'SMILES,LogS,mw\nCCO,1,2\n')
    with pytest.raises(CSVDataError) as error:
        read_table(path, {'data.smiles_column': ['smiles']})
    message = str(error.value)
    assert "has no column 'smiles' (named by data.smiles_column)" in message
    assert "columns present: 'SMILES', 'LogS', 'mw'" in message
    assert "Did you mean 'SMILES'?" in message
    with pytest.raises(CSVDataError, match="no column 'logs' .* Did you mean "
                       "'LogS'.* Fix data.target_columns"):
        read_table(path, {'data.target_columns': ['LogS', 'logs']})


@pytest.mark.parametrize('cell,expected', [
    ('n/d', "line 3, column 'a': 'n/d' is not a number"),
    ('inf', "line 3, column 'a': 'inf' is not a finite number"),
    ('1.2.3', "'1.2.3' is not a number"),
    # A decimal comma makes a third cell in a two-column file
    ('1,5', r'Cannot read .* \(Error tokenizing data. C error: Expected 2 '
     r'fields in line 3, saw 3\)'),
])
def test_non_numeric_value_names_line_and_value(tmp_path, cell, expected):
    path = _write(tmp_path / 'x.csv', f'smiles,a\nCCO,1\nCCN,{cell}\n')
    with pytest.raises(CSVDataError, match=expected):
        _targets(path)


def test_empty_target_column(tmp_path):
    path = _write(tmp_path / 'x.csv', 'smiles,a,b\nCCO,1,\nCCN,2, \n')
    with pytest.raises(CSVDataError, match="target column 'b' has no value "
                       "in any of its 2 rows; fill it, or remove it from "
                       "data.target_columns"):
        _targets(path, ('a', 'b'))


def test_binary_labels_must_be_0_or_1(tmp_path):
    path = _write(tmp_path / 'x.csv', 'smiles,a\nCCO,1\nCCN,\nCCC,0.0\n'
                  'CCCC,2\n')
    with pytest.raises(CSVDataError, match="line 5, column 'a': '2' is not 0 "
                       "or 1; data.task=binary needs 0/1 labels"):
        _targets(path, task='binary')
    table, y = _targets(path, task='regression')  # fine as regression
    assert y[3, 0] == 2


def test_split_column(tmp_path):
    path = _write(tmp_path / 'x.csv', 'smiles,fold\nC,train\nCC, Valid\n'
                  'CCC,VAL\nCCCC,test\n')
    table = read_table(path, {'data.split_column': ['fold']})
    assert parse_split_column(table, path, 'fold').tolist() == [0, 1, 1, 2]
    path = _write(tmp_path / 'y.csv', 'smiles,fold\nC,train\nCC,trian\n')
    table = read_table(path, {'data.split_column': ['fold']})
    with pytest.raises(CSVDataError, match="line 3, column 'fold': 'trian' "
                       r"is not train, valid or test \(data.split_column\)"):
        parse_split_column(table, path, 'fold')


def test_unreadable_files(tmp_path):
    with pytest.raises(CSVDataError, match='does not exist; set data.path'):
        read_header(tmp_path / 'nope.csv')
    with pytest.raises(CSVDataError, match=r'is empty; it needs a header'):
        read_header(_write(tmp_path / 'empty.csv', ''))
    (tmp_path / 'bad.csv.gz').write_bytes(b'not gzip at all')
    with pytest.raises(CSVDataError, match='Cannot read .* as a CSV file'):
        read_header(tmp_path / 'bad.csv.gz')


@pytest.mark.parametrize('name', ['x.csv', 'x.csv.gz', 'x.CSV.GZ'])
def test_rows_after_a_multi_line_cell_keep_their_line(tmp_path, name):
    # A quoted note spanning three lines: the rows after it start two lines
    # further down than their row count says
    text = ('smiles,note,a\nCCO,"first\nsecond\nthird",1\n\nCCN,,2\n'
            'CCC,,x\n')
    path = _write_csv(tmp_path / name, text)
    table = read_table(path, COLUMNS)
    assert table.index.tolist() == [2, 6, 7]
    with pytest.raises(CSVDataError, match="line 7, column 'a': 'x' is not "
                       "a number"):
        parse_targets(table, path, ['a'], 'regression')


@pytest.mark.parametrize('name', ['x.csv', 'x.csv.gz'])
def test_a_column_named_twice_is_refused(tmp_path, name):
    """pandas reads ``smiles,y,y`` as columns smiles, y and y.1, so training
    on y would use the first and drop the second without a word; the
    header line is read as it is instead."""
    path = _write_csv(tmp_path / name, '\ufeffsmiles,y,a,y\nCCO,1,2,3\n',
                      encoding='utf-8')
    expected = (r"x.csv(.gz)?: the header names column 'y' twice \(columns 2 "
                r"and 4\); rename or remove one")
    with pytest.raises(CSVDataError, match=expected):
        read_header(path)
    with pytest.raises(CSVDataError, match=expected):
        read_table(path, {'data.target_columns': ['a']})
    # Unnamed columns (a trailing comma on every line) are no names
    path = _write(tmp_path / 'trailing.csv', 'smiles,a,,\nCCO,1,,\n')
    assert read_header(path) == ['smiles', 'a', 'Unnamed: 2', 'Unnamed: 3']
