#!/usr/bin/env python
"""Regenerate the results (README block, RESULTS.md and figures) from the
committed run directories: per dataset and model the test metric at the best
validation epoch (mean ± std over seeds), SepNorm against ShareNorm and
against chemprop (95% CI, Welch's t-test), seed ensembles (uncertainty
against error), time to accuracy in CPU minutes, validation-curve,
time-to-accuracy and test-prediction plots (parity, ROC), and the table of
tuning trials; with --geometry, the graph-token geometry of
scripts/graph_token_analysis.py (SepNorm against ShareNorm); with --readme,
also the table of bundled models (when the README has its block), from the
model cards of the installed member files."""
import argparse
import json
import os
import sys
from pathlib import Path

from graphormer_sepnorm.analysis.graph_token_summary import geometry_markdown
from graphormer_sepnorm.analysis.result_plots import (plot_test_predictions,
                                                      plot_time_to_accuracy,
                                                      plot_validation_curves)
from graphormer_sepnorm.analysis.results import (results_markdown,
                                                 update_readme)
from graphormer_sepnorm.analysis.runs import group_runs, load_runs
from graphormer_sepnorm.analysis.tuning import trials_table
from graphormer_sepnorm.bundled.summary import bundled_models_markdown


def relative_link(path: Path, folder: Path) -> str:
    return Path(os.path.relpath(path, folder)).as_posix()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--runs', default='benchmarks/results/runs',
                        help='folder holding the final run directories (each '
                        'with results.json and metrics.csv); default: '
                        '%(default)s')
    parser.add_argument('--output', default='benchmarks/results/RESULTS.md',
                        help='markdown file to write; default: %(default)s')
    parser.add_argument('--figures', default='benchmarks/results/figures',
                        help='folder for the plots; default: %(default)s')
    parser.add_argument('--readme', default=None,
                        help='also replace the generated blocks of this '
                        'README (e.g. README.md): the results and the bundled '
                        'models (read from the installed model cards)')
    parser.add_argument('--tuning', default=None,
                        help='folder of tuning trials (e.g. '
                        'benchmarks/results/tuning): writes TRIALS.md there')
    parser.add_argument('--geometry', default=None,
                        help='graph_token_geometry.json of '
                        'scripts/graph_token_analysis.py (e.g. '
                        'benchmarks/results/graph_token/'
                        'graph_token_geometry.json): adds its table, '
                        'verdicts and plot to the results')
    args = parser.parse_args(argv)
    try:
        trial_runs = load_runs(args.tuning) if args.tuning else None
        if trial_runs is not None and not Path(args.runs).exists():
            # Tuning comes before the final runs: its table alone is useful.
            (Path(args.tuning) / 'TRIALS.md').write_text(
                trials_table(trial_runs))
            print(f'wrote {Path(args.tuning) / "TRIALS.md"}; no final runs '
                  f'in {args.runs} yet, so no results table')
            return 0
        groups = group_runs(load_runs(args.runs))
        geometry = (json.loads(Path(args.geometry).read_text())
                    if args.geometry else None)
    except FileNotFoundError as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    output = Path(args.output)
    figures = (plot_validation_curves(groups, args.figures)
               + plot_time_to_accuracy(groups, args.figures)
               + plot_test_predictions(groups, args.figures))
    # Links relative to the README (repository root) and to RESULTS.md.
    block = results_markdown(groups, [f.as_posix() for f in figures])
    text = results_markdown(groups, [relative_link(f, output.parent)
                                     for f in figures])
    if geometry is not None:
        plot = Path(args.geometry).parent / geometry['plot']
        block += '\n' + geometry_markdown(geometry, plot.as_posix())
        text += '\n' + geometry_markdown(
            geometry, relative_link(plot, output.parent))
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text)
    if args.readme:
        try:
            update_readme(args.readme, block)
            update_readme(args.readme, bundled_models_markdown(),
                          'bundled-models', missing_ok=True)
        except ValueError as error:
            print(f'error: {error}', file=sys.stderr)
            return 2
    if trial_runs is not None:
        (Path(args.tuning) / 'TRIALS.md').write_text(trials_table(trial_runs))
    print(block)
    print(f'wrote {output} and {len(figures)} figures in {args.figures}'
          + (f', updated {args.readme}' if args.readme else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())
