#!/usr/bin/env python
r"""GraphormerSepNorm in one's own plain-PyTorch training loop on ZINC-subset:
batches laid out in DataLoader workers (GraphormerDataLoader), AdamW and an
L1 loss, the BatchNorm recalibration SepNorm needs before it is evaluated,
validation, save and load, and the compile call that makes one graph.

    python examples/own_training_loop.py --root data \
        --raw-source ../shared/data/ZINC-proxy --steps 300
"""
from __future__ import annotations

import argparse
from pathlib import Path

import torch

from graphormer_sepnorm import GraphormerDataLoader, GraphormerSepNorm
from graphormer_sepnorm.data import load_splits
from graphormer_sepnorm.nn import recalibrate_batch_norm


@torch.no_grad()
def validation_mae(model: torch.nn.Module, loader) -> float:
    r"""Mean absolute error of :obj:`model` over :obj:`loader`'s graphs."""
    errors = [(model(batch).view(-1) - batch.y).abs() for batch in loader]
    return float(torch.cat(errors).mean())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--root', type=Path, default=Path('data'),
                        help='Writable data folder (default: %(default)s).')
    parser.add_argument('--raw-source', type=Path, default=None,
                        help='ZINC raw files to copy (offline), e.g. '
                        '../shared/data/ZINC-proxy; default: PyG downloads.')
    parser.add_argument('--steps', type=int, default=300,
                        help='AdamW steps (default: %(default)s).')
    parser.add_argument('--batch-size', type=int, default=32,
                        help='Graphs per batch (default: %(default)s).')
    parser.add_argument('--workers', type=int, default=2,
                        help='DataLoader workers laying batches out '
                        '(default: %(default)s).')
    parser.add_argument('--layers', type=int, default=4,
                        help='Transformer blocks (default: %(default)s).')
    parser.add_argument('--hidden', type=int, default=64,
                        help='Hidden channels (default: %(default)s).')
    parser.add_argument('--limit', type=int, default=None,
                        help='Use only the first N graphs of each split.')
    parser.add_argument('--compile-backend', default='inductor',
                        help='torch.compile backend (default: %(default)s; '
                        '"eager" only traces, in seconds).')
    parser.add_argument('--output', type=Path, default=Path('model.pt'),
                        help='Where to save the model (default: '
                        '%(default)s).')
    args = parser.parse_args(argv)

    # ZINC-subset as PyG datasets, shortest paths cached per graph.
    splits = load_splits('zinc_subset', args.root,
                         raw_source=args.raw_source, limit_train=args.limit,
                         limit_val=args.limit)
    model = GraphormerSepNorm(atom_vocab_sizes=[28], bond_vocab_sizes=[4],
                              out_channels=1, num_layers=args.layers,
                              hidden_channels=args.hidden,
                              ffn_channels=args.hidden, num_heads=4)
    # The workers lay every batch out (on a GPU: model.layout_options(1)).
    train_loader = GraphormerDataLoader(
        splits.train, args.batch_size, shuffle=True, num_workers=args.workers,
        persistent_workers=args.workers > 0, layout=model.layout_options())
    val_loader = GraphormerDataLoader(splits.val, 256,
                                      layout=model.layout_options())
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)

    step = 0
    while step < args.steps:
        for batch in train_loader:  # a new order every epoch
            model.train()
            loss = (model(batch).view(-1) - batch.y).abs().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step == args.steps:
                break

    # SepNorm's graph-token BatchNorm: statistics that match the weights.
    recalibrate_batch_norm(model, train_loader, num_batches=20)
    model.eval()
    mae = validation_mae(model, val_loader)
    print(f'validation MAE after {step} steps: {mae:.4f}')

    torch.save({'config': model.config, 'weights': model.state_dict()},
               args.output)
    saved = torch.load(args.output, weights_only=True)
    loaded = GraphormerSepNorm(**saved['config'])
    loaded.load_state_dict(saved['weights'])
    loaded.eval()
    print(f'loaded from {args.output}: validation MAE '
          f'{validation_mae(loaded, val_loader):.4f}')

    # One graph for every batch: laid-out batches, dynamic shapes.
    compiled = torch.compile(loaded, fullgraph=True, dynamic=True,
                             backend=args.compile_backend)
    print(f'compiled: validation MAE '
          f'{validation_mae(compiled, val_loader):.4f}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
