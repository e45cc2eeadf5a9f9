#!/usr/bin/env python
r"""The backbone-reach table (``benchmarks/analysis/reach.py``) from the
committed runs of ``benchmarks/plans/final_reach_*.yaml`` and the linear
probe of ``benchmarks/descriptor_probe.py``, and the ZINC-subset ablation
of the backbone's descriptor targets
(``benchmarks/plans/final_zinc_subset_smiles_masked_atoms.yaml``, beside
the committed SepNorm rows from SMILES): ``REACH.md`` beside the runs,
and with ``--readme`` the generated blocks ``backbone-reach`` (the table and
verdicts, ``benchmarks/README.md``) and ``backbone-reach-summary`` (one
line, ``README.md``).

    python benchmarks/reach_table.py --readme
"""
import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.analysis.reach import (ablation_summary,  # noqa: E402
                                       ablation_table, ablation_verdict,
                                       reach_markdown, reach_sets,
                                       reach_summary)
from benchmarks.analysis.readme_blocks import update_readme  # noqa: E402
from benchmarks.analysis.runs import dataset_of, load_runs  # noqa: E402

GENERATOR = 'benchmarks/reach_table.py'
RESULTS = REPO / 'benchmarks' / 'results'
#: The ablation's rows: their label and the folder of their run
#: directories (SepNorm runs only); the masked-atoms-only runs sit among
#: the reach runs, under this benchmark.
ABLATION = {
    'trained from scratch': RESULTS / 'runs' / 'zinc_subset_smiles',
    'fine-tuned, backbone of both objectives':
        RESULTS / 'runs' / 'zinc_subset_smiles_pretrained',
    'fine-tuned, backbone of masked atoms only':
        RESULTS / 'reach' / 'zinc_subset_smiles_pretrained_masked_atoms',
}
ABLATION_BENCHMARK = 'zinc_subset'


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--runs', type=Path,
                        default=REPO / 'benchmarks' / 'results' / 'reach',
                        help='folder of the reach run directories (default: '
                        'benchmarks/results/reach)')
    parser.add_argument('--probe', type=Path,
                        default=REPO / 'benchmarks' / 'results' /
                        'descriptor_probe' / 'probe.json',
                        help="descriptor_probe.py's probe.json (default: "
                        "benchmarks/results/descriptor_probe/probe.json)")
    parser.add_argument('--readme', action='store_true',
                        help='also replace the backbone-reach block of '
                        'benchmarks/README.md and the backbone-reach-summary '
                        'line of README.md')
    return parser.parse_args(argv)


#: How the ablation ran, below its table.
ABLATION_PROTOCOL = (
    'ZINC-subset from SMILES (OGB features; ZINC-proxy: the real '
    'validation and test molecules, a stand-in training split): SepNorm fine-tuned at the from-scratch rows\' budget (36 '
    'epochs) from two CPU backbones that differ only in their objectives '
    '(`configs/pretrain/cpu_sepnorm.yaml` and '
    '`cpu_sepnorm_masked_atoms.yaml`: 6,000 steps of 64 molecules each), '
    'beside the same config trained from scratch. Mean ± std over seeds; '
    'test read at the best-validation checkpoint (the masked-atoms-only '
    'runs scored test once, at the end; the other two rows at every '
    'validation, as they ran). CPU figures, as above.\n')


def ablation_runs(folder: Path) -> list[dict]:
    r"""The SepNorm runs below :obj:`folder`, sorted by seed (none yet if
    the folder does not exist)."""
    if not folder.is_dir():
        return []
    return sorted((r for r in load_runs(folder) if r.get('norm') == 'sep'),
                  key=lambda r: r['seed'])


def report(runs: Path, probe: Path) -> tuple[str, str]:
    r"""The ``backbone-reach`` text (the reach table, its verdicts and the
    ablation) and the ``backbone-reach-summary`` lines, from the reach run
    directories below :obj:`runs` and the probe's :obj:`probe` file.

    Raises:
        FileNotFoundError: No runs, or no probe file.
        ValueError: A reach run scored by another metric than ROC-AUC.
    """
    sets = reach_sets([r for r in load_runs(runs)
                       if dataset_of(r) != ABLATION_BENCHMARK])
    text = reach_markdown(sets, json.loads(probe.read_text()))
    rows = {label: ablation_runs(folder) for label, folder in ABLATION.items()}
    text += ('\n' + ablation_table(rows) + '\n'
             + ablation_verdict(*rows.values()) + ABLATION_PROTOCOL)
    return text, reach_summary(sets) + ablation_summary(*rows.values())


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        text, summary = report(args.runs, args.probe)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(text + '\n' + summary, end='')
    (args.runs / 'REACH.md').write_text(
        '# Backbone reach\n\nGenerated by `python benchmarks/reach_table.py`'
        ' from the run directories beside this file.\n\n' + text)
    if args.readme:
        update_readme(REPO / 'benchmarks' / 'README.md', text,
                      block='backbone-reach', generator=GENERATOR)
        update_readme(REPO / 'README.md', summary,
                      block='backbone-reach-summary', generator=GENERATOR)
    return 0


if __name__ == '__main__':
    sys.exit(main())
