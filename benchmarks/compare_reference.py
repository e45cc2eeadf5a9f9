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
import gzip
import json
import math
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from graphormer_sepnorm.convert import convert_graphormer, to_sepnorm  # noqa
from graphormer_sepnorm.data.featurize import (FeaturizationError,  # noqa
                                               smiles_to_ogb_graph)
from graphormer_sepnorm.training.hardware import cpu_model  # noqa
from graphormer_sepnorm.transforms import (AddShortestPaths,  # noqa
                                           add_batch_layout)
from gpu_check_plan import recipe_batch_size  # noqa: E402 (benchmarks/)

DEFAULT_SHARED = REPO.parent / 'shared' / 'data'
DEFAULT_OUTPUT = REPO / 'benchmarks' / 'results' / 'reference_comparison.md'
SPATIAL_POS_MAX = 20


def import_reference():
    # The reference's Floyd-Warshall (algos_graphormer.pyx, built by
    # pyximport when its collator is imported) is Python-2 Cython ('long'):
    # Cython 3.1 and later reject it at their default language level, as on
    # the first GPU machine. The first pyximport installed is the one used.
    try:
        import pyximport
        pyximport.install(setup_args={'include_dirs': np.get_include()},
                          language_level=2)
    except ImportError:
        pass  # Reported below, with the install hint.
    try:
        from transformers.models.deprecated.graphormer import (
            collating_graphormer, configuration_graphormer,
            modeling_graphormer)
    except ImportError as error:
        sys.exit(f"The reference needs transformers and Cython: pip install "
                 f"-e .[reference] ({error})")
    return collating_graphormer, configuration_graphormer, modeling_graphormer


# ---------------------------------------------------------------- data
def load_zinc(shared: Path, count: int):
    from torch_geometric.data import Data
    arrays = np.load(shared / 'ZINC' / 'subset_partial_pyg' /
                     'val_arrays.npz')
    x_ptr, edge_ptr = arrays['x_ptr'], arrays['edge_ptr']
    graphs = []
    for g in range(min(count, len(x_ptr) - 1)):
        nodes = slice(x_ptr[g], x_ptr[g + 1])
        edges = slice(edge_ptr[g], edge_ptr[g + 1])
        graphs.append(Data(
            x=torch.from_numpy(arrays['x'][nodes]).long().view(-1, 1),
            edge_index=torch.from_numpy(arrays['edge_index'][:, edges]).long(),
            edge_attr=torch.from_numpy(arrays['edge_attr'][edges]).long(),
            y=torch.tensor([float(arrays['y'][g])])))
    return graphs


def load_molhiv(shared: Path, count: int):
    with gzip.open(shared / 'ogbg_molhiv' / 'mapping' / 'mol.csv.gz',
                   'rt') as f:
        next(f)
        rows = [line.rstrip('\n').split(',') for line in f]
    graphs = []
    for label, smiles, *_ in rows:
        if len(graphs) == count:
            break
        try:
            graph = smiles_to_ogb_graph(smiles)
        except FeaturizationError:
            continue
        graph.y = torch.tensor([float(label)])
        graphs.append(graph)
    return graphs


def reference_item(graph):
    return {'edge_index': graph.edge_index.numpy(),
            'edge_attr': graph.edge_attr.numpy(),
            'node_feat': graph.x.view(graph.num_nodes, -1).numpy(),
            'num_nodes': graph.num_nodes, 'y': graph.y.numpy()}


def materialise_path_edges(graph, hops: int) -> np.ndarray:
    r"""``[n, n, hops, features]`` edge-feature ids along our shortest paths
    (0 = no hop), from ``spd`` / ``path_next``: what the reference's
    preprocessing stores."""
    n = graph.num_nodes
    spd = graph.spd.view(n, n).numpy()
    nxt = graph.path_next.view(n, n).numpy().astype(np.int64)
    edge_attr = graph.edge_attr.view(graph.edge_index.size(1), -1).numpy()
    dense = np.zeros((n, n, edge_attr.shape[1]), np.int64)
    src, dst = graph.edge_index.numpy()
    dense[src, dst] = edge_attr + 1
    hops = max(1, min(hops, int(spd.max())))
    out = np.zeros((n, n, hops, edge_attr.shape[1]), np.int64)
    current = np.repeat(np.arange(n)[:, None], n, 1)
    target = np.repeat(np.arange(n)[None, :], n, 0)
    for hop in range(hops):
        active = spd > hop
        step = np.where(active, nxt[current, target], current)
        out[:, :, hop] = np.where(active[..., None], dense[current, step], 0)
        current = step
    return out


# ---------------------------------------------------------------- timing
def per_graph_us(fn, items, repeats: int) -> float:
    for item in items[:20]:  # Warm-up (and Cython compilation).
        fn(item)
    times = []
    for _ in range(repeats):
        # Process CPU time: less sensitive than wall time to other work on a
        # shared machine (preprocessing is single-threaded in both).
        start = time.process_time()
        for item in items:
            fn(item)
        times.append((time.process_time() - start) / len(items) * 1e6)
    return statistics.median(times)


def step_times(steps: dict, batches, repeats: int, device) -> dict:
    """For each named step function: the median wall time and median process
    CPU time (ms) of one forward+backward over ``repeats`` passes of the
    batches after one warm-up pass, the models interleaved so that load from
    other processes hits them alike; and the peak CUDA memory in MiB (nan on
    CPU)."""
    def sync():
        if device.type == 'cuda':
            torch.cuda.synchronize()

    results = {name: dict(wall=[], cpu=[], peak=math.nan) for name in steps}
    for name, step in steps.items():
        for batch in batches:
            step(batch)
        sync()
        if device.type == 'cuda':
            torch.cuda.reset_peak_memory_stats()
            step(batches[0])
            sync()
            results[name]['peak'] = torch.cuda.max_memory_allocated() / 2**20
    for _ in range(repeats):
        for name, step in steps.items():
            for batch in batches:
                sync()
                wall, cpu = time.perf_counter(), time.process_time()
                step(batch)
                sync()
                results[name]['wall'].append(
                    (time.perf_counter() - wall) * 1e3)
                results[name]['cpu'].append((time.process_time() - cpu) * 1e3)
    return {name: dict(wall=statistics.median(r['wall']),
                       cpu=statistics.median(r['cpu']), peak=r['peak'])
            for name, r in results.items()}


def make_step(model, call, device, amp: bool, which: int):
    """One training step of ``model`` on item ``which`` of a (reference
    batch, our batch) pair: forward, loss, backward, gradient clipping
    (norm 5, as the recipes) and an AdamW step of its own optimizer."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)

    def step(pair):
        optimizer.zero_grad(set_to_none=True)
        inputs, target = pair[which]
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            out = call(model, inputs)
        loss = torch.nn.functional.mse_loss(out.float().view(-1), target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
    return step


# ---------------------------------------------------------------- main
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


def jsonable_to(batch, device):
    if isinstance(batch, dict):
        return {key: value.to(device) for key, value in batch.items()}
    return batch.to(device)


def hardware() -> str:
    cores = len(os.sched_getaffinity(0)) if hasattr(
        os, 'sched_getaffinity') else os.cpu_count()
    gpu = (torch.cuda.get_device_name(0) if torch.cuda.is_available() else
           'none (GPU rows not measured)')
    import transformers
    load = ', '.join(f'{v:.1f}' for v in os.getloadavg())
    return (f'CPU: {cpu_model()}, {cores} cores usable (load average at the '
            f'end: {load}; the machine was shared with other jobs), torch threads '
            f'{torch.get_num_threads()}; GPU: {gpu}; Python '
            f'{platform.python_version()}, torch {torch.__version__}, '
            f'transformers {transformers.__version__}')


def table(rows: list[dict]) -> str:
    lines = ['| part | what | unit | ours | reference | speed-up |',
             '|---|---|---|---:|---:|---:|']
    for row in rows:
        ratio = row['ref'] / row['ours'] if row['ours'] else math.nan
        lines.append(f"| {row['part']} | {row['what']} | {row['unit']} | "
                     f"{row['ours']:.1f} | {row['ref']:.1f} | "
                     f"{ratio:.1f}x |")
    return '\n'.join(lines)


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


def write_report(path: Path, text: str, info: str, args) -> None:
    cuda = torch.cuda.is_available() and 'cuda' in args.devices
    note = ('' if cuda else
            '\nNo GPU was available: the CUDA rows (fp32, bf16 autocast, '
            'peak memory per step) were not measured; the script measures '
            'them when CUDA is present.\n')
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        '# graphormer-sepnorm vs the reference Graphormer (Hugging Face '
        'transformers)\n\n'
        'Written by `python benchmarks/compare_reference.py` '
        f'(`{args.command_line}`). Medians after '
        'warm-up; speed-up = reference / ours.\n\n'
        f'Hardware: {info}\n{note}\n{text}\n\n'
        'Notes:\n\n'
        '* Preprocessing: ours is `AddShortestPaths` (Numba-compiled BFS,'
        ' `spd` and `path_next`); the reference is `preprocess_item` (Cython '
        'Floyd-Warshall plus the `[n, n, max_dist, features]` path-edge '
        'tensor). The "+ path-edge tensor" rows add, to ours, materialising '
        'that tensor in NumPy for the model\'s hops (our model gathers it on '
        'the fly instead, inside the timed training step).\n'
        '* Training step: forward, MSE loss, backward, gradient clipping and '
        'an AdamW step on collated batches, train mode, dropout 0.0 / attention dropout 0.1 '
        '/ activation dropout 0.1 in all models; ours converted from the '
        'reference with `convert_graphormer` (same weights and maths, '
        '`max_attention_distance=18` for the collator\'s '
        '`spatial_pos_max=20`), SepNorm from `to_sepnorm` (batch norm on '
        'the graph token, layer norm on node tokens). MolHIV uses the same '
        'slim shape with the 9 OGB atom and 3 bond features and multi-hop 5 '
        '(the reference config\'s default), not the 768-wide '
        'PCQM4M-pretrained model of the Graphormer paper\'s MolHIV results.\n'
        '* The reference\'s inputs: `preprocess_item` + '
        '`GraphormerDataCollator(spatial_pos_max=20)`, with `input_edges` cut '
        'to the model\'s hops before collation (the Hugging Face collator '
        'pads every graph to the longest path of the batch: 510 hops with a '
        'salt). Collation is timed separately ("collate" rows).\n')


if __name__ == '__main__':
    sys.exit(main())
