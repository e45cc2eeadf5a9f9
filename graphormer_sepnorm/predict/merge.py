r"""Merge the files of a sharded prediction back into one, in input order.

.. code-block:: python

    from graphormer_sepnorm.predict import merge_predictions

    merge_predictions(['part1.csv', 'part2.csv', 'part3.csv'], 'all.csv')

The parts' records (``<part>.meta.json``) say which shard each part is and
prove that they come from the same input, model and options and are
complete; the merge refuses anything else. Full outputs are interleaved
chunk by chunk (:mod:`~graphormer_sepnorm.predict.shards`): the result is
the unsharded run's output, byte for byte. Top-K parts give the top
:obj:`K` of their union, as the unsharded run would.
"""
from __future__ import annotations

import dataclasses
import math
import os
from itertools import islice
from pathlib import Path
from typing import Iterator, Sequence, Union

from .prediction import PredictionError
from .run_record import RunRecord, read_record, write_record
from .shards import Shard
from .top_k import TopK, ranked_rows
from .writers import CsvWriter, check_output_path, read_csv_rows, write_csv

__all__ = ['merge_predictions']

PathLike = Union[str, Path]


def merge_predictions(parts: Sequence[PathLike], output: PathLike,
                      progress: bool = True) -> int:
    r"""Merges the files of every shard of one sharded run into
    :obj:`output` (:obj:`.csv` or :obj:`.csv.gz`), with its own record;
    returns the number of data rows written.

    Args:
        parts (Sequence[str or Path]): The output file of each shard, in any
            order, each with its ``.meta.json`` beside it.
        output (str or Path): The merged file.
        progress (bool, optional): Show a progress bar on stderr.
            (default: :obj:`True`)

    Raises:
        PredictionError: If a shard is missing, given twice or unfinished,
            the parts come from different runs, a part has the wrong number
            of rows, or the output cannot be written (checked before
            writing anything).
    """
    check_output_path(output)
    if any(Path(part).resolve() == Path(output).resolve() for part in parts):
        raise PredictionError(f"The output {output} is one of the parts; "
                              f"name another file")
    missing = [str(part) for part in parts if not Path(part).is_file()]
    if missing:
        raise PredictionError(
            f"{', '.join(missing)}: no such file; pass the output file that "
            f"each shard's predict --shard i/N wrote (with its .meta.json "
            f"beside it)")
    records = [(str(part), read_record(part)) for part in parts]
    shards = _check_parts(records)
    reference = records[0][1]
    merged = dataclasses.replace(
        reference, options=dict(reference.options, shard=None),
        rows_done=reference.input_rows)
    ordered = [part for _, part in sorted((shard.index, part)
                                          for part, shard in shards)]
    if reference.options.get('top'):
        rows = _merge_top(ordered, reference, output)
    else:
        rows = _interleave(ordered, reference, output, progress)
    merged.output_rows = rows
    write_record(output, merged)
    return rows


def _check_parts(records: list[tuple[str, RunRecord]]
                 ) -> list[tuple[str, Shard]]:
    r"""Each part with its shard, once they are shown to be every shard of
    one complete run, each once."""
    if not records:
        raise PredictionError("Give the output files of the shards to merge")
    shards: list[tuple[str, Shard]] = []
    reference_part, reference = records[0]
    for part, record in records:
        if not record.options.get('shard'):
            raise PredictionError(f"{part} is not the output of a shard (it "
                                  f"was written without --shard); nothing to "
                                  f"merge")
        shards.append((part, Shard.parse(record.options['shard'])))
        differences = reference.differences(record, ignore=('shard', ))
        if differences:
            raise PredictionError(
                f"{part} and {reference_part} come from different runs; what "
                f"differs: {'; '.join(differences)}")
        if not record.complete:
            raise PredictionError(
                f"{part} is not finished ({record.rows_done} of its rows "
                f"done); finish it by running its command again with "
                f"--resume")
        if record.input_rows != reference.input_rows:
            raise PredictionError(
                f"{part} read {record.input_rows} input rows but "
                f"{reference_part} read {reference.input_rows}; predict both "
                f"from the same input")
    count = shards[0][1].count
    seen: dict[int, str] = {}
    for part, shard in shards:
        if shard.count != count:
            raise PredictionError(
                f"{part} is shard {shard} but {reference_part} is shard "
                f"{shards[0][1]}: different numbers of shards")
        if shard.index in seen:
            raise PredictionError(f"Shard {shard} is given twice "
                                  f"({seen[shard.index]} and {part})")
        seen[shard.index] = part
    missing = [f'{k}/{count}' for k in range(1, count + 1) if k not in seen]
    if missing:
        raise PredictionError(f"Shard(s) {', '.join(missing)} missing; give "
                              f"the output of every shard")
    return shards


def _data_rows(part: str, columns: list[str]) -> Iterator[list[str]]:
    rows = read_csv_rows(part)
    if next(rows, None) != columns:
        raise PredictionError(f"{part} does not start with the header its "
                              f"record names; it was changed after it was "
                              f"written")
    return rows


def _interleave(parts: list[str], reference: RunRecord, output: PathLike,
                progress: bool) -> int:
    from tqdm import tqdm

    chunk_size = reference.options['chunk_size']
    total = reference.input_rows
    streams = [_data_rows(part, reference.columns) for part in parts]
    # Written under a hidden name, renamed once whole: a merge that fails
    # half way leaves no output.
    output = Path(output)
    partial = output.with_name('.' + output.name)
    writer = CsvWriter(partial, reference.columns)
    try:
        with tqdm(total=total, unit=' rows', unit_scale=True, desc='Merging',
                  disable=not progress) as bar:
            for number in range(math.ceil(total / chunk_size)):
                expected = min(chunk_size, total - number * chunk_size)
                part = number % len(parts)
                rows = list(islice(streams[part], expected))
                if len(rows) != expected:
                    raise PredictionError(
                        f"{parts[part]} ends early: it holds fewer rows than "
                        f"its shard of {total} input rows; predict that "
                        f"shard again")
                writer.write_rows(rows)
                bar.update(expected)
        writer.close()
        for part, stream in zip(parts, streams):
            if next(stream, None) is not None:
                raise PredictionError(
                    f"{part} holds more rows than its shard of {total} input "
                    f"rows; predict that shard again")
        os.replace(partial, output)
    finally:
        writer.close()
        partial.unlink(missing_ok=True)
    return total


def _merge_top(parts: list[str], reference: RunRecord,
               output: PathLike) -> int:
    options = reference.options
    top = TopK(options['top'], bool(options['ascending']))
    for part in parts:
        top.extend(ranked_rows(_data_rows(part, reference.columns),
                               reference.columns, options['by']))
    best = top.best()
    write_csv(output, [reference.columns] + best)
    return len(best)
