r"""chemprop's ``predict`` beside ours on the same molecules (the
``chemprop`` section of ``benchmarks/predict_throughput.py``): its default
D-MPNN with random weights, run by the interpreter that has chemprop."""
from __future__ import annotations

import csv
import os
import subprocess
from pathlib import Path
from typing import Optional

from .measure import env_with, run_measured
from .sections import predict_cmd


# chemprop's CLI as its console script runs it: `python -m chemprop.cli.main`
# imports the module and exits 0 without predicting (no __main__ guard), which
# once made chemprop look 4x faster here. The row counts are checked too.
_CHEMPROP_CLI = ('import sys; from chemprop.cli.main import main; '
                 "sys.argv[0] = 'chemprop'; sys.exit(main())")

_CHEMPROP_MODEL = r'''
import sys
from chemprop import models, nn
model = models.MPNN(nn.BondMessagePassing(), nn.MeanAggregation(),
                    nn.RegressionFFN())
models.save_model(sys.argv[1], model)
'''


def chemprop_version(python: str) -> Optional[str]:
    r"""The version of chemprop that the interpreter :obj:`python` imports,
    or :obj:`None` if it cannot."""
    try:
        check = subprocess.run([python, '-c', 'import chemprop; print('
                                'chemprop.__version__)'],
                               capture_output=True, text=True)
    except OSError:  # Not a program that runs.
        return None
    return check.stdout.strip() if check.returncode == 0 else None


def chemprop_side_by_side(checkpoint: Path, smiles: list[str], python: str,
                          work: Path) -> list[dict]:
    r"""chemprop predict and ours on the same molecules (CSV with a smiles
    column), 1 thread and all cores, start-up included."""
    source = work / 'chemprop_in.csv'
    source.write_text('smiles\n' + '\n'.join(smiles) + '\n')
    model = work / 'chemprop_model.pt'
    subprocess.run([python, '-c', _CHEMPROP_MODEL, str(model)], check=True,
                   env=env_with(1))
    cores = len(os.sched_getaffinity(0))
    results = []
    outputs = {'chemprop': work / 'chemprop_out.csv',
               'ours': work / 'ours_out.csv'}
    for threads in sorted({1, cores}):
        chemprop = run_measured(
            [python, '-c', _CHEMPROP_CLI, 'predict', '-i', str(source),
             '-o', str(outputs['chemprop']), '--model-paths', str(model),
             '-n', '0', '--accelerator', 'cpu'], env_with(threads))
        ours_extra = ['--num-workers', '0'] if threads == 1 else []
        ours = run_measured(predict_cmd(checkpoint, source, outputs['ours'],
                                        *ours_extra),
                            env_with(1 if threads > 1 else threads))
        for name, output in outputs.items():
            rows = _data_rows(output)
            if rows != len(smiles):
                raise RuntimeError(f'{name} wrote {rows} prediction rows for '
                                   f'{len(smiles)} molecules ({output})')
            output.unlink()
        for name, run in (('chemprop', chemprop), ('ours', ours)):
            run.update(name=name, threads=threads)
            results.append(run)
            print(f'chemprop comparison: {name}, {threads} thread(s)/cores: '
                  f'{run["wall"]:.1f} s, peak {run["main_mb"]:.0f} MB main '
                  f'/ {run["child_mb"]:.0f} MB largest child', flush=True)
    return results


def _data_rows(path: Path) -> int:
    r"""Rows of a CSV file after its header (0 if it was not written)."""
    if not path.is_file():
        return 0
    with open(path, newline='') as f:
        return max(sum(1 for _ in csv.reader(f)) - 1, 0)
