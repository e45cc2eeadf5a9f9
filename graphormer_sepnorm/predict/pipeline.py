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
:func:`predict_file` here, which checks the call and hands the work to
:class:`~.file_run.FileRun`; both drive any predictor through the members
:class:`~.file_run.ChunkPredictor` names and so import none.
"""
from __future__ import annotations

import time
from dataclasses import replace
from itertools import chain
from pathlib import Path
from typing import Any, Optional, Union

from .embeddings import check_embeddings_path
from .feature_columns import column_positions
from .file_run import (ChunkPredictor, FileRun, PredictFileOptions,
                       PredictionSummary)
from .prediction import (ERROR_COLUMN, PredictionError, columns_beside,
                         free_name)
from .readers import MoleculeReader
from .run_record import RunRecord, read_record, write_record
from .shards import Shard
from .top_k import ROW_COLUMN, check_top
from .writers import STDOUT, check_output_path

__all__ = ['predict_file', 'PredictFileOptions', 'PredictionSummary',
           'ChunkPredictor', 'check_embeddings']

PathLike = Union[str, Path]


def predict_file(predictor: ChunkPredictor, input_path: PathLike,
                 output_path: PathLike,
                 options: Optional[PredictFileOptions] = None
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
    order. A model trained with :obj:`data.feature_columns` reads those
    columns of a CSV or TSV input beside the SMILES (by name; see
    :mod:`~graphormer_sepnorm.predict.feature_columns`). An output column
    named as an input column (the input's own
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
        options (PredictFileOptions, optional): Format, sizes, workers,
            resume, shard, top-K, progress and embeddings. (default: the
            defaults of :class:`PredictFileOptions`)

    Raises:
        PredictionError: For a problem with the call (bad arguments, an
            unreadable or empty input, an input without the model's
            feature columns, an output that cannot be written, an output
            that cannot be resumed), raised before any prediction where it
            can be told before.
    """
    start = time.perf_counter()
    options = options or PredictFileOptions()
    options = replace(options, chunk_size=predictor.check_sizes(
        options.batch_size, options.chunk_size), shard=Shard.parse(
            options.shard) if options.shard is not None else None)
    resume, shard, top, embeddings = (options.resume, options.shard,
                                      options.top, options.embeddings)
    ranking = check_top(predictor.prediction_columns, top, options.by,
                        options.ascending)
    output = str(output_path)
    if resume and output == STDOUT:
        raise PredictionError("--resume needs an output file, not standard "
                              "output; pass --output FILE")
    check_output_path(output)
    _check_distinct(input_path, output, 'output')
    if embeddings is not None:
        check_embeddings(embeddings, input_path, output, resume=resume,
                         shard=shard, top=top)
    reader = MoleculeReader(input_path, options.input_format,
                            options.smiles_column)
    if resume and reader.is_stdin:
        raise PredictionError(
            "--resume cannot check that standard input is the same input as "
            "before; save it to a file and predict from the file")
    try:
        positions = column_positions(reader.columns,
                                     predictor.feature_columns, reader.name,
                                     reader.format)
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
        # --by as written: merge and resume rank the rows by it.
        by = (outputs[ranking[1] * (2 if predictor.with_std else 1)]
              if ranking else options.by)
        record = RunRecord(
            input_name=reader.name, input_sha256=input_sha256,
            model_fingerprint=predictor.fingerprint,
            model_source=str(predictor.source or 'model'),
            options={'input_format': reader.format,
                     'smiles_column': (options.smiles_column if reader.format
                                       in ('csv', 'tsv') else None),
                     'batch_size': options.batch_size,
                     'chunk_size': options.chunk_size,
                     'device': predictor.device.type,
                     'shard': str(shard) if shard else None, 'top': top,
                     'by': by,
                     'ascending': options.ascending if top else None},
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
        expected = (shard.owned_rows(total, options.chunk_size)
                    if shard and total else total)
        FileRun(predictor, reader, record, summary, options, ranking,
                positions).run(rows, expected)
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
