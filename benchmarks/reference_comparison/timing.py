r"""Timing for the reference comparison: per-graph preprocessing time, and
training steps (forward, loss, backward, clipping, AdamW) of several
models interleaved on the same batches."""
from __future__ import annotations

import math
import statistics
import time

import torch


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
