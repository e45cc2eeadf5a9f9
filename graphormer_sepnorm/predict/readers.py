r"""Input files of molecules, read as a stream of rows.

Formats, told by the file name (``.gz`` for gzip) or given explicitly:

* ``csv`` and ``tsv``: a header row, then one molecule per row in the SMILES
  column; every column passes through to the output. Read as UTF-8 with an
  optional byte-order mark (Excel writes one), any line endings, quoted
  fields.
* ``smi``: no header; a SMILES, then an optional name, separated by
  whitespace. Output columns :obj:`smiles` and :obj:`name`.
* ``sdf``: records ended by ``$$$$``; the first line of each (RDKit's
  :obj:`_Name`) becomes the :obj:`name` column and RDKit's SMILES of the
  record the :obj:`smiles` column. Records are cut apart here and parsed by
  RDKit in the worker processes
  (:func:`~graphormer_sepnorm.predict.molecules.sdf_record_to_smiles`, RDKit's
  mol-block parser, which its SD suppliers also use): a shard skips the
  records of other shards without parsing them, and a record RDKit cannot
  read becomes an error row.

A path of :obj:`"-"` reads standard input (``smi`` unless told otherwise).
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import sys
from pathlib import Path
from typing import IO, Iterator, Optional, Union

from ..data.text_files import is_gzipped, open_text
from .molecules import SDF, SMILES
from .prediction import PredictionError

__all__ = ['INPUT_FORMATS', 'MoleculeReader']

PathLike = Union[str, Path]

#: Input formats, and the file name endings that select them.
INPUT_FORMATS: dict[str, tuple[str, ...]] = {
    'csv': ('.csv', ),
    'tsv': ('.tsv', '.tab'),
    'smi': ('.smi', '.smiles', '.ism'),
    'sdf': ('.sdf', '.sd'),
}

STDIN = '-'
_SDF_END = '$$$$'
_BLOCK = 1 << 20


class MoleculeReader:
    r"""Reads the molecules of one input, row by row.

    Args:
        path (str or Path): The file, or :obj:`"-"` for standard input.
        input_format (str, optional): :obj:`"csv"`, :obj:`"tsv"`,
            :obj:`"smi"` or :obj:`"sdf"`; :obj:`None` tells it from the file
            name (:obj:`"smi"` for standard input). (default: :obj:`None`)
        smiles_column (str, optional): The SMILES column of CSV and TSV
            files. (default: :obj:`"smiles"`)

    Attributes:
        columns (list[str]): The columns that pass through to the output.
        smiles_index (int): Position of the SMILES in :obj:`columns`.
        kind (str): :obj:`"smiles"` or :obj:`"sdf"`: what :meth:`rows` yields
            as the molecule.

    Raises:
        PredictionError: If the file is missing or unreadable, its format
            cannot be told, or a CSV has no column :obj:`smiles_column` (the
            message lists the columns present).
    """
    def __init__(self, path: PathLike, input_format: Optional[str] = None,
                 smiles_column: str = 'smiles') -> None:
        self.is_stdin = str(path) == STDIN
        self.path = Path(path)
        self.name = 'standard input' if self.is_stdin else str(path)
        self.format = input_format or _format_from_name(self.path,
                                                        self.is_stdin)
        if self.format not in INPUT_FORMATS:
            raise PredictionError(
                f"Unknown input format {self.format!r}; choose one of "
                f"{', '.join(INPUT_FORMATS)}")
        if not self.is_stdin and not self.path.is_file():
            raise PredictionError(f"Input file {path} does not exist" + (
                " (it is a directory)" if self.path.is_dir() else ""))
        self.smiles_column = smiles_column
        self.kind = SDF if self.format == 'sdf' else SMILES
        self._stream: Optional[IO[str]] = None
        self._header: Optional[list[str]] = None
        if self.format in ('csv', 'tsv'):
            self._header = self._read_header()
            self.columns = list(self._header)
            self.smiles_index = self.columns.index(smiles_column)
        elif self.format == 'smi':
            self.columns, self.smiles_index = ['smiles', 'name'], 0
        else:
            self.columns, self.smiles_index = ['name', 'smiles'], 1

    # Reading ################################################################

    def rows(self) -> Iterator[tuple[list[str], str]]:
        r"""Yields :obj:`(fields, molecule)` per input row, in order:
        :obj:`fields` one string per column of :obj:`columns` (for SDF, the
        SMILES field is empty: the worker fills it in), :obj:`molecule` the
        SMILES string or SDF record. Can be called once."""
        rows = {'csv': self._delimited_rows, 'tsv': self._delimited_rows,
                'smi': self._smi_rows, 'sdf': self._sdf_rows}[self.format]()
        try:
            yield from rows
        except (OSError, UnicodeDecodeError, csv.Error, EOFError) as error:
            raise PredictionError(f"Cannot read {self.name} as a "
                                  f"{self.format.upper()} file ({error})"
                                  ) from None
        finally:
            self.close()

    def close(self) -> None:
        r"""Closes the input (not standard input)."""
        if self._stream is not None and not self.is_stdin:
            self._stream.close()
        self._stream = None

    def scan(self) -> tuple[Optional[int], Optional[str]]:
        r"""One fast pass over the file: the number of rows (from line or
        record ends; quoted line breaks in a CSV count too, so it is an
        upper bound, for the progress bar) and the SHA-256 of its bytes (as
        stored, compressed or not). :obj:`(None, None)` for standard input.
        """
        if self.is_stdin:
            return None, None
        digest = hashlib.sha256()
        ends = 0
        last = b''
        marker = b'\n' if self.format != 'sdf' else _SDF_END.encode()
        with open(self.path, 'rb') as raw:
            hashed = _HashingReader(raw, digest)
            stream = (gzip.GzipFile(fileobj=hashed) if is_gzipped(self.path)
                      else hashed)
            try:
                for block in iter(lambda: stream.read(_BLOCK), b''):
                    ends += block.count(marker)
                    last = block[-1:]
            except (OSError, EOFError) as error:
                raise PredictionError(f"Cannot read {self.name} ({error})"
                                      ) from None
        rows = ends
        if self.format != 'sdf' and last not in (b'', b'\n'):
            rows += 1  # A last line without a line break.
        if self._header is not None:
            rows = max(rows - 1, 0)
        return rows, digest.hexdigest()

    # Formats ################################################################

    def _open(self) -> IO[str]:
        if self._stream is None:
            if self.is_stdin:
                self._stream = io.TextIOWrapper(sys.stdin.buffer,
                                                encoding='utf-8-sig',
                                                newline='')
            else:
                self._stream = open_text(self.path)
        return self._stream

    def _read_header(self) -> list[str]:
        try:
            self._reader = csv.reader(
                self._open(), delimiter='\t' if self.format == 'tsv' else ',')
            header = next(self._reader, [])
        except (OSError, UnicodeDecodeError, csv.Error, EOFError) as error:
            self.close()
            raise PredictionError(f"Cannot read {self.name} as a "
                                  f"{self.format.upper()} file with a header "
                                  f"row ({error})") from None
        if self.smiles_column not in header:
            self.close()
            present = ', '.join(repr(c) for c in header) or 'none'
            raise PredictionError(
                f"{self.name} has no column {self.smiles_column!r} (columns "
                f"present: {present}); name the SMILES column with "
                f"--smiles-column / smiles_column")
        return header

    def _delimited_rows(self) -> Iterator[tuple[list[str], str]]:
        width = len(self.columns)
        for fields in self._reader:
            if not fields:
                continue  # A blank line.
            if len(fields) != width:  # Short rows padded, extra cells cut.
                fields = (fields + [''] * width)[:width]
            yield fields, fields[self.smiles_index]

    def _smi_rows(self) -> Iterator[tuple[list[str], str]]:
        for number, line in enumerate(self._open(), start=1):
            parts = line.strip().split(None, 1)
            if not parts:
                continue
            if number == 1 and ',' in parts[0]:
                raise PredictionError(
                    f"{self.name} looks like a CSV file (its first line is "
                    f"{line.strip()[:60]!r}), not a SMILES file; name it "
                    f".csv or pass --input-format csv")
            smiles, name = parts[0], parts[1] if len(parts) > 1 else ''
            yield [smiles, name], smiles

    def _sdf_rows(self) -> Iterator[tuple[list[str], str]]:
        lines: list[str] = []
        for line in self._open():
            if line.rstrip() == _SDF_END:
                yield self._sdf_row(lines)
                lines = []
            else:
                lines.append(line)
        if any(line.strip() for line in lines):
            yield self._sdf_row(lines)  # A last record without '$$$$'.

    @staticmethod
    def _sdf_row(lines: list[str]) -> tuple[list[str], str]:
        name = lines[0].strip() if lines else ''
        return [name, ''], ''.join(lines)


def _format_from_name(path: Path, is_stdin: bool) -> str:
    if is_stdin:
        return 'smi'
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and is_gzipped(path):
        suffixes.pop()
    suffix = suffixes[-1] if suffixes else ''
    for name, endings in INPUT_FORMATS.items():
        if suffix in endings:
            return name
    endings = ', '.join(e for es in INPUT_FORMATS.values() for e in es)
    raise PredictionError(
        f"Cannot tell the format of {path} from its name (known endings: "
        f"{endings}, each optionally .gz); rename it or pass --input-format "
        f"csv|tsv|smi|sdf")


class _HashingReader(io.RawIOBase):
    r"""A binary file that feeds every byte read to a hash."""
    def __init__(self, raw: IO[bytes], digest) -> None:
        self.raw, self.digest = raw, digest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = self.raw.readinto(buffer)
        self.digest.update(memoryview(buffer)[:count])
        return count
