"""Tests for graphormer_sepnorm.predict.writers: output paths checked before
any work, and resuming files cut at every possible byte."""
import csv
import gzip
import io
from pathlib import Path

import pytest

from graphormer_sepnorm.predict import PredictionError
from graphormer_sepnorm.predict.writers import (CsvWriter, check_output_path,
                                                read_csv_rows, write_csv)

COLUMNS = ['smiles', 'name', 'prediction', 'error']
# Rows with what CSV must quote: commas, quotes, a line break in a field.
CHUNKS = [
    [['CCO', 'ethanol', '0.5', ''], ['C1CC', 'a, b', '',
                                     'SMILES could not be parsed']],
    [['CCN', 'two\nlines', '1.25', ''], ['c1ccccc1', 'say "x"', '-3.0', '']],
    [['CC(=O)O', '', '2.0', '']],
]


def _write_chunks(path: Path) -> None:
    writer = CsvWriter(path, COLUMNS)
    for chunk in CHUNKS:
        writer.write_rows(chunk)
    writer.close()


def _text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == '.gz' else data).decode()


# Output paths (issue 12, item 6) #############################################


@pytest.mark.parametrize('path,message', [
    ('/proc/nope.csv', 'Cannot write the output /proc/nope.csv'),
    ('/proc/nope/deeper/out.csv', 'Cannot write the output'),
    ('out.tsv', 'name the file .csv or .csv.gz'),
    ('out.sdf', 'name the file .csv or .csv.gz'),
])
def test_unwritable_outputs(path, message):
    with pytest.raises(PredictionError) as exc:
        check_output_path(path)
    assert message in str(exc.value) and '\n' not in str(exc.value)


def test_output_folder_is_created_and_a_folder_is_refused(tmp_path):
    check_output_path(tmp_path / 'new' / 'deeper' / 'out.csv.gz')
    assert (tmp_path / 'new' / 'deeper').is_dir()
    assert list((tmp_path / 'new' / 'deeper').iterdir()) == []
    (tmp_path / 'taken.csv').mkdir()
    with pytest.raises(PredictionError, match='is a folder'):
        check_output_path(tmp_path / 'taken.csv')
    check_output_path('-')  # Standard output.


# Writing #####################################################################


@pytest.mark.parametrize('name', ['out.csv', 'out.csv.gz'])
def test_rows_round_trip(name, tmp_path):
    path = tmp_path / name
    _write_chunks(path)
    expected = [COLUMNS] + [row for chunk in CHUNKS for row in chunk]
    assert list(read_csv_rows(path)) == expected
    # The same text as Python's csv module writes (\n line ends).
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator='\n').writerows(expected)
    assert _text(path) == buffer.getvalue()
    if name.endswith('.gz'):  # One gzip member per call: header + chunks.
        assert path.read_bytes().count(b'\x1f\x8b\x08') == 1 + len(CHUNKS)


def test_write_csv_is_whole_or_nothing(tmp_path):
    path = tmp_path / 'top.csv.gz'
    write_csv(path, [COLUMNS, CHUNKS[0][0]])
    write_csv(path, [COLUMNS] + CHUNKS[1])
    assert list(read_csv_rows(path)) == [COLUMNS] + CHUNKS[1]
    assert [p.name for p in tmp_path.iterdir()] == ['top.csv.gz']


# Resume ######################################################################


def _complete_prefixes(path: Path) -> list[tuple[int, int]]:
    """(bytes, data rows) at the end of each complete record (plain CSV) or
    gzip member, from the file as written whole."""
    if path.suffix == '.gz':
        ends, rows = [], 0
        text = path.read_bytes()
        offset = 0
        for members, count in [(1, 0)] + [(1, len(c)) for c in CHUNKS]:
            # Each member starts with the gzip magic; find the next one.
            nxt = text.find(b'\x1f\x8b\x08', offset + 1)
            offset = len(text) if nxt < 0 else nxt
            rows += count
            ends.append((offset, rows))
        return ends
    lines, ends, offset = _text(path), [], 0
    records = [COLUMNS] + [row for chunk in CHUNKS for row in chunk]
    for k, record in enumerate(records):
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator='\n').writerow(record)
        offset += len(buffer.getvalue().encode())
        ends.append((offset, k))
    assert offset == len(lines.encode())
    return ends


@pytest.mark.parametrize('name', ['out.csv', 'out.csv.gz'])
def test_resume_after_a_cut_at_every_byte(name, tmp_path):
    """A file cut anywhere keeps exactly its complete rows (plain CSV) or
    complete gzip members, and appending the rest restores the file."""
    whole = tmp_path / ('whole_' + name)
    _write_chunks(whole)
    data = whole.read_bytes()
    ends = _complete_prefixes(whole)
    all_rows = [row for chunk in CHUNKS for row in chunk]
    for cut in range(len(data) + 1):
        path = tmp_path / name
        path.write_bytes(data[:cut])
        writer = CsvWriter(path, COLUMNS, resume=True)
        kept_bytes, kept_rows = max(
            [(end, rows) for end, rows in ends if end <= cut],
            default=(0, 0))
        assert writer.kept_rows == kept_rows, cut
        if kept_bytes:
            assert path.read_bytes() == data[:kept_bytes], cut
        # Continue from the next row, as a resumed run does.
        writer.write_rows(all_rows[kept_rows:])
        writer.close()
        assert list(read_csv_rows(path)) == [COLUMNS] + all_rows, cut


def test_resume_refuses_other_columns(tmp_path):
    path = tmp_path / 'out.csv'
    _write_chunks(path)
    with pytest.raises(PredictionError, match='columns .* are not those'):
        CsvWriter(path, ['smiles', 'prediction', 'error'], resume=True)
