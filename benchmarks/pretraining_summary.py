#!/usr/bin/env python
r"""The pretraining runs at a glance, from their committed artefacts
(``benchmarks/results/pretraining/<norm>/``: ``results.json``,
``metrics.csv``): the budget spent (steps, molecules, CPU-hours, hardware)
and the last validation (masked-atom accuracy, descriptor R², and the
uniformity and anisotropy of the graph tokens of held-out corpus
molecules, the SepNorm paper's quantities). If
``<results>/geometry/graph_token_geometry.json`` exists (written by
``scripts/graph_token_analysis.py --smiles`` on molecules held out of the
corpus), its geometry of the backbones is added. Writes ``pretraining.md``
beside the runs; ``--readme FILE`` also fills that file's ``pretraining``
block.

    python benchmarks/pretraining_summary.py \
        --results benchmarks/results/pretraining --readme README.md
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

# The research tooling (benchmarks/) is imported from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.analysis.readme_blocks import update_readme

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
        rows.append({'name': results_file.parent.name, 'results': results,
                     'last': {k: float(v) for k, v in history[-1].items()
                              if v not in ('', None)},
                     'first': {k: float(v) for k, v in history[0].items()
                               if v not in ('', None)}})
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
    sep = by_norm['sep']['val_graph_token_anisotropy']
    share = by_norm['share']['val_graph_token_anisotropy']
    lower = 'SepNorm' if sep < share else 'ShareNorm'
    return (f"SepNorm {sep:.3f}, ShareNorm {share:.3f}; {lower}'s graph "
            f"tokens are the more spread out")


def verdict(rows: list[dict]) -> str:
    r"""One sentence on the paper's claim: did ShareNorm's graph token
    collapse (anisotropy near 1) and SepNorm's not? Compares the backbones
    of both objectives; then the backbones of masked atoms alone (the
    ablation of the descriptor objective): the same comparison when both
    norms have one, else their names."""
    def norms(descriptors: bool) -> dict[str, dict]:
        return {row['results']['norm']: row['last'] for row in rows
                if descriptor_objective(row) == descriptors}
    by_norm, masked_only = norms(True), norms(False)
    if not {'sep', 'share'} <= by_norm.keys():
        return 'Both backbones are needed for the comparison.'
    if {'sep', 'share'} <= masked_only.keys():
        ablation = (f" Masked atoms only: "
                    f"{_anisotropy_comparison(masked_only)}.")
    else:
        names = [row['name'] for row in rows if not descriptor_objective(row)]
        ablation = (f" {', '.join(names)}: masked atoms only (the ablation "
                    f"of the descriptor objective)." if names else '')
    return (f"Graph-token anisotropy (1: all graph tokens aligned), both "
            f"objectives: "
            f"{_anisotropy_comparison(by_norm)}. One backbone each: no "
            f"spread over seeds." + ablation)


#: The held-out geometry of the backbones, below the results folder.
GEOMETRY_FILE = Path('geometry') / 'graph_token_geometry.json'


def held_out_geometry(folder: Path) -> str:
    r"""One sentence on the backbones' graph-token geometry that
    ``scripts/graph_token_analysis.py --smiles`` measured on molecules held
    out of the corpus (empty if it has not been run)."""
    path = folder / GEOMETRY_FILE
    if not path.is_file():
        return ''
    report = json.loads(path.read_text())
    by_norm = {row['norm']: row for row in report['runs']}
    if not {'sep', 'share'} <= by_norm.keys():
        return ''
    sep, share = by_norm['sep'], by_norm['share']
    return (f"\n\nThe backbones of both objectives through "
            f"`scripts/graph_token_analysis.py"
            f" --smiles` on the {sep['num_graphs']:,} molecules of "
            f"`{report['molecules']}` (held out of the corpus): anisotropy "
            f"SepNorm {sep['anisotropy']:.3f}, ShareNorm "
            f"{share['anisotropy']:.3f}; uniformity {sep['uniformity']:.3f} "
            f"vs {share['uniformity']:.3f} (lower: more uniform).")


def summary(rows: list[dict], folder: Path) -> str:
    hardware = sorted({row['results']['hardware']['device_name']
                       for row in rows})
    return (table(rows) + '\n\n' + verdict(rows) + held_out_geometry(folder)
            + '\n\nCPU figures ('
            + ', '.join(hardware) + ', one thread per run, two runs side '
            'by side); validation on held-out corpus molecules.')


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
    text = summary(rows, args.results)
    (args.results / 'pretraining.md').write_text(
        '# Pretraining runs\n\nGenerated by `' + GENERATOR + '`.\n\n' + text
        + '\n')
    print(text)
    if args.readme is not None:
        update_readme(args.readme, text + '\n', BLOCK, generator=GENERATOR)
    return 0


if __name__ == '__main__':
    sys.exit(main())
