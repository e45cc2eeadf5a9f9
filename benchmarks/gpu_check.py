#!/usr/bin/env python
r"""The GPU check: one prepared run on a fresh single-GPU machine that says
whether this library works there and how fast it is.

Steps, in order, each a subprocess with its own time limit (a step that
fails or runs out of time loses nothing of the others):

1. ``env``: the machine (``nvidia-smi``, CPU, versions);
2. ``tests``: ``tests/gpu`` (CPU/CUDA parity, bf16, no host sync, compile,
   resume, evaluate, Predictor, two processes on one GPU);
3. ``throughput``: training steps/s, graphs/s and peak memory of the
   ZINC-subset and MolHIV recipes (``benchmarks/train_throughput.py``):
   fp32 and bf16, batch 128/256/1024 eager, and compiled;
4. ``reference``: the Hugging Face reference Graphormer beside ours on the
   same batches (``benchmarks/compare_reference.py``);
5. ``train``: a timed real ZINC-subset training of the recipe
   (``configs/zinc_subset_sepnorm.yaml``), as many steps as fit in
   ``--train-seconds`` at the measured rate, with validation and test MAE;
6. ``pretrain``: pretraining throughput (molecules/s) with featurizing
   workers, on a corpus of the ZINC SMILES;
7. ``predict``: prediction throughput from SMILES, GPU against CPU workers.

Everything goes to ``--out`` as at most 8 files: ``env.txt``,
``tests_gpu.txt``, ``throughput.json``, ``reference.md``,
``train_results.json``, ``train_metrics.csv``, ``pipelines.json`` (steps 6
and 7) and ``gpu_check.json`` (each step's status, seconds, command and the
tail of its output).

The steps share ``--budget-seconds`` (540 by default, for a 570 s call):
each gets at most what is left, and one with under 10 s left is skipped and
recorded so. The machine has no internet and lacks rdkit, ogb and the Hugging Face
reference: bring them as wheels, and the data in one folder, laid out as
``../shared/data`` (``ZINC-proxy/`` with ``raw/`` or a
``ZINC-proxy-raw.tar.gz``, and ``smiles/``; ``ogbg_molhiv/``).
``python benchmarks/gpu_bundle.py`` fills ``.whl/`` and ``.device-data/``
here (both ignored by git); then, on the GPU machine::

    python3 -m pip install -q --no-index --no-deps --target /tmp/site \
        .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD && \
    python3 benchmarks/gpu_check.py --out $OUT --data .device-data

``--device cpu --tiny`` is the dry run: every step on the CPU with a tiny
model and a few steps (tests/benchmarks/test_gpu_check.py runs it in CI), so
the script never reaches a GPU broken.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable

#: The recipe's model, shrunk for the dry run.
TINY_MODEL = ['model.num_layers=1', 'model.hidden_channels=16',
              'model.ffn_channels=16', 'model.num_heads=2']


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--out', type=Path, required=True,
                        help='Output folder (at most 8 files).')
    parser.add_argument('--data', type=Path,
                        default=REPO.parent / 'shared' / 'data',
                        help='Data folder laid out as ../shared/data.')
    parser.add_argument('--device', default='cuda', choices=['cuda', 'cpu'])
    parser.add_argument('--tiny', action='store_true',
                        help='Dry run: tiny model, a few steps.')
    parser.add_argument('--steps', default=None,
                        help='Only these steps, comma-separated.')
    parser.add_argument('--train-seconds', type=float, default=100.0,
                        help='Training time of the timed ZINC-subset run.')
    parser.add_argument('--budget-seconds', type=float, default=540.0,
                        help='Wall time for all steps: each step gets at '
                        'most what is left, and a step with under 10 s left '
                        'is skipped (recorded as such).')
    parser.add_argument('--workers', type=int, default=None,
                        help='Loader workers (default: CPUs - 2, at most 8).')
    return parser.parse_args(argv)


class Check:
    r"""Runs the steps into :obj:`args.out`, one subprocess each."""
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.out = args.out
        self.work = work
        self.tiny = args.tiny
        self.device = args.device
        self.workers = (args.workers if args.workers is not None else
                        max(0, min(8, (os.cpu_count() or 2) - 2)))
        self.report: dict = {'device': args.device, 'tiny': args.tiny,
                             'started': time.strftime('%Y-%m-%d %H:%M:%S'),
                             'steps': {}}
        self.data = prepare_data(args.data, work)
        self.deadline = time.perf_counter() + args.budget_seconds

    # -------------------------------------------------------------- plumbing
    def run(self, name: str, command: list[str], timeout: float,
            log: Optional[Path] = None) -> bool:
        r"""Runs one step's :obj:`command` (its own time limit) and records
        its status; the output goes to :obj:`log` when given."""
        start = time.perf_counter()
        left = self.deadline - start
        if left < 10:
            self._record(name, 'skipped: the time budget is spent', 0.0,
                         command, '')
            return False
        timeout = min(timeout, left)
        env = dict(os.environ, PYTHONUNBUFFERED='1',
                   GRAPHORMER_DATA_ROOT=str(self.work / 'data'))
        env['PYTHONPATH'] = os.pathsep.join(
            p for p in (str(REPO), env.get('PYTHONPATH')) if p)
        try:
            result = subprocess.run(command, cwd=REPO, env=env, text=True,
                                    capture_output=True, timeout=timeout)
            status = 'ok' if result.returncode == 0 else \
                f'failed (exit {result.returncode})'
            output = result.stdout + result.stderr
        except subprocess.TimeoutExpired as error:
            status = f'timed out after {timeout:.0f} s'
            output = _text(error.stdout) + _text(error.stderr)
        seconds = time.perf_counter() - start
        if log is not None:
            log.write_text(output)
        self._record(name, status, seconds, command, output)
        return status == 'ok'

    def _record(self, name: str, status: str, seconds: float,
                command: list[str], output: str) -> None:
        self.report['steps'].setdefault(name, []).append(dict(
            status=status, seconds=round(seconds, 1),
            command=' '.join(command), output_tail=output[-3000:]))
        print(f'[{name}] {status} in {seconds:.0f} s', flush=True)
        self.save()

    def save(self) -> None:
        (self.out / 'gpu_check.json').write_text(
            json.dumps(self.report, indent=2))

    # ----------------------------------------------------------------- steps
    def env(self) -> None:
        code = ('import platform, torch, torch_geometric, lightning\n'
                'print("python", platform.python_version())\n'
                'print("torch", torch.__version__, "cuda", torch.version.cuda)'
                '\nprint("torch_geometric", torch_geometric.__version__)\n'
                'print("lightning", lightning.__version__)\n'
                'for name in ("rdkit", "ogb", "transformers", "numba"):\n'
                '    try:\n'
                '        module = __import__(name)\n'
                '        print(name, getattr(module, "__version__", "?"))\n'
                '    except ImportError as error:\n'
                '        print(name, "MISSING", error)\n'
                'if torch.cuda.is_available():\n'
                '    p = torch.cuda.get_device_properties(0)\n'
                '    print("gpu", p.name, p.total_memory // 2**20, "MiB",\n'
                '          p.multi_processor_count, "SMs")\n'
                'print("cpus", __import__("os").cpu_count())\n')
        self.run('env', [PYTHON, '-c', code], 60, self.out / 'env.txt')
        smi = shutil.which('nvidia-smi')
        with open(self.out / 'env.txt', 'a') as f:
            f.write(f'\nplatform {platform.platform()}\n'
                    f'processor {_cpu_name()}\n')
            if smi:
                f.write(subprocess.run([smi], capture_output=True,
                                       text=True).stdout)

    def tests(self) -> None:
        self.run('tests', [PYTHON, '-m', 'pytest', '-q', '-p',
                           'no:cacheprovider', 'tests/gpu',
                           'tests/models/test_host_syncs.py'],
                 60 if self.tiny else 240, self.out / 'tests_gpu.txt')

    def throughput(self) -> None:
        out = self.out / 'throughput.json'
        # The dry run measures ZINC-subset only (processing MolHIV's 41k
        # molecules would take most of it; the reference step reads it).
        datasets = ['zinc_subset'] if self.tiny else ['zinc_subset',
                                                      'molhiv']
        common = [PYTHON, 'benchmarks/train_throughput.py', '--devices',
                  self.device, '--datasets', *datasets,
                  '--data-root', str(self.work / 'data'), '--zinc-source',
                  str(self.data['zinc']), '--molhiv-source',
                  str(self.data['molhiv']), '--workers', str(self.workers)]
        if self.tiny:
            common += ['--steps', '2', '--warmup', '1', *TINY_MODEL]
            runs = [('eager', ['--precision', '32', 'bf16',
                               '--batch-sizes', '16', '32'])]
        else:
            common += ['--steps', '10', '--warmup', '3']
            # Compiling costs about a minute per setting: the recipe's
            # setting of the goal only (ZINC-subset, bf16, batch 128).
            runs = [('eager', ['--precision', '32', 'bf16', '--batch-sizes',
                               '128', '256', '1024']),
                    ('compiled', ['--precision', 'bf16', '--compile', 'on',
                                  '--batch-sizes', '128', '--datasets',
                                  'zinc_subset'])]
        results = []
        for label, extra in runs:
            part = self.work / f'throughput_{label}.json'
            if self.run(f'throughput_{label}',
                        [*common, *extra, '--json', str(part)], 180 if self.tiny else 200):
                results += json.loads(part.read_text())
            out.write_text(json.dumps(results, indent=2))

    def reference(self) -> None:
        size = ['--num-graphs', '64', '--batch-size', '16', '--batches', '1',
                '--repeats', '1'] if self.tiny else \
            ['--num-graphs', '512', '--batch-size', '128', '--batches', '2',
             '--repeats', '3']
        self.run('reference', [PYTHON, 'benchmarks/compare_reference.py',
                               '--shared', str(self.data['shared']), *size,
                               '--output', str(self.out / 'reference.md')]
                 + (['--cpu-only'] if self.device == 'cpu' else []),
                 90 if self.tiny else 150)

    def train(self) -> None:
        steps = 4 if self.tiny else self._steps_that_fit()
        run_dir = self.work / 'runs' / 'zinc_subset'
        command = [PYTHON, 'scripts/train.py', '--config',
                   'configs/zinc_subset_sepnorm.yaml',
                   f'data.root={self.work / "data"}',
                   f'data.raw_source={self.data["zinc"]}',
                   f'output_dir={run_dir.parent}', f'run_name={run_dir.name}',
                   f'train.max_steps={steps}', f'optim.total_steps={steps}',
                   f'optim.warmup_steps={max(1, steps // 16)}',
                   f'data.num_workers={self.workers}',
                   f'train.accelerator={"gpu" if self.device == "cuda" else "cpu"}',
                   'train.progress_bar=false']
        if self.tiny:
            command += [*TINY_MODEL, 'data.batch_size=16',
                        'data.limit_train=64', 'data.limit_val=32',
                        'data.limit_test=32']
        self.run('train', command,
                 120 if self.tiny else self.args.train_seconds + 150)
        for name, target in (('results.json', 'train_results.json'),
                             ('metrics.csv', 'train_metrics.csv')):
            if (run_dir / name).is_file():
                shutil.copy(run_dir / name, self.out / target)

    def _steps_that_fit(self) -> int:
        r"""Steps of the ZINC-subset recipe in :obj:`--train-seconds` at
        the rate the throughput step measured (batch 128, bf16, eager),
        less a fifth for validation; 2,000 if it was not measured."""
        path = self.out / 'throughput.json'
        rates = [r['steps_per_s'] for r in (json.loads(path.read_text())
                                            if path.is_file() else [])
                 if r['dataset'] == 'zinc_subset' and r['batch_size'] == 128
                 and r['precision'] == 'bf16-mixed' and not r['compiled']]
        if not rates:
            return 2000
        return max(100, int(rates[0] * self.args.train_seconds * 0.8))

    def pipelines(self) -> None:
        results: dict = {}
        corpus = self.work / 'corpus'
        corpus.mkdir(exist_ok=True)
        smiles = [line.split(',')[0] for line in
                  (self.data['smiles'] / 'train.csv').read_text()
                  .splitlines()[1:]]
        (corpus / 'train.smi').write_text('\n'.join(smiles[:-500]) + '\n')
        (corpus / 'val.smi').write_text('\n'.join(smiles[-500:]) + '\n')
        steps = 3 if self.tiny else 150
        batch = 16 if self.tiny else 256
        pretrain_dir = self.work / 'runs' / 'pretrain'
        command = [PYTHON, 'scripts/pretrain.py', '--config',
                   'configs/pretrain/sepnorm.yaml', f'pretrain.corpus={corpus}',
                   f'output_dir={pretrain_dir.parent}',
                   f'run_name={pretrain_dir.name}',
                   f'train.max_steps={steps}', f'data.batch_size={batch}',
                   f'data.num_workers={self.workers}',
                   'data.limit_val=256', f'pretrain.val_every_n_steps={steps}',
                   'pretrain.scaler_molecules=500',
                   f'train.accelerator={"gpu" if self.device == "cuda" else "cpu"}',
                   'train.progress_bar=false']
        if self.tiny:
            command += TINY_MODEL
        start = time.perf_counter()
        if self.run('pretrain', command, 120 if self.tiny else 240):
            seconds = time.perf_counter() - start
            results['pretrain'] = dict(
                steps=steps, batch_size=batch, workers=self.workers,
                wall_s=round(seconds, 1),
                molecules_per_s_with_startup=round(steps * batch / seconds))
        input_csv = self.data['smiles'] / 'val.csv'
        count = sum(1 for _ in open(input_csv)) - 1
        for device in ([self.device, 'cpu'] if self.device != 'cpu' else
                       ['cpu']):
            output = self.work / f'predict_{device}.csv'
            start = time.perf_counter()
            if self.run(f'predict_{device}', [
                    PYTHON, 'scripts/predict.py', '--model', 'zinc',
                    '--input', str(input_csv), '--output', str(output),
                    '--device', device], 60 if self.tiny else 120):
                seconds = time.perf_counter() - start
                results[f'predict_{device}'] = dict(
                    molecules=count, wall_s=round(seconds, 2),
                    molecules_per_s_with_startup=round(count / seconds))
        (self.out / 'pipelines.json').write_text(json.dumps(results,
                                                            indent=2))


STEPS = ('env', 'tests', 'throughput', 'reference', 'train', 'pipelines')


def prepare_data(source: Path, work: Path) -> dict[str, Path]:
    r"""The data folders the steps read: ZINC-proxy's raw files (unpacked
    from ``ZINC-proxy-raw.tar.gz`` when that is what was brought), its
    SMILES, and MolHIV."""
    if not source.is_dir():
        raise SystemExit(f"--data {source} is not a folder; bring the data "
                         f"laid out as ../shared/data (see --help)")
    zinc = source / 'ZINC-proxy'
    archive = source / 'ZINC-proxy-raw.tar.gz'
    if archive.is_file():
        with tarfile.open(archive) as tar:
            tar.extractall(work, filter='data')
        zinc = work / 'ZINC-proxy'
    paths = dict(shared=source, zinc=zinc,
                 smiles=source / 'ZINC-proxy' / 'smiles',
                 molhiv=source / 'ogbg_molhiv')
    for name, path in paths.items():
        if not path.is_dir():
            raise SystemExit(f"Missing {path}: --data must hold ZINC-proxy/ "
                             f"(raw/ or ZINC-proxy-raw.tar.gz, and smiles/) "
                             f"and ogbg_molhiv/")
    return paths


def _text(output) -> str:
    # On a timeout, subprocess gives what was read as bytes even in text
    # mode.
    if isinstance(output, bytes):
        return output.decode(errors='replace')
    return output or ''


def _cpu_name() -> str:
    try:
        for line in open('/proc/cpuinfo'):
            if line.startswith('model name'):
                return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or 'unknown'


def main(argv=None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    chosen = STEPS if args.steps is None else tuple(args.steps.split(','))
    unknown = set(chosen) - set(STEPS)
    if unknown:
        raise SystemExit(f"Unknown steps {sorted(unknown)}; choose from "
                         f"{', '.join(STEPS)}")
    with tempfile.TemporaryDirectory() as work:
        check = Check(args, Path(work))
        for step in STEPS:
            if step in chosen:
                getattr(check, step)()
        check.report['finished'] = time.strftime('%Y-%m-%d %H:%M:%S')
        check.save()
    failed = [name for name, runs in check.report['steps'].items()
              if any(run['status'] != 'ok' for run in runs)]
    print(f"{len(check.report['steps']) - len(failed)} steps ok"
          + (f"; failed: {', '.join(failed)}" if failed else ''))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
