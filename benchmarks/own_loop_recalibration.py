#!/usr/bin/env python
r"""SepNorm against ShareNorm in one's own plain-PyTorch training loop, with
and without :func:`~graphormer_sepnorm.nn.recalibrate_batch_norm`.

Each (norm, seed) trains the same model for ``--steps`` AdamW steps with an
L1 loss on ZINC-subset (``--raw-source``: the ZINC-proxy stand-in training
split, the real validation split), batched by
:class:`~graphormer_sepnorm.GraphormerDataLoader`, then scores the
validation MAE twice: with the BatchNorm running statistics training left
(SepNorm's graph token), and after re-estimating them on
``--recalibration-batches`` training batches. ShareNorm has no BatchNorm,
so its two scores are equal by construction. Writes a JSON and a markdown
table::

    python benchmarks/own_loop_recalibration.py --root /tmp/zinc \
        --raw-source ../shared/data/ZINC-proxy \
        --output benchmarks/results/own_loop_recalibration
"""
from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Sequence

import torch

from graphormer_sepnorm import (AddShortestPaths, GraphormerDataLoader,
                                GraphormerSepNorm)
from graphormer_sepnorm.data import prepare_raw
from graphormer_sepnorm.nn import recalibrate_batch_norm


def zinc_splits(root: Path, raw_source: Path):
    r"""The ZINC-subset training and validation splits under :obj:`root`
    (raw files copied from :obj:`raw_source`), shortest paths cached."""
    from torch_geometric.datasets import ZINC
    prepare_raw('zinc_subset', str(root), raw_source=str(raw_source))
    return [ZINC(str(root / 'ZINC'), subset=True, split=split,
                 pre_transform=AddShortestPaths(max_nodes=128))
            for split in ('train', 'val')]


@torch.no_grad()
def validation_mae(model: GraphormerSepNorm, loader) -> float:
    r"""Mean absolute error of :obj:`model` (evaluation mode) over the
    graphs of :obj:`loader`."""
    model.eval()
    errors = [(model(batch).view(-1) - batch.y).abs() for batch in loader]
    return float(torch.cat(errors).mean())


def run(train, val, norm: str, seed: int, steps: int, batch_size: int,
        lr: float, recalibration_batches: int, model_args: dict) -> dict:
    r"""Trains one model and scores it with and without recalibration."""
    torch.manual_seed(seed)
    model = GraphormerSepNorm(atom_vocab_sizes=[28], bond_vocab_sizes=[4],
                              out_channels=1, norm=norm, **model_args)
    layout = model.layout_options()
    train_loader = GraphormerDataLoader(
        train, batch_size, shuffle=True, layout=layout,
        generator=torch.Generator().manual_seed(seed))
    val_loader = GraphormerDataLoader(val, 256, layout=layout)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    start, step = time.perf_counter(), 0
    while step < steps:
        for batch in train_loader:
            model.train()
            loss = (model(batch).view(-1) - batch.y).abs().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step == steps:
                break
    train_seconds = time.perf_counter() - start
    model.warn_stale_statistics = False  # the running statistics, knowingly
    running = validation_mae(model, val_loader)
    recalibrate_batch_norm(model, train_loader, recalibration_batches)
    return {'norm': norm, 'seed': seed, 'steps': steps,
            'train_seconds': round(train_seconds, 1),
            'val_mae_running_statistics': running,
            'val_mae_recalibrated': validation_mae(model, val_loader)}


def markdown(rows: Sequence[dict], settings: dict) -> str:
    r"""The rows as a markdown table, with the settings above it."""
    lines = ['# SepNorm and ShareNorm in a plain-PyTorch loop',
             '', 'Written by `benchmarks/own_loop_recalibration.py` '
             f"({', '.join(f'{k}={v}' for k, v in settings.items())}).", '',
             '| norm | seed | steps | train s | val MAE, running statistics '
             '| val MAE, recalibrated |', '| --- | --- | --- | --- | --- | --- |']
    for r in rows:
        lines.append(f"| {r['norm']} | {r['seed']} | {r['steps']} | "
                     f"{r['train_seconds']} | "
                     f"{r['val_mae_running_statistics']:.3f} | "
                     f"{r['val_mae_recalibrated']:.3f} |")
    for norm in dict.fromkeys(r['norm'] for r in rows):
        mine = [r for r in rows if r['norm'] == norm]
        mean = {key: sum(r[key] for r in mine) / len(mine) for key in
                ('val_mae_running_statistics', 'val_mae_recalibrated')}
        lines.append(f"| {norm} | mean | | | "
                     f"{mean['val_mae_running_statistics']:.3f} | "
                     f"{mean['val_mae_recalibrated']:.3f} |")
    return '\n'.join(lines) + '\n'


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--root', type=Path, required=True,
                        help='Writable data folder (ZINC is processed '
                        'there).')
    parser.add_argument('--raw-source', type=Path,
                        default=Path('../shared/data/ZINC-proxy'),
                        help='ZINC-subset raw files (default: %(default)s).')
    parser.add_argument('--steps', type=int, default=300,
                        help='AdamW steps per run (default: %(default)s).')
    parser.add_argument('--seeds', type=int, nargs='+', default=[0, 1],
                        help='Seeds (default: 0 1).')
    parser.add_argument('--batch-size', type=int, default=32,
                        help='Graphs per batch (default: %(default)s).')
    parser.add_argument('--lr', type=float, default=5e-4,
                        help='AdamW learning rate (default: %(default)s).')
    parser.add_argument('--recalibration-batches', type=int, default=20,
                        help='Training batches recalibration averages '
                        '(default: %(default)s).')
    parser.add_argument('--layers', type=int, default=4,
                        help='Transformer blocks (default: %(default)s).')
    parser.add_argument('--hidden', type=int, default=64,
                        help='Hidden and feed-forward channels (default: '
                        '%(default)s).')
    parser.add_argument('--threads', type=int, default=1,
                        help='torch threads (default: %(default)s).')
    parser.add_argument('--output', type=Path, default=None,
                        help='Write OUTPUT.json and OUTPUT.md.')
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    train, val = zinc_splits(args.root, args.raw_source)
    model_args = dict(num_layers=args.layers, hidden_channels=args.hidden,
                      ffn_channels=args.hidden, num_heads=8)
    rows = [run(train, val, norm, seed, args.steps, args.batch_size,
                args.lr, args.recalibration_batches, model_args)
            for seed in args.seeds for norm in ('sep', 'share')]
    settings = dict(steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                    recalibration_batches=args.recalibration_batches,
                    layers=args.layers, hidden=args.hidden,
                    threads=args.threads, cpu=platform.processor() or
                    platform.machine(), torch=torch.__version__)
    table = markdown(rows, settings)
    print(table, end='')
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.with_suffix('.json').write_text(json.dumps(
            {'settings': settings, 'rows': rows}, indent=2) + '\n')
        args.output.with_suffix('.md').write_text(table)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
