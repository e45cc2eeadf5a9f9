r"""A benchmark's report (``benchmarks/predict_throughput.py``,
``benchmarks/ensemble_throughput.py``): printed, and written to the file
the benchmark was given."""
from __future__ import annotations

from pathlib import Path
from typing import Union

PathLike = Union[str, Path]


def write_report(text: str, output: Union[PathLike, None]) -> None:
    r"""Prints a benchmark's report :obj:`text` after a blank line and, if
    :obj:`output` is given, writes it there (its folder made if needed)."""
    print()
    print(text)
    if output is not None:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(text)
