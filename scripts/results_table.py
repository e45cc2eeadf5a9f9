#!/usr/bin/env python
"""Regenerate the results (RESULTS.md, figures and README blocks) from the
committed run directories: per dataset and model the test metric at the best
validation epoch (mean ± std over seeds), SepNorm against ShareNorm and
against chemprop (95% CI, Welch's t-test), seed ensembles (uncertainty
against error), time to accuracy in CPU minutes, validation-curve,
time-to-accuracy and test-prediction plots (parity, ROC), and the table of
tuning trials; and the graph-token geometry of
scripts/graph_token_analysis.py (SepNorm against ShareNorm) that lies beside
the runs' folder, or the one --geometry names. With --readme,
also the generated blocks of the READMEs, wherever each is: the full
results (results-table, in benchmarks/README.md), what the runs say in
sentences (results-findings, in benchmarks/README.md), the short table of
each dataset's recipe rows, best-validation Graphormer row and other
families' rows, with the goals (results-summary, in README.md), best from SMILES (from-smiles, in benchmarks/README.md: per
set every method against chemprop's default, with the final runs and the
reach runs of --reach; from-smiles-summary, its line in README.md), which
backbone the package should bundle (backbone-choice, in
benchmarks/README.md: each other backbone against the bundled one in
like-for-like pairs of best from SMILES, on validation), which
family each bundled model ships (bundle-choice, in scripts/README.md: the
best mean validation over seeds) and the table of bundled models
(bundled-models, in scripts/README.md, from the model cards of the
installed member files)."""
import argparse
import json
import os
import sys
from pathlib import Path

# The research tooling (benchmarks/) is imported from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.analysis.backbone_choice import backbone_choice_markdown
from benchmarks.analysis.bundle_choice import bundle_choice_markdown
from benchmarks.analysis.findings import findings_markdown
from benchmarks.analysis.budget import BUDGET_ROOT, load_pairs
from benchmarks.analysis.from_smiles import (attach_measured,
                                             from_smiles_markdown,
                                             from_smiles_sets,
                                             from_smiles_summary)
from benchmarks.analysis.graph_token_summary import geometry_markdown
from benchmarks.analysis.result_plots import (plot_test_predictions,
                                              plot_time_to_accuracy,
                                              plot_validation_curves)
from benchmarks.analysis.readme_blocks import readme_markers, update_readme
from benchmarks.analysis.results import results_markdown, results_summary
from benchmarks.analysis.runs import group_runs, load_runs
from benchmarks.analysis.tuning import trials_table
from benchmarks.bundling.summary import bundled_models_markdown


#: The READMEs that hold this script's blocks (--readme without files).
READMES = ('README.md', 'benchmarks/README.md', 'scripts/README.md')

#: Where the graph-token geometry lies beside the runs' folder, read unless
#: --geometry names another: a regeneration without it would drop its
#: section from the committed results.
GEOMETRY = Path('graph_token') / 'graph_token_geometry.json'


def relative_link(path: Path, folder: Path) -> str:
    return Path(os.path.relpath(path, folder)).as_posix()


def full_results(groups, figures: list, geometry, folder: Path) -> str:
    r"""The full results, with links relative to :obj:`folder` (where the
    markdown file holding them is)."""
    text = results_markdown(groups, [relative_link(f, folder)
                                     for f in figures])
    if geometry is not None:
        plot, summary = geometry
        text += '\n' + geometry_markdown(summary, relative_link(plot, folder))
    return text


def update_readmes(readmes: list, groups, figures: list, geometry,
                   best: list) -> None:
    r"""Replaces this script's blocks in every README of :obj:`readmes`
    that holds them; the full results must be in one of them. :obj:`best`:
    the sets of best from SMILES (:func:`from_smiles_sets`)."""
    found = False
    for readme in readmes:
        folder = Path(readme).parent
        found |= update_readme(
            readme, full_results(groups, figures, geometry, folder),
            missing_ok=True)
        update_readme(readme, findings_markdown(groups), 'results-findings',
                      missing_ok=True)
        update_readme(readme, results_summary(groups), 'results-summary',
                      missing_ok=True)
        update_readme(readme, from_smiles_markdown(best), 'from-smiles',
                      missing_ok=True)
        update_readme(readme, from_smiles_summary(best),
                      'from-smiles-summary', missing_ok=True)
        update_readme(readme, backbone_choice_markdown(best),
                      'backbone-choice', missing_ok=True)
        update_readme(readme, bundle_choice_markdown(groups),
                      'bundle-choice', missing_ok=True)
        update_readme(readme, bundled_models_markdown(), 'bundled-models',
                      missing_ok=True)
    if not found:
        begin, end = readme_markers('results-table')
        raise ValueError(f"none of {', '.join(map(str, readmes))} has the "
                         f"generated results-table block; add the lines "
                         f"{begin!r} and {end!r} where it belongs")


def best_from_smiles(final_runs: list, reach: str,
                     budget: str = BUDGET_ROOT) -> list:
    r"""The sets of best from SMILES from :obj:`final_runs` (as
    :func:`load_runs` read them) and the reach runs below :obj:`reach`
    (none if that folder is missing), with the side-by-side budget pairs
    below :obj:`budget` (``benchmarks/same_budget.py``; none if missing)."""
    everything = list(final_runs)
    if Path(reach).is_dir():
        everything += load_runs(reach)
    sets = from_smiles_sets(everything)
    attach_measured(sets, load_pairs(budget))
    return sets


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
    parser.add_argument('--readme', nargs='*', default=None,
                        metavar='README',
                        help='also replace the generated blocks in these '
                        'READMEs, wherever each is (without files: '
                        f'{" ".join(READMES)}): the full results '
                        '(results-table, required in one of them), what '
                        'the runs say in sentences (results-findings), the '
                        'results table with the backbone and goal lines '
                        '(results-summary), best from SMILES (from-smiles, '
                        'from-smiles-summary), which backbone to bundle '
                        '(backbone-choice), the bundled models\' '
                        'families (bundle-choice) and the '
                        'bundled models (bundled-models, read from the '
                        'installed model cards); figure links are relative '
                        'to each README')
    parser.add_argument('--reach', default='benchmarks/results/reach',
                        help='folder of the backbone-reach run directories, '
                        'read with --runs for best from SMILES (--readme; '
                        'none when the folder is missing); default: '
                        '%(default)s')
    parser.add_argument('--tuning', default=None,
                        help='folder of tuning trials (e.g. '
                        'benchmarks/results/tuning): writes TRIALS.md there')
    parser.add_argument('--geometry', default=None,
                        help='graph_token_geometry.json of '
                        'scripts/graph_token_analysis.py: adds its table, '
                        'verdicts and plot to the results; default: '
                        f'{GEOMETRY} beside the --runs folder where it '
                        'exists (else none)')
    args = parser.parse_args(argv)
    beside_runs = Path(args.runs).parent / GEOMETRY
    if args.geometry is None and beside_runs.is_file():
        args.geometry = str(beside_runs)
    try:
        trial_runs = load_runs(args.tuning) if args.tuning else None
        if trial_runs is not None and not Path(args.runs).exists():
            # Tuning comes before the final runs: its table alone is useful.
            (Path(args.tuning) / 'TRIALS.md').write_text(
                trials_table(trial_runs))
            print(f'wrote {Path(args.tuning) / "TRIALS.md"}; no final runs '
                  f'in {args.runs} yet, so no results table')
            return 0
        final_runs = load_runs(args.runs)
        groups = group_runs(final_runs)
        geometry = (json.loads(Path(args.geometry).read_text())
                    if args.geometry else None)
    except FileNotFoundError as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    output = Path(args.output)
    figures = (plot_validation_curves(groups, args.figures)
               + plot_time_to_accuracy(groups, args.figures)
               + plot_test_predictions(groups, args.figures))
    if geometry is not None:
        geometry = (Path(args.geometry).parent / geometry['plot'], geometry)
    text = full_results(groups, figures, geometry, output.parent)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text)
    readmes = None if args.readme is None else (args.readme or
                                                list(READMES))
    if readmes:
        try:
            update_readmes(readmes, groups, figures, geometry,
                           best_from_smiles(final_runs, args.reach))
        except (ValueError, FileNotFoundError) as error:
            print(f'error: {error}', file=sys.stderr)
            return 2
    if trial_runs is not None:
        (Path(args.tuning) / 'TRIALS.md').write_text(trials_table(trial_runs))
    print(text)
    print(f'wrote {output} and {len(figures)} figures in {args.figures}'
          + (f', updated {", ".join(readmes)}' if readmes else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())
