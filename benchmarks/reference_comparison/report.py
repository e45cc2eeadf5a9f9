r"""The reference comparison's report: the machine and software, the
table of rows (speed-up = reference / ours) and what the rows measure."""
from __future__ import annotations

import math
import os
import platform
from pathlib import Path

import torch

from graphormer_sepnorm.training.hardware import cpu_model


def hardware() -> str:
    cores = len(os.sched_getaffinity(0)) if hasattr(
        os, 'sched_getaffinity') else os.cpu_count()
    gpu = (torch.cuda.get_device_name(0) if torch.cuda.is_available() else
           'none (GPU rows not measured)')
    import transformers
    load = ', '.join(f'{v:.1f}' for v in os.getloadavg())
    return (f'CPU: {cpu_model()}, {cores} cores usable (load average at the '
            f'end: {load}; the machine was shared with other jobs), torch '
            f'threads {torch.get_num_threads()}; GPU: {gpu}; Python '
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
