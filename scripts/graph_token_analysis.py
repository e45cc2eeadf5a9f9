#!/usr/bin/env python
"""Graph-token geometry of trained models (the SepNorm paper's claim): the
uniformity and anisotropy of the graph-token embeddings on a split of each
model's dataset, written to graph_token_geometry.json with a plot of the
pairwise cosine similarities (graph_token_geometry.png)."""
import argparse
import sys

from graphormer_sepnorm.analysis.graph_token_report import graph_token_report
from graphormer_sepnorm.checkpoint import CheckpointError


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--checkpoint', nargs='+', required=True,
                        help='model.safetensors files or run directories '
                        '(e.g. a SepNorm and a ShareNorm run)')
    parser.add_argument('--split', default='test',
                        choices=['train', 'val', 'test'])
    parser.add_argument('--output-dir', default='.',
                        help='where the JSON and PNG go (default: .)')
    parser.add_argument('--data.root', dest='root',
                        help='data root (default: the one used in training)')
    parser.add_argument('--data.raw_source', dest='raw_source',
                        help='folder to copy raw files from when the root '
                        'lacks them')
    parser.add_argument('--batch-size', type=int, default=256)
    parser.add_argument('--device', default='cpu')
    args = parser.parse_args(argv)
    overrides = {k: v for k, v in (('root', args.root),
                                   ('raw_source', args.raw_source)) if v}
    try:
        rows = graph_token_report(args.checkpoint, args.output_dir,
                                  args.split, overrides, args.batch_size,
                                  args.device)
    except (CheckpointError, FileNotFoundError, ValueError) as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    for row in rows:
        print(f"{row['label']}: uniformity {row['uniformity']:.4f}, "
              f"anisotropy {row['anisotropy']:.4f} ({row['num_graphs']} "
              f"{row['split']} graphs)")
    return 0


if __name__ == '__main__':
    sys.exit(main())
