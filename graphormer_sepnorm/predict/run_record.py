r"""The record kept beside every prediction file (``<output>.meta.json``):
which input, model and options produced it and whether it is complete.

:obj:`resume` reads it to refuse continuing a file that another input,
model or set of options started, and the merge of shards to check that the
parts belong together and are complete. The input is identified by the
SHA-256 of its bytes, the model by
:attr:`~graphormer_sepnorm.predict.Predictor.fingerprint` (for an ensemble,
every member's, in order: continuing with other members is refused).
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from .. import __version__
from .prediction import PredictionError

__all__ = ['RunRecord', 'record_path', 'read_record', 'write_record']

PathLike = Union[str, Path]

FORMAT_NAME = 'graphormer-sepnorm-predictions'
FORMAT_VERSION = 1
_SUFFIX = '.meta.json'

# Options whose change changes the output, and how the CLI spells them.
_OPTION_FLAGS = {
    'input_format': '--input-format', 'smiles_column': '--smiles-column',
    'batch_size': '--batch-size', 'chunk_size': '--chunk-size',
    'device': '--device', 'shard': '--shard', 'top': '--top', 'by': '--by',
    'ascending': '--ascending',
}


@dataclass
class RunRecord:
    r"""What produced a prediction file.

    Args:
        input_name (str): The input as given (for messages).
        input_sha256 (str, optional): SHA-256 of the input's bytes;
            :obj:`None` for standard input.
        model_fingerprint (str): The predictor's fingerprint.
        model_source (str): Where the model came from (for messages).
        options (dict): Every option that changes the output (see
            :obj:`_OPTION_FLAGS`).
        columns (list[str]): The output header.
        complete (bool, optional): Whether the run finished.
            (default: :obj:`False`)
        rows_done (int, optional): Input rows of this run (its shard)
            handled, counted at the last save. (default: :obj:`0`)
        input_rows (int, optional): Rows of the whole input, once complete.
        output_rows (int, optional): Data rows of the file, once complete.
        package_version (str, optional): The graphormer-sepnorm version.
    """
    input_name: str
    input_sha256: Optional[str]
    model_fingerprint: str
    model_source: str
    options: dict[str, Any]
    columns: list[str]
    complete: bool = False
    rows_done: int = 0
    input_rows: Optional[int] = None
    output_rows: Optional[int] = None
    package_version: str = __version__
    format: str = field(default=FORMAT_NAME)
    format_version: int = FORMAT_VERSION

    def differences(self, other: 'RunRecord',
                    ignore: tuple[str, ...] = ()) -> list[str]:
        r"""What differs between the runs of two records, in words (empty
        if they are the same run), leaving out the options in
        :obj:`ignore`."""
        found = []
        if self.input_sha256 != other.input_sha256:
            found.append(f"the input ({other.input_name} is not the input "
                         f"{self.input_name} it was written from: their "
                         f"contents differ)")
        if self.model_fingerprint != other.model_fingerprint:
            found.append(f"the model ({other.model_source} is not the model "
                         f"{self.model_source} it was written with)")
        for key in sorted(set(self.options) | set(other.options)):
            if key in ignore:
                continue
            mine, theirs = self.options.get(key), other.options.get(key)
            if mine != theirs:
                found.append(f"{_OPTION_FLAGS.get(key, key)} "
                             f"({_shown(theirs)} here, {_shown(mine)} there)")
        if not found and self.columns != other.columns:
            found.append('the output columns')
        return found


def _shown(value: Any) -> str:
    return 'not set' if value is None else repr(value)


def record_path(output: PathLike) -> Path:
    r"""Where the record of the prediction file :obj:`output` is kept."""
    output = Path(output)
    return output.with_name(output.name + _SUFFIX)


def write_record(output: PathLike, record: RunRecord) -> None:
    r"""Writes the record of :obj:`output` atomically."""
    path = record_path(output)
    tmp = path.with_name(path.name + '.tmp')
    try:
        tmp.write_text(json.dumps(asdict(record), indent=1) + '\n')
        os.replace(tmp, path)
    except OSError as error:
        raise PredictionError(f"Cannot write {path} ({error})") from None


def read_record(output: PathLike) -> RunRecord:
    r"""The record of the prediction file :obj:`output`.

    Raises:
        PredictionError: If it is missing or damaged.
    """
    path = record_path(output)
    if not path.is_file():
        raise PredictionError(
            f"{output} has no record of the run that wrote it ({path} is "
            f"missing), so it cannot be checked to come from the same input, "
            f"model and options; keep that file beside it")
    try:
        data = json.loads(path.read_text())
        if data.get('format') != FORMAT_NAME:
            raise ValueError(f"format {data.get('format')!r}")
        if int(data.get('format_version', 0)) > FORMAT_VERSION:
            raise ValueError('written by a newer graphormer-sepnorm')
        return RunRecord(**data)
    except (OSError, ValueError, TypeError) as error:
        raise PredictionError(f"{path} is not a readable prediction record "
                              f"({error})") from None
