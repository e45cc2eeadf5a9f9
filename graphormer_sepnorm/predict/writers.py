r"""Prediction files: CSV, or gzipped CSV when the name ends with ``.gz``,
written chunk by chunk and flushed, so that a run killed at any moment
leaves complete rows that :meth:`CsvWriter.resume` can keep.

A gzipped output is written as one gzip member per chunk (readers see one
stream; ``gzip -d`` and pandas read it as usual): a kill can only damage the
last member, and resuming cuts the file after the last complete one.
"""
from __future__ import annotations

import csv
import gzip
import io
import os
import sys
import tempfile
import zlib
from pathlib import Path
from typing import IO, Iterable, Iterator, Optional, Sequence, Union

from ..data.text_files import is_gzipped, open_text
from .prediction import PredictionError

__all__ = ['CsvWriter', 'check_output_path', 'check_writable', 'write_csv',
           'read_csv_rows', 'STDOUT']

PathLike = Union[str, Path]

#: The output path that means standard output.
STDOUT = '-'
_BLOCK = 1 << 20
_OUTPUT_ENDINGS = ('.csv', '.csv.gz')


def check_output_path(path: PathLike) -> None:
    r"""Checks, before any work, that :obj:`path` can be written: a
    :obj:`.csv` or :obj:`.csv.gz` name, not a folder, in a folder that
    exists or can be created (it is created) and that accepts new files.

    Raises:
        PredictionError: Naming the problem.
    """
    if str(path) == STDOUT:
        return
    path = Path(path)
    if not str(path).lower().endswith(_OUTPUT_ENDINGS):
        raise PredictionError(
            f"Output {path}: predictions are written as CSV; name the file "
            f".csv or .csv.gz")
    check_writable(path, 'output', 'predictions.csv')


def check_writable(path: Path, what: str, example: str) -> None:
    r"""Checks that the file :obj:`path` can be written: not a folder, in a
    folder that exists or can be created (it is created) and that accepts
    new files, not read-only.

    Args:
        path (Path): The file.
        what (str): What it is, for messages (:obj:`"output"`).
        example (str): A file name to suggest when :obj:`path` is a folder.

    Raises:
        PredictionError: Naming the problem.
    """
    if path.is_dir():
        raise PredictionError(f"{what.capitalize()} {path} is a folder; name "
                              f"a file in it, e.g. {path / example}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path.parent):
            pass
    except OSError as error:
        reason = error.strerror or error
        # /proc exists but takes no new file ("No such file or directory").
        where = (f"the folder {path.parent} exists but takes no new file: "
                 f"{reason}" if path.parent.is_dir() else
                 f"{reason}: {path.parent}")
        raise PredictionError(f"Cannot write the {what} {path} ({where}); "
                              f"choose a writable path") from None
    if path.exists() and not os.access(path, os.W_OK):
        raise PredictionError(f"Cannot write the {what} {path} (the file "
                              f"exists and is read-only); choose another "
                              f"path")


def format_rows(rows: Iterable[Sequence[str]]) -> str:
    r"""CSV text of :obj:`rows` (minimal quoting, ``\n`` line ends)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator='\n').writerows(rows)
    return buffer.getvalue()


class CsvWriter:
    r"""Appends rows to a CSV output, one flushed write per call.

    Args:
        path (str or Path): The output, :obj:`"-"` for standard output.
        columns (list[str]): The header.
        resume (bool, optional): Keep the complete rows of an existing
            file (see :attr:`kept_rows`) instead of starting a new one.
            (default: :obj:`False`)

    Attributes:
        kept_rows (int): Data rows kept from an earlier run.
    """
    def __init__(self, path: PathLike, columns: Sequence[str],
                 resume: bool = False) -> None:
        self.path = path
        self.columns = list(columns)
        self.kept_rows = 0
        self.gzip = is_gzipped(path)
        self._file: Optional[IO] = None
        try:
            if str(path) == STDOUT:
                self._file = sys.stdout
            elif resume and Path(path).exists():
                self.kept_rows = self._resume(Path(path))
                return
            else:
                self._file = open(path, 'wb')
            self.write_rows([self.columns])
        except OSError as error:
            raise PredictionError(f"Cannot write {path} ({error})") from None

    def write_rows(self, rows: Sequence[Sequence[str]]) -> None:
        r"""Writes :obj:`rows` and flushes them to the operating system."""
        text = format_rows(rows)
        try:
            if self._file is sys.stdout:
                self._file.write(text)
            elif self.gzip:
                self._file.write(gzip.compress(text.encode(),
                                               compresslevel=6, mtime=0))
            else:
                self._file.write(text.encode())
            self._file.flush()
        except OSError as error:
            raise PredictionError(f"Cannot write {self.path} ({error})"
                                  ) from None

    def close(self) -> None:
        r"""Closes the file (not standard output)."""
        if self._file is not None and self._file is not sys.stdout:
            self._file.close()
        self._file = None

    def _resume(self, path: Path) -> int:
        ends = (_gzip_record_ends(path) if self.gzip
                else _plain_record_ends(path))
        header, count, end = None, 0, 0
        for record, offset in ends:
            if header is None:
                header = record
                if header != self.columns:
                    raise PredictionError(
                        f"Cannot resume {path}: its columns "
                        f"{', '.join(header)} are not those of this run "
                        f"({', '.join(self.columns)}); start a new output "
                        f"(drop --resume)")
            elif len(record) != len(self.columns):
                break  # Not a row this writer wrote whole.
            else:
                count += 1
            end = offset
        self._file = open(path, 'r+b')
        self._file.truncate(end)  # Drops a torn last row.
        self._file.seek(end)
        if header is None:  # Not even the header survived.
            self.write_rows([self.columns])
        return count


def _plain_record_ends(path: Path) -> Iterator[tuple[list[str], int]]:
    r"""The complete records of a CSV file with the byte offset where each
    ends; stops at the first incomplete one."""
    with open(path, 'rb') as f:
        offset = 0
        last_line_complete = True

        def lines() -> Iterator[str]:
            nonlocal offset, last_line_complete
            for line in f:
                offset += len(line)
                last_line_complete = line.endswith(b'\n')
                yield line.decode('utf-8', errors='replace')

        try:
            for record in csv.reader(lines(), strict=True):
                if not last_line_complete:
                    return
                yield record, offset
        except csv.Error:
            return


def _gzip_record_ends(path: Path) -> Iterator[tuple[list[str], int]]:
    r"""The records of the complete gzip members of :obj:`path` with the
    byte offset where their member ends (a member holds whole rows)."""
    for data, end in _gzip_members(path):
        try:
            records = list(csv.reader(io.StringIO(data.decode('utf-8'),
                                                  newline=''), strict=True))
        except (csv.Error, UnicodeDecodeError):
            return
        if not data.endswith(b'\n'):
            return
        for record in records:
            yield record, end


def _gzip_members(path: Path) -> Iterator[tuple[bytes, int]]:
    r"""The decompressed content of each complete gzip member, with the
    byte offset where the member ends."""
    with open(path, 'rb') as f:
        consumed = 0
        decompressor = zlib.decompressobj(wbits=31)
        parts: list[bytes] = []
        pending = b''
        while True:
            if not pending:
                pending = f.read(_BLOCK)
                if not pending:
                    return  # The last member, if any, is incomplete.
            try:
                parts.append(decompressor.decompress(pending))
            except zlib.error:
                return
            if decompressor.eof:
                consumed += len(pending) - len(decompressor.unused_data)
                yield b''.join(parts), consumed
                pending = decompressor.unused_data
                decompressor = zlib.decompressobj(wbits=31)
                parts = []
            else:
                consumed += len(pending)
                pending = b''


def write_csv(path: PathLike, rows: Sequence[Sequence[str]]) -> None:
    r"""Writes a whole CSV file (header included in :obj:`rows`) atomically:
    a reader sees the old file or the new one, never a part."""
    path = Path(path)
    tmp = path.with_name(path.name + '.tmp')
    text = format_rows(rows).encode()
    try:
        with open(tmp, 'wb') as f:
            f.write(gzip.compress(text, compresslevel=6, mtime=0)
                    if is_gzipped(path) else text)
        os.replace(tmp, path)
    except OSError as error:
        raise PredictionError(f"Cannot write {path} ({error})") from None


def read_csv_rows(path: PathLike) -> Iterator[list[str]]:
    r"""The rows of a prediction file (plain or gzipped CSV), header
    first."""
    path = Path(path)
    try:
        with open_text(path, encoding='utf-8') as f:
            yield from csv.reader(f)
    except (OSError, EOFError, UnicodeDecodeError, csv.Error) as error:
        raise PredictionError(f"Cannot read {path} ({error})") from None
