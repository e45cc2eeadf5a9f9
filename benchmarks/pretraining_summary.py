#!/usr/bin/env python
r"""The pretraining runs at a glance, from their committed artefacts
(``benchmarks/results/pretraining/<run>/``: ``results.json``,
``metrics.csv``): the budget spent (steps, molecules, CPU-hours, hardware)
and the last validation (masked-atom accuracy, descriptor R², and the
uniformity and anisotropy of the graph tokens of held-out corpus
molecules, the SepNorm paper's quantities), SepNorm against ShareNorm for
each pair of backbones of the same objectives and steps, the longest
pair's graph tokens over its schedule, and a plot of every backbone's
(``graph_token_over_steps.png``). The geometry that
``scripts/graph_token_analysis.py --smiles`` measured on molecules held
out of the corpus (``<results>/<folder>/graph_token_geometry.json``) is
added for the pairs it measured. Writes ``pretraining.md`` beside the
runs; ``--readme FILE`` also fills that file's ``pretraining`` block.

    python benchmarks/pretraining_summary.py \
        --results benchmarks/results/pretraining --readme README.md
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from pathlib import Path

# The research tooling (benchmarks/) is imported from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.analysis.readme_blocks import update_readme
from benchmarks.analysis.result_plots import save_figure

BLOCK = 'pretraining'
GENERATOR = 'benchmarks/pretraining_summary.py'


def read_runs(folder: Path) -> list[dict]:
    r"""One row per run folder holding a ``results.json`` and a
    ``metrics.csv``: its results and its last validation row."""
    rows = []
    for results_file in sorted(folder.glob('*/results.json')):
        results = json.loads(results_file.read_text())
        with open(results_file.parent / 'metrics.csv', newline='') as f:
            history = list(csv.DictReader(f))
        if not history:
            raise ValueError(f"{results_file.parent / 'metrics.csv'} has no "
                             f"validation row")
        history = [{k: float(v) for k, v in row.items()
                    if v not in ('', None)} for row in history]
        rows.append({'name': results_file.parent.name, 'results': results,
                     'history': history, 'last': history[-1]})
    return rows


def descriptor_objective(row: dict) -> bool:
    r"""Whether the run regressed the descriptors (runs that predate the
    recorded objectives did)."""
    objectives = row['results'].get('objectives', {})
    return objectives.get('descriptors', {}).get('weight', 1.0) > 0


def table(rows: list[dict]) -> str:
    r"""The runs as a markdown table, one row per run folder (its name);
    a run without the descriptor objective has no descriptor R²."""
    lines = ['| backbone | steps | molecules | CPU-hours | masked-atom '
             'element accuracy | all-feature accuracy | descriptor R² | '
             'graph-token uniformity | anisotropy |',
             '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |']
    for row in rows:
        r, last = row['results'], row['last']
        lines.append(
            f"| {row['name']} | {r['steps']:,} | {r['graphs_seen']:,} | "
            f"{r['cpu_time_s'] / 3600:.2f} | "
            f"{last['val_element_accuracy']:.3f} | "
            f"{last['val_atom_feature_accuracy']:.3f} | "
            + (f"{last['val_descriptor_r2']:.3f} | "
               if descriptor_objective(row) else '— | ') +
            f"{last['val_graph_token_uniformity']:.3f} | "
            f"{last['val_graph_token_anisotropy']:.3f} |")
    return '\n'.join(lines)


def _anisotropy_comparison(by_norm: dict[str, dict]) -> str:
    sep = by_norm['sep']['last']['val_graph_token_anisotropy']
    share = by_norm['share']['last']['val_graph_token_anisotropy']
    lower = 'SepNorm' if sep < share else 'ShareNorm'
    return (f"SepNorm {sep:.3f}, ShareNorm {share:.3f}; {lower}'s graph "
            f"tokens are the more spread out")


def pairs(rows: list[dict]) -> dict[tuple[bool, int], dict[str, dict]]:
    r"""The runs by what makes two backbones comparable, the objectives
    (with or without the descriptors) and the schedule's length in steps,
    each group's runs by norm; groups in the order of their first run. Two
    runs of one norm in a group are an error: the comparison would keep
    one silently."""
    groups: dict[tuple[bool, int], dict[str, dict]] = {}
    for row in rows:
        group = groups.setdefault(
            (descriptor_objective(row), row['results']['steps']), {})
        norm = row['results']['norm']
        if norm in group:
            raise ValueError(
                f"{group[norm]['name']} and {row['name']} are both {norm} "
                f"backbones of the same objectives and steps; keep one of "
                f"them under the results folder")
        group[norm] = row
    return groups


def complete(groups: dict[tuple[bool, int], dict[str, dict]]
             ) -> list[tuple[tuple[bool, int], dict[str, dict]]]:
    r"""The groups of :func:`pairs` that hold both norms."""
    return [(key, by_norm) for key, by_norm in groups.items()
            if {'sep', 'share'} <= by_norm.keys()]


def group_label(key: tuple[bool, int]) -> str:
    descriptors, steps = key
    return (f"{'both objectives' if descriptors else 'masked atoms only'}, "
            f"{steps:,} steps")


def verdict(groups: dict[tuple[bool, int], dict[str, dict]]) -> str:
    r"""One sentence on the paper's claim: did ShareNorm's graph token
    collapse (anisotropy near 1) and SepNorm's not? Compares, at the end of
    each schedule, the SepNorm and ShareNorm backbones of the same
    objectives (both, or masked atoms alone: the ablation of the
    descriptor objective) and length; a backbone without its twin is
    named."""
    compared = [f"{group_label(key)}: {_anisotropy_comparison(by_norm)}"
                for key, by_norm in complete(groups)]
    alone = [row['name'] for by_norm in groups.values()
             if not {'sep', 'share'} <= by_norm.keys()
             for row in by_norm.values()]
    if not compared:
        return 'Both backbones are needed for the comparison.'
    text = (f"Graph-token anisotropy (1: all graph tokens aligned) at the end "
            f"of each schedule, {'; '.join(compared)}. One backbone each: "
            f"no spread over seeds.")
    if alone:
        text += (f" {', '.join(alone)}: no backbone of the other norm with "
                 f"the same objectives and steps.")
    return text + trajectory(groups)


def trajectory(groups: dict[tuple[bool, int], dict[str, dict]]) -> str:
    r"""One sentence on the longest pair's graph tokens over its schedule,
    validation by validation (the question the paper leaves: does SepNorm's
    graph token stay uniform with longer pretraining?); empty when no pair
    validated more than twice."""
    paired = [(key, by_norm) for key, by_norm in complete(groups)
              if min(len(by_norm[n]['history']) for n in ('sep', 'share'))
              > 2]
    if not paired:
        return ''
    key, by_norm = max(paired, key=lambda item: item[0][1])
    parts = []
    for norm, label in (('sep', 'SepNorm'), ('share', 'ShareNorm')):
        history = by_norm[norm]['history']
        values = [row['val_graph_token_anisotropy'] for row in history]
        parts.append(
            f"{label} {values[0]:.3f} at step {int(history[0]['step']):,}, "
            f"{values[-1]:.3f} at {int(history[-1]['step']):,} (between "
            f"{min(values):.3f} and {max(values):.3f})")
    return (f" Over {group_label(key)} ({len(by_norm['sep']['history'])} "
            f"validations), anisotropy: {'; '.join(parts)}.")


#: The held-out geometry of the backbones: every such report below the
#: results folder.
GEOMETRY_REPORTS = '*/graph_token_geometry.json'


def held_out_geometry(folder: Path,
                      groups: dict[tuple[bool, int], dict[str, dict]]) -> str:
    r"""One sentence per pair of backbones (see :func:`pairs`) on their
    graph-token geometry that ``scripts/graph_token_analysis.py --smiles``
    measured on molecules held out of the corpus, read from the reports
    below :obj:`folder` whose runs are the results' folders (empty if none
    has been run)."""
    measured: dict[str, tuple[dict, dict]] = {}
    for path in sorted(folder.glob(GEOMETRY_REPORTS)):
        report = json.loads(path.read_text())
        for run in report['runs']:
            measured[Path(run['run']).name] = (run, report)
    sentences = []
    for key, by_norm in complete(groups):
        names = by_norm['sep']['name'], by_norm['share']['name']
        if not all(name in measured for name in names):
            continue
        (sep, report), (share, _) = (measured[name] for name in names)
        sentences.append(
            f"\n\nThe backbones of {group_label(key)}, through "
            f"`scripts/graph_token_analysis.py --smiles` on the "
            f"{sep['num_graphs']:,} molecules of `{report['molecules']}` "
            f"(held out of the corpus): anisotropy SepNorm "
            f"{sep['anisotropy']:.3f}, ShareNorm {share['anisotropy']:.3f}; "
            f"uniformity {sep['uniformity']:.3f} vs "
            f"{share['uniformity']:.3f} (lower: more uniform).")
    return ''.join(sentences)


#: The plot of every backbone's graph-token geometry over its schedule,
#: beside ``pretraining.md``.
PLOT = 'graph_token_over_steps.png'


def plot_geometry(rows: list[dict], path: Path) -> None:
    r"""Graph-token anisotropy and uniformity of the held-out corpus
    molecules at every validation, one line per backbone (solid SepNorm,
    dashed ShareNorm)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for index, row in enumerate(rows):
        steps = [r['step'] for r in row['history']]
        style = '-' if row['results']['norm'] == 'sep' else '--'
        for ax, column in zip(axes, ('val_graph_token_anisotropy',
                                     'val_graph_token_uniformity')):
            ax.plot(steps, [r[column] for r in row['history']],
                    linestyle=style, marker='.', color=f'C{index}',
                    label=row['name'])
    for ax, label in zip(axes, ('anisotropy (1: all aligned)',
                                'uniformity (lower: more uniform)')):
        ax.set_xscale('log')
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel('step')
        ax.set_ylabel(f'graph-token {label}')
    axes[0].legend(fontsize=7)
    fig.suptitle('Graph tokens of held-out corpus molecules during '
                 'pretraining', fontsize=9)
    fig.tight_layout()
    save_figure(fig, path)


def summary(rows: list[dict], folder: Path) -> tuple[str, str]:
    r"""The block's text before and after the plot's link (see
    :func:`with_plot`): the table and sentences, then the hardware.

    Raises:
        ValueError: Two backbones of one norm in a pair (:func:`pairs`).
    """
    groups = pairs(rows)
    hardware = sorted({row['results']['hardware']['device_name']
                       for row in rows})
    return (table(rows) + '\n\n' + verdict(groups)
            + held_out_geometry(folder, groups),
            'CPU figures (' + ', '.join(hardware) + ', one thread per run, '
            'two runs side by side); validation on held-out corpus '
            'molecules.')


def with_plot(parts: tuple[str, str], plot_link: str) -> str:
    r"""The block's text with the plot linked as :obj:`plot_link` (relative
    to the file that holds the block)."""
    findings, hardware = parts
    return (f'{findings}\n\n![graph tokens during pretraining]({plot_link})'
            f'\n\n{hardware}')


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--results', type=Path,
                        default=Path('benchmarks/results/pretraining'),
                        help='folder of the runs (default: %(default)s)')
    parser.add_argument('--readme', type=Path, default=None,
                        help="also fill this file's pretraining block")
    args = parser.parse_args(argv)
    try:
        rows = read_runs(args.results)
    except (OSError, ValueError, KeyError) as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    if not rows:
        print(f'error: no run with results.json under {args.results}; '
              f'copy finished pretraining runs there first', file=sys.stderr)
        return 2
    try:
        parts = summary(rows, args.results)
    except ValueError as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    plot_geometry(rows, args.results / PLOT)
    text = with_plot(parts, PLOT)
    (args.results / 'pretraining.md').write_text(
        '# Pretraining runs\n\nGenerated by `' + GENERATOR + '`.\n\n' + text
        + '\n')
    print(text)
    if args.readme is not None:
        link = Path(os.path.relpath(args.results / PLOT,
                                    args.readme.parent)).as_posix()
        update_readme(args.readme, with_plot(parts, link) + '\n',
                      BLOCK, generator=GENERATOR)
    return 0


if __name__ == '__main__':
    sys.exit(main())
