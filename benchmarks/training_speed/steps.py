r"""Timed training steps (:func:`measure`) of every setting of the command
(:func:`measure_all`), each printed as one line (:func:`line`)."""
from __future__ import annotations

import itertools
import json
import math
import statistics
import time
from pathlib import Path

import torch

from .batches import Batches, loss_fn


def measure(batches: Batches, args, precision: str = 'auto',
            compiled: str = 'off') -> dict:
    r"""Times :obj:`args.warmup` + :obj:`args.steps` training steps of a
    fresh model on :obj:`batches`."""
    device, config = batches.device, batches.config
    model = batches.model()
    optimizer = torch.optim.AdamW(model.parameters(),
                                  lr=config['optim']['lr'],
                                  weight_decay=config['optim']['weight_decay'])
    compute_loss = loss_fn(batches.splits.info.task)
    use_bf16 = (precision == 'bf16' or precision == 'auto' and
                device.startswith('cuda') and torch.cuda.is_bf16_supported())
    network = model
    if compiled == 'model':
        network = torch.compile(model, dynamic=True,
                                backend=args.compile_backend)
    elif compiled == 'regions':
        model.compile_regions(dynamic=True, backend=args.compile_backend)
    times, graphs = [], []
    first_step_s = 0.0
    device_type = 'cuda' if device.startswith('cuda') else 'cpu'
    if device_type == 'cuda':
        torch.cuda.reset_peak_memory_stats()
    for step in range(args.warmup + args.steps):
        if device_type == 'cuda':
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        batch = batches.next().to(device, non_blocking=True)
        with torch.autocast(device_type=device_type, dtype=torch.bfloat16,
                            enabled=use_bf16):
            pred = network(batch).view(-1).float()
        loss = compute_loss(pred, batch.y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        if device_type == 'cuda':
            torch.cuda.synchronize()
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
            graphs.append(int(batch.num_graphs))
        elif step == 0:
            # Starting the workers (first setting on these batches) and
            # compiling (with --compile).
            first_step_s = time.perf_counter() - t0
    median = statistics.median(times)
    train_graphs = len(batches.splits.train)
    steps_per_epoch = math.ceil(train_graphs / batches.batch_size)
    model_config = config['model']
    return {
        'dataset': batches.dataset,
        'device': device,
        'device_name': _device_name(device),
        'threads': torch.get_num_threads(),
        'batch_size': batches.batch_size,
        'model': f"{model_config['num_layers']}x"
                 f"{model_config['hidden_channels']}, "
                 f"{model_config['num_heads']} heads, "
                 f"norm={model_config['norm']}, multi_hop_max_dist="
                 f"{model_config['multi_hop_max_dist']}",
        'precision': 'bf16-mixed' if use_bf16 else '32-true',
        'compiled': compiled != 'off',
        'compile_scope': compiled,
        'compile_s': first_step_s if compiled != 'off' else 0.0,
        'first_step_s': first_step_s,
        'buckets': batches.layout['num_buckets'],
        'workers': args.workers,
        'peak_memory_mib': (torch.cuda.max_memory_allocated() / 2**20
                            if device_type == 'cuda' else math.nan),
        'on_device': bool(args.on_device),
        'train_graphs': train_graphs,
        'dataset_load_s': batches.load_s,
        'median_step_s': median,
        'steps_per_s': 1.0 / median,
        'min_step_s': min(times),
        'max_step_s': max(times),
        'graphs_per_s': statistics.median(
            g / t for g, t in zip(graphs, times)),
        'steps_per_epoch': steps_per_epoch,
        'epoch_time_s': median * steps_per_epoch,
        'measured_steps': len(times),
        'data_root': str(config['data']['root']),
        'raw_source': config['data']['raw_source'],
    }


def _device_name(device: str) -> str:
    from graphormer_sepnorm.training.hardware import hardware_name
    return hardware_name('cuda' if device.startswith('cuda') else 'cpu')


def measure_all(args) -> list[dict]:
    r"""Every (dataset, device, batch size, buckets, precision, compile)
    setting, written to :obj:`args.json` after each; the settings of one
    (dataset, device, batch size, buckets) share its loader."""
    devices = args.devices or (['cpu', 'cuda'] if torch.cuda.is_available()
                               else ['cpu'])
    results = []
    for dataset, device, batch_size, buckets in itertools.product(
            args.datasets, devices, args.batch_sizes or [None],
            args.buckets):
        batches = Batches(dataset, device, args, batch_size, buckets)
        try:
            for precision, compiled in itertools.product(args.precision,
                                                         args.compile):
                result = measure(batches, args, precision, compiled)
                results.append(result)
                print(line(result), flush=True)
                if args.json:
                    Path(args.json).write_text(json.dumps(results, indent=2))
        finally:
            batches.close()
    return results


def line(result: dict) -> str:
    compiled = (f" compiled ({result.get('compile_scope', 'model')})"
                if result.get('compiled') else '')
    return (f"{result['dataset']:12s} {result['device']:5s} batch "
            f"{result['batch_size']:4d} {result['precision']}{compiled} "
            f"buckets {result['buckets']}  "
            f"median step {result['median_step_s']:.4f} s  "
            f"{result['graphs_per_s']:8.1f} graphs/s  epoch "
            f"{result['epoch_time_s']:8.1f} s ({result['steps_per_epoch']} "
            f"steps; first step {result['first_step_s']:.1f} s)  "
            f"[{result['device_name']}, {result['model']}]")
