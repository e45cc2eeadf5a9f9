r"""One call of :func:`~graphormer_sepnorm.predict.predict_file`: what it
takes (:class:`PredictFileOptions`), what it gives
(:class:`PredictionSummary`), what it uses of its predictor
(:class:`ChunkPredictor`), and its run once the arguments are checked
(:class:`FileRun`: reads chunks, predicts them, writes them)."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Iterator, Optional, Union

from .embeddings import EmbeddingWriter
from .molecules import SDF, WithColumns
from .prediction import ChunkResult, value_fields
from .readers import MoleculeReader
from .run_record import RunRecord, write_record
from .shards import Shard
from .top_k import TopK, TopKFile
from .workers import Chunk, stream_chunks
from .writers import STDOUT, CsvWriter

__all__ = ['PredictFileOptions', 'PredictionSummary', 'ChunkPredictor',
           'FileRun']

PathLike = Union[str, Path]


#: What :func:`~graphormer_sepnorm.predict.predict_file` takes as its
#: predictor: a :class:`~graphormer_sepnorm.predict.running.PredictorBase`
#: (a :class:`~graphormer_sepnorm.predict.Predictor` or an
#: :class:`~graphormer_sepnorm.predict.EnsemblePredictor`), which calls it
#: and so is not imported here. Used: :attr:`device`, :attr:`source`,
#: :attr:`num_outputs`, the column names, :attr:`with_std`,
#: :attr:`fingerprint`, :attr:`feature_columns`, :meth:`check_sizes` and
#: :meth:`chunk_functions`.
ChunkPredictor = Any


@dataclass
class PredictFileOptions:
    r"""The options of :func:`~graphormer_sepnorm.predict.predict_file`
    (the keywords of :meth:`Predictor.predict_file
    <graphormer_sepnorm.predict.Predictor.predict_file>`).

    Attributes:
        smiles_column (str): SMILES column of CSV and TSV input.
            (default: :obj:`"smiles"`)
        input_format (str, optional): :obj:`"csv"`, :obj:`"tsv"`,
            :obj:`"smi"` or :obj:`"sdf"`, if the name does not tell it.
            (default: :obj:`None`)
        batch_size (int): Molecules per forward pass. (default: :obj:`128`)
        chunk_size (int, optional): Consecutive rows sorted by size and
            predicted together; also the unit of shards and of resume.
            (default: :obj:`max(1024, 8 * batch_size)`)
        num_workers (int, optional): Worker processes; :obj:`0`: this
            process; :obj:`None`: one per core on CPU for inputs of more
            than one chunk. (default: :obj:`None`)
        resume (bool): Continue the interrupted output file: keep its
            complete rows and predict the rest. Refused if the file comes
            from another input, model or options; starts anew if there is
            no file. (default: :obj:`False`)
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
        ascending (bool): With :obj:`top`, lower values are better.
            (default: :obj:`False`)
        progress (bool): Show a progress bar (molecules/s, ETA) on stderr.
            (default: :obj:`True`)
        embeddings (str or Path, optional): Also write the graph-token
            embedding of every input row to this :obj:`.npy`, :obj:`.csv`
            or :obj:`.csv.gz` file, in input order, a row of NaN where
            the output row has an error (see
            :mod:`~graphormer_sepnorm.predict.embeddings`); not with
            :obj:`resume`, :obj:`shard` or :obj:`top`. The encoder's pass
            that gives the predictions gives them too.
            (default: :obj:`None`)
    """
    smiles_column: str = 'smiles'
    input_format: Optional[str] = None
    batch_size: int = 128
    chunk_size: Optional[int] = None
    num_workers: Optional[int] = None
    resume: bool = False
    shard: Optional[Union[str, Shard]] = None
    top: Optional[int] = None
    by: Optional[str] = None
    ascending: bool = False
    progress: bool = True
    embeddings: Optional[PathLike] = None

@dataclass
class PredictionSummary:
    r"""What :func:`~graphormer_sepnorm.predict.predict_file` did.

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
            :func:`~graphormer_sepnorm.predict.predict_file`), as
            :obj:`{name: written name}`.
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


class FileRun:
    r"""One call of :func:`~graphormer_sepnorm.predict.predict_file` once
    its arguments are checked: reads chunks, predicts them, writes them.
    Its :obj:`options` hold the chunk size to use and the parsed shard;
    :obj:`feature_positions`, the input columns of the model's feature
    columns (:obj:`None`: it reads none), whose cells go with each
    molecule."""
    def __init__(self, predictor: ChunkPredictor, reader: MoleculeReader,
                 record: RunRecord, summary: PredictionSummary,
                 options: PredictFileOptions,
                 ranking: Optional[tuple[TopK, int]],
                 feature_positions: Optional[list[int]] = None) -> None:
        self.predictor = predictor
        self.reader = reader
        self.feature_positions = feature_positions
        self.record = record
        self.summary = summary
        self.options = options
        top, self.score_index = ranking or (None, 0)
        self.top = (TopKFile(top, summary.output, record)
                    if top is not None else None)
        self.input_rows = 0
        self.writer: Optional[CsvWriter] = None
        self.embedding_writer: Optional[EmbeddingWriter] = None

    def run(self, rows: Iterator[tuple[list[str], str]],
            expected: Optional[int]) -> None:
        r"""Predicts :obj:`rows` (:obj:`expected` of them, for the progress
        bar, if known) into the output."""
        output, options = self.summary.output, self.options
        if self.top is not None:
            done = self.top.load() if options.resume else 0
        else:
            self.writer = CsvWriter(output, self.record.columns,
                                    options.resume)
            done = self.writer.kept_rows
        # Counted from the rows kept, not from the rows this call writes:
        # a run killed after its last row has none left to write.
        self.summary.kept = self.record.rows_done = done
        embed = options.embeddings is not None
        bar = _progress_bar(options.progress, expected, done)
        try:
            if embed:
                self.embedding_writer = EmbeddingWriter(
                    options.embeddings, self.predictor.embedding_columns)
            chunks = self._chunks(rows, done)
            function, finish = self.predictor.chunk_functions(
                options.batch_size, embed=embed)
            for chunk, result in stream_chunks(
                    function, chunks, options.num_workers,
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
        owned, size, shard = 0, self.options.chunk_size, self.options.shard
        for number in range(sys.maxsize):
            block = list(islice(rows, size))
            if not block:
                return
            self.input_rows += len(block)
            if shard is not None and not shard.owns(number):
                continue
            first_owned, owned = owned, owned + len(block)
            if owned <= done:
                continue
            positions = self.feature_positions
            yield Chunk([molecule if positions is None else
                         WithColumns(molecule, [fields[p] for p in positions])
                         for fields, molecule in block],
                        self.reader.kind,
                        (number * size + 1, first_owned,
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
