r"""The MOSES molecules as the ``molsets`` wheel ships them (MIT license):
``moses/dataset/data/{train,test,test_scaffolds}.csv.gz``, CSV files with a
``SMILES`` column, read straight from the wheel (a zip file). The package
itself is never installed: its pinned dependencies do not build on current
Python versions, and only its data files are needed."""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import subprocess
import sys
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from ..data.errors import DataError

__all__ = ['MOSES_REQUIREMENT', 'MOSES_MEMBERS', 'MosesMember',
           'WheelDownloadError', 'fetch_moses_wheel', 'read_moses_member',
           'sha256_of']

PathLike = Union[str, Path]

#: The wheel fetched when none is given.
MOSES_REQUIREMENT = 'molsets==0.3.1'
#: The three MOSES files, in the order the corpus reads them. All three are
#: ZINC Clean Leads molecules; MOSES' "test" is not a test split of our
#: benchmarks.
MOSES_MEMBERS = ('train', 'test', 'test_scaffolds')
_MEMBER_PATH = 'moses/dataset/data/{}.csv.gz'


class WheelDownloadError(DataError):
    r"""``pip download`` could not fetch the molsets wheel (e.g. offline);
    the message says to pass a wheel with ``--wheel``."""


def sha256_of(path: PathLike) -> str:
    r"""The sha256 hex digest of the file :obj:`path`."""
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def fetch_moses_wheel(directory: PathLike) -> Path:
    r"""The molsets wheel in :obj:`directory`, downloaded there first with
    ``python -m pip download --no-deps molsets==0.3.1`` if it holds none.

    Raises:
        WheelDownloadError: pip failed (its last output line is quoted) or
            left no wheel.
    """
    directory = Path(directory)
    pattern = 'molsets-{}-*.whl'.format(MOSES_REQUIREMENT.split('==')[1])
    found = sorted(directory.glob(pattern))
    if not found:
        directory.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, '-m', 'pip', 'download', '--no-deps',
                   '--only-binary', ':all:', MOSES_REQUIREMENT, '-d',
                   str(directory)]
        result = subprocess.run(command, capture_output=True, text=True)
        found = sorted(directory.glob(pattern))
        if result.returncode != 0 or not found:
            lines = (result.stderr or result.stdout).strip().splitlines()
            reason = lines[-1] if lines else f'exit status {result.returncode}'
            raise WheelDownloadError(
                f"could not download {MOSES_REQUIREMENT} with pip ({reason}); "
                f"download molsets-0.3.1-py3-none-any.whl where PyPI is "
                f"reachable (pip download --no-deps {MOSES_REQUIREMENT}) and "
                f"pass it with --wheel PATH")
    return found[-1]


@dataclass
class MosesMember:
    r"""The SMILES of one MOSES file of the wheel.

    Attributes:
        name (str): One of :data:`MOSES_MEMBERS`.
        member (str): Its path inside the wheel.
        columns (list of str): The CSV header.
        smiles (list of str): The SMILES column, in file order.
    """
    name: str
    member: str
    columns: list[str]
    smiles: list[str]


def read_moses_member(wheel: PathLike, name: str) -> MosesMember:
    r"""Reads the MOSES file :obj:`name` (one of :data:`MOSES_MEMBERS`) from
    :obj:`wheel`.

    Raises:
        DataError: Not a wheel, no such member, a member that is not
            complete gzip-compressed UTF-8 CSV, or no SMILES column (the
            message names the member, the line where known, and the fix).
    """
    if name not in MOSES_MEMBERS:
        raise ValueError(f"unknown MOSES file {name!r}; choose one of "
                         f"{', '.join(MOSES_MEMBERS)}")
    member = _MEMBER_PATH.format(name)
    try:
        archive = zipfile.ZipFile(wheel)
    except (zipfile.BadZipFile, FileNotFoundError) as error:
        raise DataError(f"{wheel} is not a readable wheel ({error}); pass "
                        f"the molsets 0.3.1 wheel with --wheel") from error
    with archive:
        if member not in archive.namelist():
            raise DataError(f"{wheel} lacks {member}; pass the molsets "
                            f"0.3.1 wheel with --wheel")
        fix = 'pass the molsets 0.3.1 wheel with --wheel'
        with archive.open(member) as raw:
            # Decompressed whole (tens of MB), so that a decoding error
            # has a line number.
            try:
                data = gzip.decompress(raw.read())
            except EOFError:
                raise DataError(f"{member} of {wheel} ends early (a "
                                f"truncated gzip stream); {fix}") from None
            except (OSError, zlib.error, zipfile.BadZipFile) as error:
                raise DataError(f"{member} of {wheel} is not a valid gzip "
                                f"file ({error}); {fix}") from None
        try:
            text = data.decode('utf-8')
        except UnicodeDecodeError as error:
            line = data.count(b'\n', 0, error.start) + 1
            raise DataError(f"{member} of {wheel}: line {line} is not UTF-8 "
                            f"text (byte 0x{data[error.start]:02x}); "
                            f"{fix}") from None
        rows = csv.reader(io.StringIO(text, newline=''))
        try:
            columns = next(rows, [])
            upper = [c.strip().upper() for c in columns]
            if 'SMILES' not in upper:
                raise DataError(
                    f"{member} of {wheel} has no SMILES column (its header "
                    f"is {','.join(columns)!r}); {fix}")
            column = upper.index('SMILES')
            smiles = [row[column].strip() for row in rows if row]
        except (csv.Error, IndexError) as error:
            raise DataError(f"{member} of {wheel}: line {rows.line_num} is "
                            f"not a CSV row with a SMILES ({error}); "
                            f"{fix}") from None
    return MosesMember(name, member, columns, smiles)
