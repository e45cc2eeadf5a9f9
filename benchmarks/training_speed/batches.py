r"""The training batches of one throughput setting (:class:`Batches`): the
recipe config with the command's overrides, its training split and loader
and a fresh recipe model, and the training loss of its task
(:func:`loss_fn`)."""
from __future__ import annotations

import gc
import time
from pathlib import Path
from typing import Optional

import torch

REPO = Path(__file__).resolve().parents[2]


def loss_fn(task: str):
    r"""The training loss of :obj:`task`: L1 for regression, binary cross
    entropy on logits otherwise."""
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
