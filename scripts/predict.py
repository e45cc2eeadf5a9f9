#!/usr/bin/env python
r"""Predict molecular properties from SMILES with a trained Graphormer-SepNorm
checkpoint or a bundled model.

Examples:

    python scripts/predict.py --checkpoint runs/zinc/model.safetensors \
        --smiles "CCO" "c1ccccc1O"
    python scripts/predict.py --model zinc --input molecules.csv \
        --smiles-column smiles --output predictions.csv

Per-molecule problems (invalid SMILES, atoms the model cannot encode, too many
atoms) become an error message in that molecule's row and the command exits
with status 0; problems with the call itself (missing or incompatible
checkpoint, unreadable CSV, missing column) print one line to stderr and exit
with status 2.
"""
import argparse
import sys
from pathlib import Path

# Runs from a checkout without installation too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphormer_sepnorm.bundled import BUNDLED_MODELS  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    models = ', '.join(f'{name} ({entry.description})'
                       for name, entry in BUNDLED_MODELS.items())
    parser = argparse.ArgumentParser(
        description='Predict molecular properties from SMILES with a '
        'Graphormer-SepNorm model. Regression models give the property in '
        'the units of their training targets; binary models give the '
        'probability of the positive class.',
        epilog='Per-molecule errors go to the "error" column (exit status '
        '0); a missing/incompatible checkpoint or unreadable input exits '
        'with status 2 and a one-line message.')
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument('--checkpoint', metavar='PATH',
                        help='model.safetensors written by scripts/train.py, '
                        'or its run directory')
    source.add_argument('--model', metavar='NAME',
                        choices=sorted(BUNDLED_MODELS),
                        help=f'a bundled model: {models}')
    inputs = parser.add_mutually_exclusive_group(required=True)
    inputs.add_argument('--smiles', nargs='+', metavar='SMILES',
                        help='one or more SMILES strings')
    inputs.add_argument('--input', metavar='CSV',
                        help='CSV file (.csv or .csv.gz) with a header row')
    parser.add_argument('--smiles-column', default='smiles', metavar='NAME',
                        help='column of --input holding the SMILES '
                        '(default: smiles)')
    parser.add_argument('--output', metavar='CSV',
                        help='write the predictions to this CSV (input '
                        'columns + one column per target, named as in the '
                        'training CSV, or "prediction" + error, one row per '
                        'input molecule in input order) instead of printing '
                        'a table')
    parser.add_argument('--batch-size', type=int, default=128, metavar='N',
                        help='molecules per forward pass (default: 128)')
    parser.add_argument('--device', default='cpu',
                        help='torch device, e.g. cpu or cuda (default: cpu)')
    parser.add_argument('--num-workers', type=int, default=None, metavar='N',
                        help='worker processes on CPU (default: one per core '
                        'for large inputs; 0: predict in this process)')
    return parser


def format_table(rows: list[dict], columns: list[str]) -> str:
    cells = [[str(c) for c in columns]]
    for row in rows:
        cells.append(['' if row.get(c) is None else
                      (f'{row[c]:.6g}' if isinstance(row[c], float) else
                       str(row[c])) for c in columns])
    widths = [max(len(line[k]) for line in cells) for k in range(len(columns))]
    lines = []
    for line in cells:
        lines.append('  '.join(cell.ljust(w) for cell, w in zip(line, widths))
                     .rstrip())
    return '\n'.join(lines)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.batch_size < 1:
        return fail('--batch-size must be a positive integer')
    if args.num_workers is not None and args.num_workers < 0:
        return fail('--num-workers must be 0 or more')

    from graphormer_sepnorm.checkpoint import CheckpointError
    from graphormer_sepnorm.predict import (PredictionError, Predictor,
                                            read_smiles_csv,
                                            write_predictions_csv)
    try:
        if args.checkpoint is not None:
            predictor = Predictor.from_checkpoint(args.checkpoint,
                                                  device=args.device)
        else:
            predictor = Predictor.from_bundled(args.model, device=args.device)
        if args.input is not None:
            fieldnames, rows = read_smiles_csv(args.input, args.smiles_column)
            smiles = [row[args.smiles_column] for row in rows]
        else:
            fieldnames, rows = ['smiles'], None
            smiles = args.smiles
        predictions = predictor.predict(smiles, batch_size=args.batch_size,
                                        num_workers=args.num_workers)
        if args.output is not None:
            write_predictions_csv(args.output, predictions, rows, fieldnames,
                                  predictor.output_columns)
    except (CheckpointError, PredictionError) as error:
        return fail(str(error))

    failed = sum(not p.ok for p in predictions)
    columns = predictor.output_columns
    meaning = f"{', '.join(columns)} = {predictor.value_description}"
    if args.output is not None:
        print(f'Wrote {len(predictions)} rows to {args.output} '
              f'({len(predictions) - failed} predicted, {failed} with an '
              f'error); {meaning}', file=sys.stderr)
    else:
        print(format_table([p.as_dict(columns) for p in predictions],
                           ['smiles', *columns, 'error']))
        print(f'# {meaning}; {failed} of {len(predictions)} molecules with '
              f'an error', file=sys.stderr)
    return 0


def fail(message: str) -> int:
    print(f'error: {message}', file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main())
