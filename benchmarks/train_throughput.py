#!/usr/bin/env python
r"""Training throughput of GraphormerSepNorm: graphs per second and time per
epoch, for ZINC-subset and OGB MolHIV, with the recipe model and batch size
of each config (or overrides), on CPU and, when available, CUDA.

Each measured step is one optimizer update as in training (batch fetch from
the loader, forward, L1/BCE loss, backward, gradient clipping, AdamW) timed
end to end (CUDA synchronized); the first ``--warmup`` steps are dropped and
medians over ``--steps`` steps are printed. Time per epoch = median step
time x updates per epoch of the full training split.

Example (offline, shared data)::

    python benchmarks/train_throughput.py --data-root /tmp/data \
        --zinc-source ../shared/data/ZINC-proxy \
        --molhiv-source ../shared/data/ogbg_molhiv --steps 5
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--datasets', nargs='+',
                        default=['zinc_subset', 'molhiv'],
                        choices=['zinc_subset', 'zinc', 'molhiv'])
    parser.add_argument('--norm', default='sep', choices=['sep', 'share'])
    parser.add_argument('--devices', nargs='+', default=None,
                        help='cpu and/or cuda (default: cpu, plus cuda when '
                        'available).')
    parser.add_argument('--data-root', default=os.environ.get(
        'GRAPHORMER_DATA_ROOT', 'data'), help='Writable data root.')
    parser.add_argument('--zinc-source', default=None,
                        help='data.raw_source for ZINC (e.g. '
                        '../shared/data/ZINC-proxy).')
    parser.add_argument('--molhiv-source', default=None,
                        help='data.raw_source for MolHIV (e.g. '
                        '../shared/data/ogbg_molhiv).')
    parser.add_argument('--batch-size', type=int, default=None,
                        help='Override the config batch size.')
    parser.add_argument('--steps', type=int, default=5,
                        help='Measured steps per setting (default: 5).')
    parser.add_argument('--warmup', type=int, default=2,
                        help='Unmeasured first steps (default: 2).')
    parser.add_argument('--on-device', action='store_true',
                        help='Batch on the accelerator (data.on_device).')
    parser.add_argument('--threads', type=int, default=None,
                        help='torch.set_num_threads (default: torch).')
    parser.add_argument('--json', default=None,
                        help='Also write the results to this JSON file.')
    parser.add_argument('overrides', nargs='*', metavar='KEY=VALUE',
                        help='Config overrides (e.g. model.num_layers=6).')
    return parser.parse_args(argv)


def _loss_fn(task: str):
    import torch.nn.functional as F
    if task == 'regression':
        return lambda pred, y: F.l1_loss(pred, y.view(-1).float())
    return lambda pred, y: F.binary_cross_entropy_with_logits(
        pred, y.view(-1).float())


def measure(dataset: str, device: str, args) -> dict:
    from graphormer_sepnorm.data.batch_loader import GraphBatchLoader
    from graphormer_sepnorm.data.graph_store import DeviceGraphStore
    from graphormer_sepnorm.data.datasets import load_splits
    from graphormer_sepnorm.models import GraphormerSepNorm
    from graphormer_sepnorm.training.config import (load_config,
                                                    model_arguments)

    config_name = f"{dataset}_{args.norm}norm.yaml"
    source = args.molhiv_source if dataset == 'molhiv' else args.zinc_source
    overrides = [f'data.root={args.data_root}', *args.overrides]
    if source:
        overrides.append(f'data.raw_source={source}')
    if args.batch_size:
        overrides.append(f'data.batch_size={args.batch_size}')
    config = load_config(REPO / 'configs' / config_name, overrides, env={})
    data = config['data']
    start = time.perf_counter()
    splits = load_splits(data['name'], data['root'], data['max_nodes'],
                         data['raw_source'])
    load_time = time.perf_counter() - start
    info = splits.info
    model = GraphormerSepNorm.from_config(dict(
        model_arguments(config['model']),
        atom_vocab_sizes=list(info.atom_vocab_sizes),
        bond_vocab_sizes=list(info.bond_vocab_sizes))).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(),
                                  lr=config['optim']['lr'],
                                  weight_decay=config['optim']['weight_decay'])
    loss_fn = _loss_fn(info.task)
    batch_size = data['batch_size']
    store = (DeviceGraphStore(splits.train, device) if args.on_device else
             None)
    loader = GraphBatchLoader(splits.train, batch_size, shuffle=True,
                              seed=0, store=store,
                              pin_memory=device.startswith('cuda'))
    use_bf16 = device.startswith('cuda') and torch.cuda.is_bf16_supported()
    times, graphs = [], []
    iterator = iter(loader)
    for step in range(args.warmup + args.steps):
        if device.startswith('cuda'):
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        try:
            batch = next(iterator)
        except StopIteration:
            iterator = iter(loader)
            batch = next(iterator)
        batch = batch.to(device, non_blocking=True)
        with torch.autocast(device_type='cuda', dtype=torch.bfloat16,
                            enabled=use_bf16):
            pred = model(batch).view(-1).float()
        loss = loss_fn(pred, batch.y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        if device.startswith('cuda'):
            torch.cuda.synchronize()
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
            graphs.append(int(batch.num_graphs))
    median = statistics.median(times)
    steps_per_epoch = math.ceil(len(splits.train) / batch_size)
    return {
        'dataset': dataset,
        'device': device,
        'device_name': _device_name(device),
        'threads': torch.get_num_threads(),
        'batch_size': batch_size,
        'model': f"{config['model']['num_layers']}x"
                 f"{config['model']['hidden_channels']}, "
                 f"{config['model']['num_heads']} heads, "
                 f"norm={config['model']['norm']}, multi_hop_max_dist="
                 f"{config['model']['multi_hop_max_dist']}",
        'precision': 'bf16-mixed' if use_bf16 else '32-true',
        'on_device': bool(args.on_device),
        'train_graphs': len(splits.train),
        'dataset_load_s': load_time,
        'median_step_s': median,
        'min_step_s': min(times),
        'max_step_s': max(times),
        'graphs_per_s': statistics.median(
            g / t for g, t in zip(graphs, times)),
        'steps_per_epoch': steps_per_epoch,
        'epoch_time_s': median * steps_per_epoch,
        'measured_steps': len(times),
        'data_root': str(data['root']),
        'raw_source': data['raw_source'],
    }


def _device_name(device: str) -> str:
    from graphormer_sepnorm.training.hardware import hardware_name
    return hardware_name('cuda' if device.startswith('cuda') else 'cpu')


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    devices = args.devices or (['cpu', 'cuda'] if torch.cuda.is_available()
                               else ['cpu'])
    results = []
    for dataset in args.datasets:
        for device in devices:
            result = measure(dataset, device, args)
            results.append(result)
            print(f"{dataset:12s} {device:5s} batch {result['batch_size']:4d}"
                  f"  median step {result['median_step_s']:.3f} s  "
                  f"{result['graphs_per_s']:8.1f} graphs/s  epoch "
                  f"{result['epoch_time_s']:8.1f} s ({result['steps_per_epoch']}"
                  f" steps)  [{result['device_name']}, {result['model']}]",
                  flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
