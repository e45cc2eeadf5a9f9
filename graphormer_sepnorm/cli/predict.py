r"""The command line of :obj:`scripts/predict.py` (its shards are merged by
:mod:`.merge`).

Per-molecule problems become an error message in that molecule's row (exit
status 0); problems with the call itself print one ``error: ...`` line to
stderr and exit with status 2, before any prediction where they can be told
before (arguments, checkpoint, output path, input, resume).
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from .options import add_batch_size, add_device, add_quiet, fail

__all__ = ['predict_parser', 'predict_main']

# Exit status of an interrupted run (128 + SIGINT), as shells report it.
_INTERRUPTED = 130


def predict_parser(prog: Optional[str] = None) -> argparse.ArgumentParser:
    r"""The parser of :obj:`scripts/predict.py`; :obj:`prog` names the
    program in the usage line (default: the running script's name)."""
    from ..bundled import BUNDLED_MODELS
    from ..predict.readers import INPUT_FORMATS

    models = ', '.join(f'{name} ({entry.description})'
                       for name, entry in BUNDLED_MODELS.items())
    parser = argparse.ArgumentParser(
        prog=prog,
        description='Predict molecular properties from SMILES with a '
        'Graphormer-SepNorm model, from a few molecules to screening '
        'libraries of any size (streamed, resumable, shardable). Regression '
        'models give the property in the units of their training targets; '
        'binary models give the probability of the positive class. Several '
        '--checkpoint paths make an ensemble: their mean, plus a '
        '<column>_std column per prediction column. The output keeps every '
        'input column unchanged: a prediction column named as an input '
        'column (e.g. a CSV holding its own labels of the target) is written '
        'as <column>_pred (_pred appended again until the name is free; an '
        'ensemble\'s <column>_std follows its column; error likewise). '
        '--embeddings also writes the '
        'graph-token embedding of each molecule (like chemprop '
        'fingerprint). A model trained with data.feature_columns reads those '
        'columns, by name, from a CSV/TSV --input beside the SMILES (an empty '
        'or non-numeric cell: an error row).',
        epilog='Per-molecule errors go to the "error" column (exit status '
        '0); a bad argument, a missing/incompatible checkpoint, an '
        'unreadable input, an input without the model\'s feature columns or '
        'an unwritable output exits with status 2 and a one-line message, '
        'before any prediction.')
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument('--checkpoint', nargs='+', metavar='PATH',
                        help='model.safetensors written by train, '
                        'or its run directory. Several: an ensemble of '
                        'models with the same featurizer, task, targets and '
                        'max_nodes, whose values are averaged (regression: '
                        'in the units of the targets; binary: the '
                        'probabilities), with a <column>_std column beside '
                        'each prediction column: the population standard '
                        'deviation across the models')
    source.add_argument('--model', metavar='NAME',
                        choices=sorted(BUNDLED_MODELS),
                        help=f'a bundled model: {models}')
    inputs = parser.add_mutually_exclusive_group(required=True)
    inputs.add_argument('--smiles', nargs='+', metavar='SMILES',
                        help='one or more SMILES strings (printed as a '
                        'table unless --output is given); not for a model '
                        'trained with data.feature_columns, which needs '
                        'those columns: use --input')
    inputs.add_argument('--input', metavar='FILE',
                        help='.csv or .tsv with a header row, .smi (SMILES '
                        'and an optional name per line), .sdf; each '
                        'optionally .gz; - for standard input. A model '
                        'trained with data.feature_columns needs a .csv or '
                        '.tsv holding those columns')
    parser.add_argument('--input-format', choices=sorted(INPUT_FORMATS),
                        help='format of --input when its name does not say '
                        '(standard input: smi)')
    parser.add_argument('--smiles-column', default='smiles', metavar='NAME',
                        help='column of a CSV/TSV --input holding the '
                        'SMILES (default: smiles)')
    parser.add_argument('--output', metavar='CSV',
                        help='write the predictions to this .csv or .csv.gz '
                        '(all input columns, unchanged + prediction [+ '
                        'prediction_std] + error, each renamed <name>_pred '
                        'if the input has a column of that name; one row per '
                        'input molecule in input order, '
                        'flushed chunk by chunk; its folder is created if '
                        'needed; a .meta.json record goes beside it). '
                        'Default: CSV on standard output for --input, a '
                        'table for --smiles')
    parser.add_argument('--embeddings', metavar='FILE',
                        help='also write the graph-token embedding of each '
                        'input molecule (the graph token after the final '
                        'norm, which the prediction head reads) to this .npy '
                        '(float32, molecules x width) or .csv/.csv.gz '
                        '(smiles + embedding_0, ...): one row per input '
                        'molecule in input order, a row of NaN where the '
                        'molecule has an error. Ensembles: the members\' '
                        'embeddings side by side (member0_embedding_0, ...). '
                        'Streamed; the file appears when the run completes; '
                        'not with --resume, --shard or --top; the encoder '
                        'runs a second time')
    parser.add_argument('--resume', action='store_true',
                        help='continue an interrupted --output: keep its '
                        'complete rows, predict the rest (refused if it '
                        'comes from another input, model, set of ensemble '
                        'models or options; starts anew if the file does '
                        'not exist)')
    parser.add_argument('--shard', metavar='K/N',
                        help='predict only shard K of N (a deterministic 1/N '
                        'of the rows); merge the shards with the merge '
                        'command (scripts/merge_predictions.py)')
    parser.add_argument('--top', type=int, metavar='K',
                        help='keep only the K best molecules (with --by), '
                        'best first, with their input row number')
    parser.add_argument('--by', metavar='COLUMN',
                        help='prediction column that ranks --top (e.g. '
                        'prediction; for an ensemble, the mean)')
    parser.add_argument('--ascending', action='store_true',
                        help='with --top: lower values are better (default: '
                        'higher)')
    report = parser.add_argument_group(
        'report', 'a self-contained HTML page of the predictions (no '
        'network needed to open it): the distribution of every prediction, '
        'and the top K, a random sample and the failures drawn, each atom '
        'shaded by its contribution to the prediction')
    report.add_argument('--report', metavar='HTML',
                        help='write the report to this file (with --input, '
                        'read back from --output, which it needs); ranked by '
                        '--by (default: the first prediction column), '
                        'highest first unless --ascending')
    report.add_argument('--report-top', type=int, default=50, metavar='K',
                        help='best molecules drawn (default: 50)')
    report.add_argument('--report-sample', type=int, default=100,
                        metavar='N', help='molecules drawn at random from '
                        'all predicted ones, seed 0 (default: 100)')
    report.add_argument('--report-target', metavar='COLUMN',
                        help='input column of measured values: predicted '
                        'against measured (binary: the ROC curve) and each '
                        "molecule's error")
    report.add_argument('--report-steps', type=int, default=8, metavar='N',
                        help='integration steps the atom contributions '
                        '(integrated gradients on the atom embeddings) start '
                        'with, doubled for a molecule whose contributions do '
                        "not add up to its prediction minus the baseline's "
                        '(the page says to within what); 0: no '
                        'contributions (default: 8)')
    add_batch_size(parser, 128)
    parser.add_argument('--chunk-size', type=int, metavar='N',
                        help='consecutive molecules sorted by size and '
                        'predicted together (default: max(1024, 8 x '
                        'batch size))')
    add_device(parser)
    parser.add_argument('--num-workers', type=int, default=None, metavar='N',
                        help='worker processes (default: one per core, one '
                        'per core but one with a GPU, for inputs above one '
                        'chunk; 0: predict in this process)')
    add_quiet(parser)
    return parser


def predict_main(argv: Optional[Sequence[str]] = None,
                 prog: Optional[str] = None) -> int:
    r"""Runs :obj:`scripts/predict.py`; returns the exit status."""
    args = predict_parser(prog).parse_args(argv)
    for flag in ('batch_size', 'chunk_size', 'top'):
        value = getattr(args, flag)
        if value is not None and value < 1:
            return fail(f"--{flag.replace('_', '-')} must be a positive "
                        f"integer, got {value}")
    for flag in ('report_top', 'report_sample', 'report_steps'):
        if getattr(args, flag) < 0:
            return fail(f"--{flag.replace('_', '-')} must be 0 or more")
    if args.report is not None and args.input is not None and \
            args.output in (None, '-'):
        return fail('--report reads the predictions back from --output; '
                    'add --output FILE.csv')
    if args.num_workers is not None and args.num_workers < 0:
        return fail('--num-workers must be 0 or more')
    if args.smiles is not None:
        used = [flag for flag in ('resume', 'shard', 'top', 'input_format')
                if getattr(args, flag)]
        if used:
            return fail(f"--{used[0].replace('_', '-')} works on an --input "
                        f"file, not on --smiles")

    from ..checkpoint import CheckpointError
    from ..predict.embeddings import check_embeddings_path
    from ..predict.pipeline import (PredictFileOptions, check_embeddings,
                                    predict_file)
    from ..predict.prediction import PredictionError
    from ..predict.predictor import Predictor
    from ..predict.shards import Shard
    from ..predict.writers import check_output_path

    try:
        if args.shard is not None:
            Shard.parse(args.shard)
        if args.top is not None and args.by is None:
            raise PredictionError('--top needs --by COLUMN, the prediction '
                                  'column to rank by (e.g. --by prediction)')
        if args.by is not None and args.top is None and args.report is None:
            raise PredictionError(f'--by {args.by} ranks the molecules of '
                                  f'--top; add --top K')
        if args.output is not None:
            check_output_path(args.output)
        if args.report is not None:
            _check_report_path(args.report)
        if args.embeddings is not None and args.smiles is not None:
            check_embeddings_path(args.embeddings)
        elif args.embeddings is not None:
            check_embeddings(args.embeddings, args.input, args.output or '-',
                             resume=args.resume, shard=args.shard,
                             top=args.top)
        if args.checkpoint is not None:
            predictor = Predictor.from_checkpoints(args.checkpoint,
                                                   device=args.device)
        else:
            predictor = Predictor.from_bundled(args.model, device=args.device)
        if args.smiles is not None:
            return _predict_smiles(predictor, args)
        output = args.output or '-'
        summary = predict_file(predictor, args.input, output,
                               PredictFileOptions(
            smiles_column=args.smiles_column, input_format=args.input_format,
            batch_size=args.batch_size, chunk_size=args.chunk_size,
            num_workers=args.num_workers, resume=args.resume,
            shard=args.shard, top=args.top,
            by=args.by if args.top is not None else None,
            ascending=args.ascending, progress=not args.quiet,
            embeddings=args.embeddings))
    except (CheckpointError, PredictionError) as error:
        return fail(str(error))
    except KeyboardInterrupt:
        where = (f'the rows written so far are in {args.output}; continue '
                 f'with the same command and --resume' if args.output
                 else 'nothing more was written')
        return fail(f'interrupted; {where}', _INTERRUPTED)
    print(_summary_line(summary, predictor, args.by), file=sys.stderr)
    if args.report is not None:
        from ..predict.readers import MoleculeReader
        from ..report.prediction_report import molecules_from_csv
        reader = MoleculeReader(args.input, args.input_format,
                                args.smiles_column)
        return _write_report(args, predictor, molecules_from_csv(
            output, reader.columns[reader.smiles_index],
            predictor.num_outputs, predictor.with_std,
            top_file=args.top is not None, target_column=args.report_target,
            feature_columns=predictor.feature_columns))
    return 0


def _check_report_path(path: str) -> None:
    from pathlib import Path

    from ..predict.prediction import PredictionError
    report = Path(path)
    if report.suffix.lower() not in ('.html', '.htm'):
        raise PredictionError(f'--report {path}: the report is an HTML page; '
                              f'name the file .html')
    if report.is_dir():
        raise PredictionError(f'--report {path} is a directory; name a file')
    try:
        report.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise PredictionError(f'--report {path}: cannot create its folder '
                              f'({error.strerror})') from None


def _write_report(args, predictor, molecules) -> int:
    r"""Writes --report from :obj:`molecules`; returns the exit status."""
    import time

    from ..predict.prediction import PredictionError
    from ..report.prediction_report import (ReportOptions,
                                            write_prediction_report)
    columns = predictor.prediction_columns
    if args.by is not None and args.by not in columns:
        return fail(f"--by {args.by!r} is not a prediction column of this "
                    f"model; choose one of: {', '.join(columns)}")
    source = (f"Model: {args.model or ', '.join(args.checkpoint)}; "
              f"molecules: {args.input or 'the command line'}.")
    start = time.perf_counter()
    try:
        count = write_prediction_report(
            args.report, molecules, columns, predictor,
            ReportOptions(top=args.report_top, sample=args.report_sample,
                          by=columns.index(args.by) if args.by else 0,
                          ascending=args.ascending, steps=args.report_steps,
                          target_name=args.report_target,
                          title=f'Predictions: {columns[0]}', source=source),
            task=predictor.task)
    except PredictionError as error:
        return fail(str(error))
    from pathlib import Path
    size = Path(args.report).stat().st_size
    print(f'Wrote the report of {count:,} molecules to {args.report} '
          f'({size / 1e6:.1f} MB) in {time.perf_counter() - start:.1f} s',
          file=sys.stderr)
    return 0


def _predict_smiles(predictor, args) -> int:
    from ..predict.embeddings import EmbeddingWriter
    from ..predict.prediction import columns_beside, value_fields
    from ..predict.writers import CsvWriter

    sizes = dict(batch_size=args.batch_size, num_workers=args.num_workers,
                 chunk_size=args.chunk_size)
    predictions = predictor.predict(args.smiles, **sizes)
    also = ''
    if args.embeddings is not None:
        embeddings = EmbeddingWriter(args.embeddings,
                                     predictor.embedding_columns)
        try:
            embeddings.write([p.smiles for p in predictions],
                             predictor.embed(args.smiles, **sizes))
            embeddings.finish()
        finally:
            embeddings.close()
        also = f'; embeddings in {args.embeddings}'
    failed = sum(not p.ok for p in predictions)
    rows = [[p.smiles] + value_fields(p, predictor.num_outputs,
                                      predictor.with_std) + [p.error or '']
            for p in predictions]
    header = ['smiles'] + columns_beside(
        ['smiles'], predictor.prediction_columns, predictor.with_std)
    if args.output is not None:
        writer = CsvWriter(args.output, header)
        writer.write_rows(rows)
        writer.close()
        print(f'Wrote {len(rows)} rows to {args.output} '
              f'({len(rows) - failed} predicted, {failed} with an error'
              f'{also}); {predictor.columns_description}', file=sys.stderr)
    else:
        print(_format_table(header, rows))
        print(f'# {predictor.columns_description}; {failed} of '
              f'{len(rows)} molecules with an error{also}', file=sys.stderr)
    if args.report is not None:
        from ..report.prediction_report import ReportMolecule
        return _write_report(args, predictor, (ReportMolecule(
            k, p.smiles, p.outputs(predictor.num_outputs),
            p.outputs(predictor.num_outputs, True)[1::2]
            if predictor.with_std else [], p.error)
            for k, p in enumerate(predictions, 1)))
    return 0


def _format_table(header: list[str], rows: list[list[str]]) -> str:
    cells = [header] + [[_short_number(cell) for cell in row] for row in rows]
    widths = [max(len(line[k]) for line in cells) for k in range(len(header))]
    return '\n'.join('  '.join(cell.ljust(w) for cell, w in zip(line, widths))
                     .rstrip() for line in cells)


def _short_number(cell: str) -> str:
    try:
        return f'{float(cell):.6g}' if cell else cell
    except ValueError:
        return cell


def _summary_line(summary, predictor, by: Optional[str]) -> str:
    if summary.already_complete:
        return (f'{summary.output} is already complete ({summary.rows:,} '
                f'rows); nothing to do')
    rate = (summary.predicted + summary.failed) / max(summary.seconds, 1e-9)
    where = ('standard output' if summary.output == '-' else summary.output)
    if summary.top is not None:
        what = (f'Wrote the top {min(summary.top, summary.rows):,} of '
                f'{summary.rows:,} molecules by {by} to {where}')
    else:
        what = f'Wrote {summary.rows:,} rows to {where}'
    kept = (f'; kept {summary.kept:,} rows of the interrupted run'
            if summary.kept else '')
    if summary.renamed:
        kept += (f"; the input's own {', '.join(summary.renamed)} kept, "
                 f"written as {', '.join(summary.renamed.values())}")
    if summary.embeddings is not None:
        kept += f'; embeddings in {summary.embeddings}'
    return (f'{what} ({summary.predicted:,} predicted, {summary.failed:,} '
            f'with an error{kept}) in {summary.seconds:.1f} s ({rate:,.0f} '
            f'molecules/s); {predictor.columns_description}')
