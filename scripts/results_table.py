#!/usr/bin/env python
"""Regenerate the results table (markdown) and the validation-curve plot from
training runs: one row per (dataset, norm), mean ± std over seeds of the test
metric at the best validation epoch, beside the SepNorm paper's numbers."""
import argparse
import sys
from pathlib import Path

from graphormer_sepnorm.analysis.results import (load_runs, markdown_table,
                                                 plot_validation_curves,
                                                 summarize)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--runs', default='benchmarks/results/runs',
                        help='folder holding run directories (each with '
                        'results.json and metrics.csv); default: %(default)s')
    parser.add_argument('--output', default='benchmarks/results/RESULTS.md',
                        help='markdown file to write; default: %(default)s')
    parser.add_argument('--plot', default='benchmarks/results/val_curves.png',
                        help='validation-curve plot; default: %(default)s')
    args = parser.parse_args(argv)
    try:
        runs = load_runs(args.runs)
    except FileNotFoundError as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    table = markdown_table(summarize(runs))
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(table)
    plot_validation_curves(runs, args.plot)
    print(table)
    print(f'wrote {args.output} and {args.plot}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
