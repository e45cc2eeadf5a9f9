r"""The rows of the reference comparison: (a) preprocessing per graph and
(b) collation and training steps per dataset, batch size, device and
precision, each appended as it is measured."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks.gpu_check_plan import recipe_batch_size
from graphormer_sepnorm.convert import convert_graphormer, to_sepnorm
from graphormer_sepnorm.transforms import AddShortestPaths, add_batch_layout

from .inputs import (SPATIAL_POS_MAX, import_reference, jsonable_to,
                     load_molhiv, load_zinc, materialise_path_edges,
                     reference_item)
from .timing import make_step, per_graph_us, step_times


def benchmark(args, rows: list[dict], done) -> None:
    r"""Appends the rows to :obj:`rows`, calling :obj:`done` after each
    part so that the report can be rewritten as the rows come."""
    collating, configuration, modeling = import_reference()
    shared = Path(args.shared)
    transform = AddShortestPaths()
    batch_sizes = {'ZINC': args.zinc_batch_sizes or [recipe_batch_size(
                 'zinc_subset_sepnorm.yaml')],
             'MolHIV': args.molhiv_batch_sizes or [recipe_batch_size(
                 'molhiv_sepnorm.yaml')]}
    count = args.num_graphs or args.batches * max(max(b) for b in
                                                  batch_sizes.values())
    datasets = {
        'ZINC': load_zinc(shared, count),
        'MolHIV': load_molhiv(shared, count),
    }
    shapes = {'ZINC': dict(hops=20, featurizer='zinc'),
              'MolHIV': dict(hops=5, featurizer='ogb')}
    devices = [torch.device(d) for d in args.devices
               if d == 'cpu' or torch.cuda.is_available()]

    # (a) preprocessing (CPU) --------------------------------------------
    for name, graphs in (datasets.items() if 'cpu' in args.devices else ()):
        hops = shapes[name]['hops']
        items = [reference_item(g) for g in graphs]
        ours = per_graph_us(transform, graphs,
                            args.repeats)
        ours_mat = per_graph_us(
            lambda g: materialise_path_edges(transform(g), hops),
            graphs, args.repeats)
        ref = per_graph_us(lambda it: collating.preprocess_item(dict(it)),
                           items, args.repeats)
        sizes = [g.num_nodes for g in graphs]
        label = (f'{name} ({len(graphs)} graphs, mean {np.mean(sizes):.1f} '
                 f'nodes)')
        rows.append(dict(part='preprocess', what=label,
                         unit='us/graph', ours=ours, ref=ref))
        rows.append(dict(part='preprocess',
                         what=f'{label}, ours + {hops}-hop path-edge tensor',
                         unit='us/graph', ours=ours_mat, ref=ref))
        print(f'[preprocess] {name}: ours {ours:.0f} us, with path edges '
              f'{ours_mat:.0f} us, reference {ref:.0f} us', flush=True)
        done()

    # (b) training step --------------------------------------------------
    for name, graphs in datasets.items():
        processed = [transform(g.clone()) for g in graphs]
        for batch_size in batch_sizes[name]:
            training_steps(args, rows, done, (collating, configuration,
                                              modeling), name, shapes[name],
                           graphs, processed, batch_size, devices)


def training_steps(args, rows: list[dict], done, reference_modules,
                   name: str, shape: dict, graphs: list, processed: list,
                   batch_size: int, devices: list) -> None:
    r"""The training-step rows of one dataset and batch size (part (b)):
    the collation (with the CPU) and, on each of :obj:`devices`, each
    precision's step times and peak memory."""
    from torch_geometric.data import Batch
    collating, configuration, modeling = reference_modules
    hops, featurizer = shape['hops'], shape['featurizer']
    num_batches = min(args.batches, len(graphs) // batch_size)
    if num_batches == 0:
        raise SystemExit(f'{name}: {len(graphs)} graphs make no batch of '
                         f'{batch_size}; raise --num-graphs')
    chunks = [range(i * batch_size, (i + 1) * batch_size)
              for i in range(num_batches)]
    torch.manual_seed(0)
    config = configuration.GraphormerConfig(
        num_classes=1, num_atoms=512 * processed[0].x.size(1),
        num_edges=512 * processed[0].edge_attr.view(
            processed[0].edge_index.size(1), -1).size(1),
        num_hidden_layers=args.num_layers, embedding_dim=80, ffn_embedding_dim=80,
        num_attention_heads=8, multi_hop_max_dist=hops,
        edge_type='multi_hop', pre_layernorm=True,
        encoder_normalize_before=False, dropout=0.0,
        attention_dropout=0.1, activation_dropout=0.1,
        spatial_pos_max=SPATIAL_POS_MAX)
    reference = modeling.GraphormerForGraphClassification(config)
    share = convert_graphormer(reference, featurizer=featurizer,
                               spatial_pos_max=SPATIAL_POS_MAX)
    sep = to_sepnorm(share)
    collator = collating.GraphormerDataCollator(
        spatial_pos_max=SPATIAL_POS_MAX)

    ref_batches, our_batches = [], []
    collate_ref, collate_ours = [], []
    for chunk in chunks:
        items = []
        for i in chunk:
            item = collating.preprocess_item(reference_item(graphs[i]))
            item['input_edges'] = item['input_edges'][:, :, :hops]
            items.append(item)
        start = time.perf_counter()
        inputs = collator(items)
        collate_ref.append(time.perf_counter() - start)
        target = inputs.pop('labels').float().view(-1)
        ref_batches.append((inputs, target))
        # Our collation includes the batch layout the model reads, as
        # the training loader builds it (size buckets on the CPU).
        start = time.perf_counter()
        batch = add_batch_layout(
            Batch.from_data_list([processed[i] for i in chunk]),
            **sep.layout_options())
        collate_ours.append(time.perf_counter() - start)
        our_batches.append((batch, batch.y.float().view(-1)))
    if 'cpu' in args.devices:
        rows.append(dict(part='collate', what=f'{name}, batch '
                         f'{batch_size}', unit='ms/batch',
                         ours=statistics.median(collate_ours) * 1e3,
                         ref=statistics.median(collate_ref) * 1e3))
        done()

    for device in devices:
        precisions = ['fp32'] + (['bf16'] if device.type == 'cuda' else [])
        for precision in precisions:
            amp = precision == 'bf16'

            def on(batches):
                return [(jsonable_to(b, device), t.to(device))
                        for b, t in batches]

            def ours_on(batches):
                # One size bucket on an accelerator, as in training.
                return on(batches) if device.type == 'cpu' else [
                    (add_batch_layout(b, **dict(sep.layout_options(),
                                                num_buckets=1),
                                      device=device), t.to(device))
                    for b, t in on(batches)]

            ref_dev, our_dev = on(ref_batches), ours_on(our_batches)
            for model in (reference, share, sep):
                model.to(device).train()
            results = step_times({
                'ref': make_step(reference, lambda m, x: m(**x).logits,
                                 device, amp, 0),
                'share': make_step(share, lambda m, x: m(x), device, amp,
                                   1),
                'sep': make_step(sep, lambda m, x: m(x), device, amp, 1),
            }, list(zip(ref_dev, our_dev)), args.repeats, device)
            for model in (reference, share, sep):
                model.cpu()
            print(f'[step] {name} {device.type} {precision}: ' + ', '.join(
                f"{k} {v['wall']:.0f} ms ({v['cpu']:.0f} ms CPU)"
                for k, v in results.items()), flush=True)
            what = (f'{name} slim ({args.num_layers}x80, 8 heads, multi-hop {hops}), '
                    f'batch {batch_size}, {device.type} {precision}')
            setting = dict(dataset=name, batch_size=batch_size,
                           device=device.type, precision=precision)
            for variant, label in (('share', 'ShareNorm'),
                                   ('sep', 'SepNorm')):
                rows.append(dict(
                    part='train step', what=f'{what}, ours {label}',
                    unit='ms/step (wall)', ours=results[variant]['wall'],
                    ref=results['ref']['wall'], norm=label, **setting))
                if device.type == 'cpu':
                    rows.append(dict(
                        part='train step',
                        what=f'{what}, ours {label}',
                        unit='ms/step (process CPU time)',
                        ours=results[variant]['cpu'],
                        ref=results['ref']['cpu']))
                else:
                    rows.append(dict(
                        part='peak memory', what=f'{what}, ours {label}',
                        unit='MiB', ours=results[variant]['peak'],
                        ref=results['ref']['peak']))
            done()
