#!/usr/bin/env python
r"""Training throughput of GraphormerSepNorm: graphs per second and time per
epoch, for ZINC-subset and OGB MolHIV, with the recipe model and batch size
of each config (or overrides), on CPU and, when available, CUDA.

Each measured step is one optimizer update as in training (batch fetch from
the loader, forward, L1/BCE loss, backward, gradient clipping, AdamW) timed
end to end (CUDA synchronized); the first ``--warmup`` steps are dropped and
medians over ``--steps`` steps are printed. Time per epoch = median step
time x updates per epoch of the full training split. Batches come from the
training loader with their layout prepared as in training
(:func:`~graphormer_sepnorm.transforms.batch_layout.layout_options_for`:
the model's size buckets on the CPU, one on a GPU), in ``--workers``
processes.

``--precision``, ``--compile``, ``--batch-sizes`` and ``--buckets`` take
several values and measure every combination (``--compile`` compiles the
model's regions, :meth:`GraphormerSepNorm.compile_regions`, or its whole
forward with ``torch.compile(dynamic=True)``; the compile time is reported
apart, not in the steps; ``--buckets`` overrides the number of attention
size buckets the loader prepares). ``--json`` is rewritten after every
setting, so a run stopped by a time limit keeps the settings it finished. ``--baseline REV`` measures the same settings with the code of
git revision ``REV`` (its own copy of this script, in a temporary git
worktree) in the same run, alternating rounds of the two, and prints both
medians and their ratio: before/after comparisons on one machine in one
sitting.

Example (offline, shared data)::

    python benchmarks/train_throughput.py --data-root /tmp/data \
        --zinc-source ../shared/data/ZINC-proxy \
        --molhiv-source ../shared/data/ogbg_molhiv --steps 5
"""
from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Optional

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
    parser.add_argument('--steps', type=int, default=5,
                        help='Measured steps per setting (default: 5).')
    parser.add_argument('--warmup', type=int, default=2,
                        help='Unmeasured first steps (default: 2).')
    parser.add_argument('--on-device', action='store_true',
                        help='Batch on the accelerator (data.on_device).')
    parser.add_argument('--threads', type=int, default=None,
                        help='torch.set_num_threads (default: torch).')
    parser.add_argument('--precision', nargs='+', default=['auto'],
                        choices=['auto', '32', 'bf16'],
                        help='auto: bf16 on a GPU that has it, else fp32.')
    parser.add_argument('--compile', nargs='+', default=['off'],
                        choices=['off', 'regions', 'model'],
                        help='torch.compile (dynamic shapes) the model\'s '
                        'regions (GraphormerSepNorm.compile_regions) or its '
                        'whole forward (several: each).')
    parser.add_argument('--compile-backend', default='inductor',
                        help='torch.compile backend of --compile '
                        '(default: inductor).')
    parser.add_argument('--batch-sizes', type=int, nargs='+', default=None,
                        help='Override the config batch size (several: '
                        'each).')
    parser.add_argument('--buckets', nargs='+', default=['auto'],
                        type=_buckets,
                        help='Attention size buckets of the batches: auto '
                        '(the loader\'s choice for the device: the model\'s '
                        'on the CPU, 1 on a GPU) or a number (several: '
                        'each).')
    parser.add_argument('--workers', type=int, default=0,
                        help='DataLoader worker processes (default: 0).')
    parser.add_argument('--baseline', default=None, metavar='REV',
                        help='Also measure git revision REV in the same run '
                        '(alternating rounds) and print the ratio.')
    parser.add_argument('--rounds', type=int, default=3,
                        help='Alternating rounds with --baseline.')
    parser.add_argument('--json', default=None,
                        help='Also write the results to this JSON file.')
    parser.add_argument('--markdown', default=None,
                        help='Also write a markdown report of the results '
                        '(with the command line) to this file.')
    parser.add_argument('overrides', nargs='*', metavar='KEY=VALUE',
                        help='Config overrides (e.g. model.num_layers=6).')
    return parser.parse_args(argv)


def _buckets(value: str) -> str:
    if value == 'auto' or value.isdigit() and int(value) > 0:
        return value
    raise argparse.ArgumentTypeError(
        f"--buckets takes 'auto' or a positive number, not {value!r}")


def _loss_fn(task: str):
    import torch.nn.functional as F
    if task == 'regression':
        return lambda pred, y: F.l1_loss(pred, y.view(-1).float())
    return lambda pred, y: F.binary_cross_entropy_with_logits(
        pred, y.view(-1).float())


class Batches:
    r"""The training batches of one (dataset, device, batch size, buckets)
    setting: the recipe config with the overrides, the training split and
    its loader, whose workers serve every precision and compile setting
    measured on it (starting them is timed in the first step only)."""
    def __init__(self, dataset: str, device: str, args,
                 batch_size: Optional[int] = None,
                 buckets: str = 'auto') -> None:
        from graphormer_sepnorm.data.batch_loader import GraphBatchLoader
        from graphormer_sepnorm.data.datasets import load_splits
        from graphormer_sepnorm.data.graph_store import DeviceGraphStore
        from graphormer_sepnorm.training.config import load_config
        from graphormer_sepnorm.transforms.batch_layout import \
            layout_options_for

        self.dataset, self.device = dataset, device
        config_name = f"{dataset}_{args.norm}norm.yaml"
        source = (args.molhiv_source if dataset == 'molhiv' else
                  args.zinc_source)
        overrides = [f'data.root={args.data_root}', *args.overrides]
        if source:
            overrides.append(f'data.raw_source={source}')
        if batch_size:
            overrides.append(f'data.batch_size={batch_size}')
        self.config = load_config(REPO / 'configs' / config_name, overrides,
                                  env={})
        data = self.config['data']
        start = time.perf_counter()
        self.splits = load_splits(data['name'], data['root'],
                                  data['max_nodes'], data['raw_source'])
        self.load_s = time.perf_counter() - start
        self.batch_size = data['batch_size']
        self.layout = layout_options_for(self.model(), device)
        if buckets != 'auto':
            self.layout['num_buckets'] = int(buckets)
        store = (DeviceGraphStore(self.splits.train, device)
                 if args.on_device else None)
        self.loader = GraphBatchLoader(
            self.splits.train, self.batch_size, shuffle=True, seed=0,
            store=store, num_workers=args.workers,
            pin_memory=device.startswith('cuda'), layout=self.layout)
        self._iterator = iter(self.loader)

    def model(self):
        r"""A fresh recipe model (seed 0) on the device, in training mode."""
        from graphormer_sepnorm.models import GraphormerSepNorm
        from graphormer_sepnorm.training.config import model_arguments
        info = self.splits.info
        torch.manual_seed(0)
        return GraphormerSepNorm.from_config(dict(
            model_arguments(self.config['model']),
            atom_vocab_sizes=list(info.atom_vocab_sizes),
            bond_vocab_sizes=list(info.bond_vocab_sizes))).to(
                self.device).train()

    def next(self):
        try:
            return next(self._iterator)
        except StopIteration:
            self._iterator = iter(self.loader)
            return next(self._iterator)

    def close(self) -> None:
        r"""Stops the loader's workers now, not when a later setting's
        forked workers collect them (which fails: 'can only test a child
        process')."""
        del self._iterator, self.loader
        gc.collect()


def measure(batches: Batches, args, precision: str = 'auto',
            compiled: str = 'off') -> dict:
    r"""Times :obj:`args.warmup` + :obj:`args.steps` training steps of a
    fresh model on :obj:`batches`."""
    device, config = batches.device, batches.config
    model = batches.model()
    optimizer = torch.optim.AdamW(model.parameters(),
                                  lr=config['optim']['lr'],
                                  weight_decay=config['optim']['weight_decay'])
    loss_fn = _loss_fn(batches.splits.info.task)
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
        loss = loss_fn(pred, batch.y)
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
                print(_line(result), flush=True)
                if args.json:
                    Path(args.json).write_text(json.dumps(results, indent=2))
        finally:
            batches.close()
    return results


def _line(result: dict) -> str:
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


def compare_with_baseline(argv: list[str], args) -> list[dict]:
    r"""Alternating rounds of this code and of git revision
    :obj:`args.baseline` (its own script, in a temporary worktree), each a
    subprocess with the same arguments; returns this code's results with
    the baseline's median step beside each."""
    import subprocess
    import tempfile
    forwarded = _without_option(argv, '--baseline', '--json', '--rounds')
    # The baseline's script may lack the newer options (it takes one
    # --batch-size).
    old_options = _without_option(forwarded, '--precision', '--compile',
                                  '--workers', '--batch-sizes',
                                  '--compile-backend', '--buckets')
    if args.batch_sizes:
        if len(args.batch_sizes) > 1:
            raise SystemExit('--baseline takes one --batch-sizes value')
        old_options += ['--batch-size', str(args.batch_sizes[0])]
    ours: dict[tuple, list[float]] = {}
    theirs: dict[tuple, list[float]] = {}
    rows: dict[tuple, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / 'baseline'
        subprocess.run(['git', '-C', str(REPO), 'worktree', 'add',
                        '--detach', str(tree), args.baseline], check=True,
                       capture_output=True)
        try:
            for _ in range(args.rounds):
                for root, store in ((tree, theirs), (REPO, ours)):
                    out = Path(tmp) / 'round.json'
                    options = forwarded if root == REPO else old_options
                    subprocess.run(
                        [sys.executable, str(root / 'benchmarks' /
                                             'train_throughput.py'),
                         *options, '--json', str(out)], check=True,
                        env=dict(os.environ, PYTHONPATH=str(root)))
                    for result in json.loads(out.read_text()):
                        key = (result['dataset'], result['device'],
                               result['batch_size'])
                        store.setdefault(key, []).append(
                            result['median_step_s'])
                        if root == REPO:
                            rows[key] = result
        finally:
            subprocess.run(['git', '-C', str(REPO), 'worktree', 'remove',
                            '--force', str(tree)], capture_output=True)
    results = []
    print(f"\nmedian over {args.rounds} alternating rounds (s per step):")
    for key, result in rows.items():
        now, before = (statistics.median(ours[key]),
                       statistics.median(theirs[key]))
        result = dict(result, median_step_s=now, baseline=args.baseline,
                      baseline_median_step_s=before,
                      speedup_vs_baseline=before / now)
        results.append(result)
        print(f"{key[0]:12s} {key[1]:5s} batch {key[2]:4d}  this code "
              f"{now:.4f}  {args.baseline} {before:.4f}  ratio "
              f"{before / now:.2f}x", flush=True)
    return results


def _without_option(argv: list[str], *names: str) -> list[str]:
    r""":obj:`argv` without the options :obj:`names` and their values
    (every argument up to the next option)."""
    out, skipping = [], False
    for arg in argv:
        if arg.startswith('--'):
            skipping = arg.split('=')[0] in names
            if skipping:
                continue
        elif skipping:
            continue
        out.append(arg)
    return out


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    results = (compare_with_baseline(argv, args) if args.baseline else
               measure_all(args))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    if args.markdown:
        Path(args.markdown).write_text(report_markdown(results, argv))
    return 0


def _seconds(value: Optional[float]) -> str:
    return '—' if value is None else f'{value:.1f}'


def report_markdown(results: list[dict], argv: list[str]) -> str:
    r"""A markdown report of :obj:`results`: the command, the machine and
    one row per setting (with the baseline's median and the ratio when
    measured against one)."""
    import platform
    first = results[0] if results else {}
    baseline = first.get('baseline')
    command = ' '.join(['python benchmarks/train_throughput.py',
                        *_without_option(argv, '--json', '--markdown')])
    lines = [
        '# Training throughput', '',
        f'`{command}`', '',
        f"* Hardware: {first.get('device_name', '?')}; torch "
        f"{torch.__version__}, Python {platform.python_version()}; measured "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} (load average "
        f"{os.getloadavg()[0]:.1f} at the end).",
        '* A step = batch fetch (collation and layout included) + forward + '
        'loss + backward + clip + AdamW; median over the measured steps after '
        'the warm-up; the first step (loader start, compilation) apart'
        + (f', in alternating rounds of this code and `{baseline}` (the '
           f'median of the per-round medians)' if baseline else '') + '.',
        '']
    header = ('| dataset | device | batch | buckets | precision | compiled | '
              'first step (s) | median step (s) | graphs/s |')
    rule = '| --- | --- | --- | --- | --- | --- | --- | --- | --- |'
    if baseline:
        header += f' `{baseline}` median step (s) | speed-up |'
        rule += ' --- | --- |'
    lines += [header, rule]
    for r in results:
        row = (f"| {r['dataset']} | {r['device']} | {r['batch_size']} | "
               f"{r.get('buckets', '?')} | {r['precision']} | "
               f"{r.get('compile_scope', 'model') if r.get('compiled') else 'no'} | "
               f"{_seconds(r.get('first_step_s'))} | {r['median_step_s']:.3f} | "
               f"{r['batch_size'] / r['median_step_s']:.0f} |")
        if baseline:
            row += (f" {r['baseline_median_step_s']:.3f} | "
                    f"{r['speedup_vs_baseline']:.2f}x |")
        lines.append(row)
    return '\n'.join(lines) + '\n'


if __name__ == '__main__':
    sys.exit(main())
