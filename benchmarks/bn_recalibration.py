#!/usr/bin/env python
r"""Is SepNorm's noisy validation curve its graph-token BatchNorm's running
statistics? Re-evaluates training checkpoints twice on a split:

* as validation does, with the BatchNorm running statistics saved in the
  checkpoint (an exponential average over the last training batches, whose
  weights were still moving);
* after re-estimating those statistics with the checkpoint's weights
  frozen: one pass over the training split in training mode, averaging
  every batch equally (:func:`torch.optim.swa_utils.update_bn`).

If the two agree, the running statistics are not the cause; if the second
is much better where the curve spikes, they are. Writes a JSON and a
markdown table; takes Lightning checkpoints of ``scripts/train.py`` (for
example copies of ``checkpoints/last.ckpt`` taken after each epoch)::

    python benchmarks/bn_recalibration.py --config runs/x/config.yaml \
        --checkpoints epoch0.ckpt epoch1.ckpt --output-dir results/bn
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Sequence

import torch

from graphormer_sepnorm.data import load_data_splits
from graphormer_sepnorm.training.config import load_config
from graphormer_sepnorm.training.evaluate import predict_split
from graphormer_sepnorm.training.lit_module import GraphormerLitModule
from graphormer_sepnorm.training.metrics import compute_metrics, monitor_metric
from graphormer_sepnorm.nn import recalibrate_batch_norm


def _load_checkpoint(path: Path, module: GraphormerLitModule) -> dict:
    # weights_only=True: tensors and plain values only, nothing in the file
    # can run; train.py's checkpoints load so.
    try:
        state = torch.load(path, map_location='cpu', weights_only=True)
        module.load_state_dict(state['state_dict'])
    except Exception as error:  # not torch, unsafe, truncated, other model
        raise ValueError(
            f"{path} is not a checkpoint of this run's model written by "
            f"scripts/train.py ({type(error).__name__}: "
            f"{str(error)[:200]}); pass its checkpoints/last.ckpt or "
            f"best.ckpt (or copies) with the run's own config.yaml") from None
    module.on_load_checkpoint(state)
    return state


def compare(config: dict, checkpoints: Sequence[Path],
            split: str = 'val') -> list[dict]:
    r"""For each checkpoint: its epoch and step, and the :obj:`split`
    metric with the saved and with the re-estimated running statistics."""
    splits = load_data_splits(config['data'])
    task = splits.info.task
    metric = monitor_metric(config)
    rows = []
    for path in checkpoints:
        module = GraphormerLitModule(config)
        state = _load_checkpoint(path, module)
        model = module.model
        target_mean, target_std = module.target_scaling.statistics()

        def score() -> float:
            _, preds, targets = predict_split(
                model, splits[split], task, target_mean, target_std,
                batch_size=config['data']['batch_size'])
            return compute_metrics(task, preds, targets,
                                   splits.info.target_names,
                                   target_std=target_std)[metric]

        saved = score()
        # One pass over the training split, seeded.
        from torch_geometric.loader import DataLoader
        norms = recalibrate_batch_norm(
            model, DataLoader(splits['train'],
                              batch_size=config['data']['batch_size']))
        rows.append({'checkpoint': Path(path).name,
                     'epoch': int(state['epoch']),
                     'step': int(state['global_step']),
                     'batch_norm_layers': norms, 'metric': metric,
                     'split': split, 'saved_statistics': saved,
                     'recalibrated_statistics': score()})
    return rows


def markdown(rows: Sequence[dict]) -> str:
    r"""The rows as a markdown table."""
    lines = ['| checkpoint | epoch | step | BatchNorm layers | '
             'saved statistics | recalibrated on train |',
             '| --- | --- | --- | --- | --- | --- |']
    for r in rows:
        lines.append(f"| {r['checkpoint']} | {r['epoch']} | {r['step']:,} "
                     f"| {r['batch_norm_layers']} "
                     f"| {r['split']} {r['metric']} {r['saved_statistics']:.3f} "
                     f"| {r['recalibrated_statistics']:.3f} |")
    return '\n'.join(lines) + '\n'


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--config', required=True, type=Path,
                        help="The run's config.yaml (as training wrote it).")
    parser.add_argument('--checkpoints', required=True, nargs='+',
                        type=Path, help='Lightning checkpoints of that run.')
    parser.add_argument('--split', default='val', choices=['val', 'train'],
                        help='Split to score (default: val; never test: '
                        'this is a diagnostic).')
    parser.add_argument('--output-dir', type=Path, default=None,
                        help='Write bn_recalibration.{json,md} here.')
    parser.add_argument('--threads', type=int, default=None,
                        help="torch threads (default: torch's own).")
    args = parser.parse_args(argv)
    for path in [args.config, *args.checkpoints]:
        if not path.is_file():
            parser.error(f'{path} does not exist')
    config = load_config(args.config)
    threads = torch.get_num_threads()
    torch.set_num_threads(args.threads or threads)
    try:
        rows = compare(config, args.checkpoints, args.split)
    except ValueError as error:
        parser.error(str(error))
    finally:
        torch.set_num_threads(threads)  # as it was, for in-process callers
    table = markdown(rows)
    print(table, end='')
    if args.output_dir is not None:
        args.output_dir.mkdir(parents=True, exist_ok=True)
        (args.output_dir / 'bn_recalibration.json').write_text(
            json.dumps(rows, indent=2) + '\n')
        (args.output_dir / 'bn_recalibration.md').write_text(table)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
