#!/usr/bin/env python
r"""Side-by-side benchmark of graphormer-sepnorm and the reference Graphormer
(Hugging Face ``transformers``), in the same process on the same real graphs.

(a) Preprocessing per graph: our ``AddShortestPaths`` against the reference's
    ``preprocess_item`` (Cython Floyd-Warshall and path materialisation), on
    real ZINC graphs and MolHIV molecules. Ours is also timed with the
    multi-hop path-edge tensor materialised (``[n, n, hops, features]``, as
    the reference stores it; our model builds it on the fly instead).
(b) Training step (forward, loss, backward, gradient clipping and an AdamW
    step) at each recipe's batch size (``--zinc-batch-sizes``,
    ``--molhiv-batch-sizes``; by default the configs'), train mode with
    the same dropouts and the same maths: the reference, our converted model
    (ShareNorm, ``convert_graphormer``) and its SepNorm version
    (``to_sepnorm``). Shapes: ZINC slim (12 layers, hidden 80, FFN 80, 8
    heads, multi-hop 20) on ZINC graphs, and the same slim shape with OGB
    features and multi-hop 5 (the reference config's default) on MolHIV. On
    CUDA (when available) also bf16 autocast and peak memory per step.
(c) Writes the table to ``benchmarks/results/reference_comparison.md``,
    rewritten after every row (a run stopped by a time limit keeps the rows
    it finished), and with ``--json`` the rows as JSON.

``--devices cuda`` measures the CUDA rows alone: (a) and the collation rows
run on the CPU, so the GPU check leaves them to ``--devices cpu`` runs.

Batching: the reference's inputs are built with ``preprocess_item`` and
``GraphormerDataCollator(spatial_pos_max=20)`` (our models mask the same
pairs, ``max_attention_distance=18``); each item's ``input_edges`` is cut to
``multi_hop_max_dist`` hops before collation, as Microsoft's original
collator does (the Hugging Face one pads every graph to the longest path of
the batch, 510 hops for a salt, which needs gigabytes).
"""
import argparse
import json
import sys
import warnings
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.reference_comparison.report import (  # noqa: E402
    hardware, table, write_report)
from benchmarks.reference_comparison.rows import benchmark  # noqa: E402

DEFAULT_SHARED = REPO.parent / 'shared' / 'data'
DEFAULT_OUTPUT = REPO / 'benchmarks' / 'results' / 'reference_comparison.md'


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument('--shared', default=str(DEFAULT_SHARED),
                        help='shared data folder (ZINC/, ogbg_molhiv/)')
    parser.add_argument('--num-graphs', type=int, default=None,
                        help='graphs per dataset (default: --batches '
                        'batches of the largest batch size)')
    parser.add_argument('--zinc-batch-sizes', type=int, nargs='+',
                        help="ZINC batch sizes (default: the ZINC-subset "
                        "recipe's, configs/zinc_subset_sepnorm.yaml)")
    parser.add_argument('--molhiv-batch-sizes', type=int, nargs='+',
                        help="MolHIV batch sizes (default: the recipe's, "
                        "configs/molhiv_sepnorm.yaml)")
    parser.add_argument('--batches', type=int, default=2,
                        help='distinct batches timed per step measurement')
    parser.add_argument('--repeats', type=int, default=3,
                        help='timed passes (medians reported) after warm-up')
    parser.add_argument('--threads', type=int,
                        help="torch CPU threads (default: torch's). On a "
                        "machine shared with other jobs, 1 avoids OpenMP "
                        "threads spinning on busy cores")
    parser.add_argument('--num-layers', type=int, default=12,
                        help='layers of every model (12: the slim recipes; '
                        'fewer for a quick rehearsal)')
    parser.add_argument('--devices', nargs='+', choices=['cpu', 'cuda'],
                        default=['cpu', 'cuda'],
                        help='where to measure (cuda only when available); '
                        'the preprocessing and collation rows come with cpu')
    parser.add_argument('--output', default=str(DEFAULT_OUTPUT),
                        help="markdown file for the results ('-' for none), "
                        "rewritten after every row")
    parser.add_argument('--json', default=None,
                        help='also write the rows to this JSON file')
    args = parser.parse_args(argv)
    args.command_line = ' '.join(sys.argv[1:] if argv is None else argv)
    warnings.filterwarnings('ignore')
    if args.threads:
        torch.set_num_threads(args.threads)
    rows: list[dict] = []

    def done() -> None:
        if args.output != '-':
            write_report(Path(args.output), table(rows), hardware(), args)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=2))

    benchmark(args, rows, done)
    print(hardware())
    print(table(rows))
    return 0


if __name__ == '__main__':
    sys.exit(main())
