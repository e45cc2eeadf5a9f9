r"""File to file prediction: stream an input of any size into a CSV, with a
progress bar, resume, shards and top-K.

.. code-block:: python

    from graphormer_sepnorm.predict import Predictor

    predictor = Predictor.from_checkpoint('runs/zinc/model.safetensors')
    predictor.predict_file('library.smi.gz', 'predictions.csv.gz')
    predictor.predict_file('library.smi.gz', 'part3.csv', shard='3/8',
                           resume=True)
    predictor.predict_file('library.sdf', 'hits.csv', top=1000,
                           by='prediction')
    predictor.predict_file('library.smi', 'predictions.csv',
                           embeddings='embeddings.npy')

:meth:`Predictor.predict_file
<graphormer_sepnorm.predict.Predictor.predict_file>` calls
:func:`predict_file` here, which drives any predictor through the members
:class:`ChunkPredictor` names and so imports none.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Protocol, Union

import torch

from .embeddings import EmbeddingWriter, check_embeddings_path
from .molecules import SDF
from .prediction import (ERROR_COLUMN, ChunkResult, PredictionError,
                         columns_beside, free_name, value_fields)
from .readers import MoleculeReader
from .run_record import RunRecord, read_record, write_record
from .shards import Shard
from .top_k import ROW_COLUMN, TopK, TopKFile, check_top
from .workers import Chunk, ChunkFunction, stream_chunks
from .writers import STDOUT, CsvWriter, check_output_path

__all__ = ['predict_file', 'PredictionSummary', 'ChunkPredictor',
           'check_embeddings']

PathLike = Union[str, Path]


class ChunkPredictor(Protocol):
    r"""What :func:`predict_file` uses of its predictor, a
    :class:`~graphormer_sepnorm.predict.Predictor` or an
    :class:`~graphormer_sepnorm.predict.EnsemblePredictor`: the predictor's
    :meth:`~graphormer_sepnorm.predict.Predictor.predict_file` calls this
    module, which therefore names no predictor class."""
    device: torch.device
    source: Optional[str]
    num_outputs: int

    @property
    def prediction_columns(self) -> list[str]: ...

    @property
    def output_columns(self) -> list[str]: ...

    @property
    def with_std(self) -> bool: ...

    @property
    def embedding_columns(self) -> list[str]: ...

    @property
    def fingerprint(self) -> str: ...

    def check_sizes(self, batch_size: int,
                    chunk_size: Optional[int]) -> int: ...

    def chunk_functions(self, batch_size: int, predict: bool = True,
                        embed: bool = False
                        ) -> tuple[ChunkFunction, Callable[[Any], Any]]: ...


@dataclass
class PredictionSummary:
    r"""What :func:`predict_file` did.

    Attributes:
        output (str): The output file.
        rows (int): Rows of this run (its shard) in the output: kept from
            an interrupted run plus predicted now (for top-K: handled).
        predicted (int): Molecules predicted by this call.
        failed (int): Molecules of this call with an error row.
        kept (int): Rows kept from an interrupted run (:obj:`resume`).
        seconds (float): Wall time of this call.
        already_complete (bool): The output was complete; nothing was done.
        top (int, optional): :obj:`K` of a top-K run; the output holds
            :obj:`min(K, predicted)` rows.
        embeddings (str, optional): The embedding file written, if any.
        renamed (dict, optional): The output columns written under another
            name because the input has a column of theirs (see
            :func:`predict_file`), as :obj:`{name: written name}`.
    """
    output: str
    rows: int = 0
    predicted: int = 0
    failed: int = 0
    kept: int = 0
    seconds: float = 0.0
    already_complete: bool = False
    top: Optional[int] = None
    embeddings: Optional[str] = None
    renamed: dict[str, str] = field(default_factory=dict)


def predict_file(predictor: ChunkPredictor, input_path: PathLike,
                 output_path: PathLike, smiles_column: str = 'smiles',
                 input_format: Optional[str] = None, batch_size: int = 128,
                 chunk_size: Optional[int] = None,
                 num_workers: Optional[int] = None, resume: bool = False,
                 shard: Optional[Union[str, Shard]] = None,
                 top: Optional[int] = None, by: Optional[str] = None,
                 ascending: bool = False, progress: bool = True,
                 embeddings: Optional[PathLike] = None
                 ) -> PredictionSummary:
    r"""Predicts every molecule of :obj:`input_path` into the CSV
    :obj:`output_path`, streamed: each chunk is written (and flushed) as
    soon as it and all chunks before it are done, so memory depends on
    :obj:`chunk_size` and the number of workers, not on the input.

    The output holds every column of the input, unchanged (SMILES files:
    :obj:`smiles`, :obj:`name`; SDF: :obj:`name`, :obj:`smiles`), then one
    column per model output (:obj:`prediction` for one, or the training
    CSV's target names; for an ensemble, each followed by its
    ``<column>_std``) and :obj:`error`, one row per input row, in input
    order. An output column named as an input column (the input's own
    labels of a target) gets ``_pred`` appended, as often as needed to be
    free (see :func:`~graphormer_sepnorm.predict.prediction.columns_beside`):
    the input's column stays as it is. Beside it, ``<output>.meta.json``
    records the input, model (every member of an ensemble) and options (see
    :mod:`~graphormer_sepnorm.predict.run_record`).

    Args:
        predictor (Predictor): The model, or an
            :class:`~graphormer_sepnorm.predict.EnsemblePredictor`.
        input_path (str or Path): A :obj:`.csv`, :obj:`.tsv`, :obj:`.smi`
            or :obj:`.sdf` file, each optionally :obj:`.gz`, or :obj:`"-"`
            for standard input (see
            :mod:`~graphormer_sepnorm.predict.readers`).
        output_path (str or Path): A :obj:`.csv` or :obj:`.csv.gz` file
            (its folder is created if needed), or :obj:`"-"` for standard
            output.
        smiles_column (str, optional): SMILES column of CSV and TSV input.
            (default: :obj:`"smiles"`)
        input_format (str, optional): :obj:`"csv"`, :obj:`"tsv"`,
            :obj:`"smi"` or :obj:`"sdf"`, if the name does not tell it.
            (default: :obj:`None`)
        batch_size (int, optional): Molecules per forward pass.
            (default: :obj:`128`)
        chunk_size (int, optional): Consecutive rows sorted by size and
            predicted together; also the unit of shards and of resume.
            (default: :obj:`max(1024, 8 * batch_size)`)
        num_workers (int, optional): Worker processes; :obj:`0`: this
            process; :obj:`None`: one per core on CPU for inputs of more
            than one chunk. (default: :obj:`None`)
        resume (bool, optional): Continue the interrupted output file:
            keep its complete rows and predict the rest. Refused if the
            file comes from another input, model or options; starts anew if
            there is no file. (default: :obj:`False`)
        shard (str or Shard, optional): :obj:`"K/N"`: predict only shard
            :obj:`K` of :obj:`N` (see
            :mod:`~graphormer_sepnorm.predict.shards`); merge the parts with
            :func:`~graphormer_sepnorm.predict.merge_predictions`.
            (default: :obj:`None`)
        top (int, optional): Keep only the :obj:`top` best molecules by
            column :obj:`by`, best first, with their input row number in a
            :obj:`row` column. (default: :obj:`None`)
        by (str, optional): The prediction column that ranks molecules for
            :obj:`top`, as the model names it (for an ensemble: the
            members' mean, not a ``_std`` column); the record keeps its
            name in the output. (default: :obj:`None`)
        ascending (bool, optional): With :obj:`top`, lower values are
            better. (default: :obj:`False`)
        progress (bool, optional): Show a progress bar (molecules/s, ETA)
            on stderr. (default: :obj:`True`)
        embeddings (str or Path, optional): Also write the graph-token
            embedding of every input row to this :obj:`.npy`, :obj:`.csv`
            or :obj:`.csv.gz` file, in input order, a row of NaN where
            the output row has an error (see
            :mod:`~graphormer_sepnorm.predict.embeddings`); not with
            :obj:`resume`, :obj:`shard` or :obj:`top`. The encoder's pass
            that gives the predictions gives them too.
            (default: :obj:`None`)

    Raises:
        PredictionError: For a problem with the call (bad arguments, an
            unreadable or empty input, an output that cannot be written, an
            output that cannot be resumed), raised before any prediction
            where it can be told before.
    """
    start = time.perf_counter()
    chunk_size = predictor.check_sizes(batch_size, chunk_size)
    shard = Shard.parse(shard) if shard is not None else None
    ranking = check_top(predictor.prediction_columns, top, by, ascending)
    output = str(output_path)
    if resume and output == STDOUT:
        raise PredictionError("--resume needs an output file, not standard "
                              "output; pass --output FILE")
    check_output_path(output)
    _check_distinct(input_path, output, 'output')
    if embeddings is not None:
        check_embeddings(embeddings, input_path, output, resume=resume,
                         shard=shard, top=top)
    reader = MoleculeReader(input_path, input_format, smiles_column)
    if resume and reader.is_stdin:
        raise PredictionError(
            "--resume cannot check that standard input is the same input as "
            "before; save it to a file and predict from the file")
    try:
        total, input_sha256 = reader.scan()
        rows = reader.rows()
        first = next(rows, None) if total != 0 else None
        if first is None:
            raise PredictionError(f"{reader.name} holds no molecules; "
                                  f"check that it is the file you meant")
        rows = chain([first], rows)
        outputs = columns_beside(reader.columns, predictor.prediction_columns,
                                 predictor.with_std)
        columns = reader.columns + outputs
        if ranking:
            # --by as written: merge and resume rank the rows by it.
            by = outputs[ranking[1] * (2 if predictor.with_std else 1)]
        record = RunRecord(
            input_name=reader.name, input_sha256=input_sha256,
            model_fingerprint=predictor.fingerprint,
            model_source=str(predictor.source or 'model'),
            options={'input_format': reader.format,
                     'smiles_column': (smiles_column if reader.format in
                                       ('csv', 'tsv') else None),
                     'batch_size': batch_size, 'chunk_size': chunk_size,
                     'device': predictor.device.type,
                     'shard': str(shard) if shard else None, 'top': top,
                     'by': by, 'ascending': ascending if top else None},
            columns=([free_name(ROW_COLUMN, columns)] + columns[:-1])
            if ranking else columns)
        summary = PredictionSummary(
            output=output, top=top,
            embeddings=str(embeddings) if embeddings is not None else None,
            renamed={name: written for name, written in zip(
                predictor.output_columns + [ERROR_COLUMN], outputs)
                if name != written})
        if resume and Path(output).exists():
            earlier = read_record(output)
            differences = earlier.differences(record)
            if differences:
                raise PredictionError(
                    f"Cannot resume {output}: it comes from another run; "
                    f"what differs: {'; '.join(differences)}. Start a new "
                    f"output (drop --resume) or use the same input, model "
                    f"and options")
            if earlier.complete:
                summary.already_complete = True
                summary.rows = summary.kept = earlier.rows_done
                return summary
            record.rows_done = earlier.rows_done
        elif output != STDOUT:
            write_record(output, record)
        expected = (shard.owned_rows(total, chunk_size) if shard and total
                    else total)
        _Run(predictor, reader, record, summary, chunk_size, shard,
             ranking).run(rows, batch_size, num_workers, resume,
                          expected, progress, embeddings)
    finally:
        reader.close()
    summary.seconds = time.perf_counter() - start
    return summary


def _check_distinct(input_path: PathLike, output: PathLike,
                    what: str) -> None:
    if str(output) != STDOUT and str(input_path) != '-' and \
            Path(output).resolve() == Path(input_path).resolve():
        raise PredictionError(f"The {what} {output} is the input; name "
                              f"another file")


def check_embeddings(path: PathLike, input_path: PathLike, output: str,
                     **options: Any) -> None:
    r"""Checks, before any work, that :func:`predict_file` can write the
    embedding file :obj:`path` beside the :obj:`output` of
    :obj:`input_path` with the :obj:`options` :obj:`resume`, :obj:`shard`
    and :obj:`top`.

    Raises:
        PredictionError: Naming the problem.
    """
    for option, value in options.items():
        if value:
            raise PredictionError(
                f"--embeddings cannot be combined with --{option}: the "
                f"embedding file is written whole, by one run, one row per "
                f"input molecule; drop one of them")
    check_embeddings_path(path)
    _check_distinct(input_path, path, 'embeddings file')
    if output != STDOUT and Path(output).resolve() == Path(path).resolve():
        raise PredictionError(f"The embeddings file {path} is the output; "
                              f"name another file")


class _Run:
    r"""One call of :func:`predict_file` once its arguments are checked:
    reads chunks, predicts them, writes them."""
    def __init__(self, predictor: ChunkPredictor, reader: MoleculeReader,
                 record: RunRecord, summary: PredictionSummary,
                 chunk_size: int, shard: Optional[Shard],
                 ranking: Optional[tuple[TopK, int]]) -> None:
        self.predictor = predictor
        self.reader = reader
        self.record = record
        self.summary = summary
        self.chunk_size = chunk_size
        self.shard = shard
        top, self.score_index = ranking or (None, 0)
        self.top = (TopKFile(top, summary.output, record)
                    if top is not None else None)
        self.input_rows = 0
        self.writer: Optional[CsvWriter] = None
        self.embedding_writer: Optional[EmbeddingWriter] = None

    def run(self, rows: Iterator[tuple[list[str], str]], batch_size: int,
            num_workers: Optional[int], resume: bool,
            expected: Optional[int], progress: bool,
            embeddings: Optional[PathLike]) -> None:
        output = self.summary.output
        if self.top is not None:
            done = self.top.load() if resume else 0
        else:
            self.writer = CsvWriter(output, self.record.columns, resume)
            done = self.writer.kept_rows
        # Counted from the rows kept, not from the rows this call writes:
        # a run killed after its last row has none left to write.
        self.summary.kept = self.record.rows_done = done
        embed = embeddings is not None
        bar = _progress_bar(progress, expected, done)
        try:
            if embed:
                self.embedding_writer = EmbeddingWriter(
                    embeddings, self.predictor.embedding_columns)
            chunks = self._chunks(rows, done)
            function, finish = self.predictor.chunk_functions(
                batch_size, embed=embed)
            for chunk, result in stream_chunks(
                    function, chunks, num_workers,
                    on_cpu=self.predictor.device.type == 'cpu',
                    finish=finish):
                written = self._write(chunk, result, done)
                bar.update(written)
            self._finish()
        finally:
            bar.close()
            if self.writer is not None:
                self.writer.close()
            if self.embedding_writer is not None:
                self.embedding_writer.close()

    def _chunks(self, rows: Iterator[tuple[list[str], str]],
                done: int) -> Iterator[Chunk]:
        r"""This run's chunks from the first with rows not yet done; the
        context of each is :obj:`(first row number, first owned index,
        fields)`."""
        owned = 0
        for number in range(sys.maxsize):
            block = list(islice(rows, self.chunk_size))
            if not block:
                return
            self.input_rows += len(block)
            if self.shard is not None and not self.shard.owns(number):
                continue
            first_owned, owned = owned, owned + len(block)
            if owned <= done:
                continue
            yield Chunk([molecule for _, molecule in block],
                        self.reader.kind,
                        (number * self.chunk_size + 1, first_owned,
                         [fields for fields, _ in block]))

    def _write(self, chunk: Chunk, result: ChunkResult, done: int) -> int:
        first_row, first_owned, fields = chunk.context
        predictions = result.predictions
        skip = max(done - first_owned, 0)  # Rows an earlier run wrote.
        out = []
        for offset in range(skip, len(predictions)):
            p, row = predictions[offset], list(fields[offset])
            if self.reader.kind == SDF:
                row[self.reader.smiles_index] = p.smiles
            row += value_fields(p, self.predictor.num_outputs,
                                self.predictor.with_std)
            if p.ok:
                self.summary.predicted += 1
            else:
                self.summary.failed += 1
            if self.top is not None:
                score = (p.value[self.score_index] if isinstance(
                    p.value, tuple) else p.value)
                self.top.rows.push(first_row + offset, score,
                              [str(first_row + offset)] + row)
            else:
                out.append(row + [p.error or ''])
        if self.writer is not None:
            self.writer.write_rows(out)
        if self.embedding_writer is not None:  # Never resumed: skip is 0.
            self.embedding_writer.write([p.smiles for p in predictions],
                                        result.embeddings)
        self.summary.rows += len(predictions) - skip
        self.record.rows_done = first_owned + len(predictions)
        if self.top is not None:
            self.top.save_if_due()
        return len(predictions) - skip

    def _finish(self) -> None:
        self.record.complete = True
        self.record.input_rows = self.input_rows
        if self.top is not None:
            self.top.save()
            self.record.output_rows = len(self.top.rows)
        else:
            self.record.output_rows = self.record.rows_done
        if self.embedding_writer is not None:
            self.embedding_writer.finish()
        self.summary.rows += self.summary.kept
        if self.summary.output != STDOUT:
            write_record(self.summary.output, self.record)


def _progress_bar(enabled: bool, total: Optional[int], initial: int):
    from tqdm import tqdm

    interactive = sys.stderr.isatty()
    return tqdm(total=total, initial=initial, unit=' mol', unit_scale=True,
                disable=not enabled, file=sys.stderr, dynamic_ncols=True,
                smoothing=0.1, mininterval=0.5 if interactive else 30.0,
                desc='Predicting')
