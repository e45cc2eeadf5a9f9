r"""The same settings measured with the code of another git revision
(:func:`compare_with_baseline`: its own copy of the script, in a temporary
worktree, in alternating rounds), and the options its older script takes
(:func:`without_option`)."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from .batches import REPO


def compare_with_baseline(argv: list[str], args) -> list[dict]:
    r"""Alternating rounds of this code and of git revision
    :obj:`args.baseline` (its own script, in a temporary worktree), each a
    subprocess with the same arguments; returns this code's results with
    the baseline's median step beside each."""
    forwarded = without_option(argv, '--baseline', '--json', '--rounds')
    # The baseline's script may lack the newer options (it takes one
    # --batch-size).
    old_options = without_option(forwarded, '--precision', '--compile',
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


def without_option(argv: list[str], *names: str) -> list[str]:
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
