#!/usr/bin/env python
r"""The GPU check: one prepared run on a fresh single-GPU machine that says
whether this library works there and how fast it is.

Steps, in order of what the figures need most, each a subprocess with its
own time limit (a step that fails or runs out of time loses nothing of the
others):

1. ``env``: the machine (``nvidia-smi``, CPU, versions);
2. ``tests``: ``tests/gpu`` and ``tests/models/test_host_syncs.py``
   (CPU/CUDA parity, bf16, no host sync, compile, resume, evaluate,
   Predictor, two processes on one GPU); on a GPU a skipped test fails the
   step;
3. ``throughput``: training steps/s, graphs/s and peak memory of the
   ZINC-subset and MolHIV recipes at their batch sizes
   (``benchmarks/train_throughput.py``), fp32 and bf16, one and four size
   buckets;
4. ``train``: a timed real ZINC-subset training of the recipe
   (``configs/zinc_subset_sepnorm.yaml``), as many steps as fit in
   ``--train-seconds`` at the rate step 3 measured, with validation and
   test MAE;
5. ``reference``: the Hugging Face reference Graphormer beside ours on the
   same batches (``benchmarks/compare_reference.py``);
6. ``throughput_compiled``: the ZINC-subset recipe compiled (bf16);
7. ``throughput_large``: batches of 1,024 graphs (bf16);
8. ``pipelines``: pretraining throughput (molecules/s) with featurizing
   workers on a corpus of the ZINC SMILES, and prediction throughput from
   SMILES, GPU against CPU.

Everything goes to ``--out`` as at most 8 files: ``env.txt``,
``tests_gpu.txt``, ``throughput.json`` (steps 3, 6 and 7; a run stopped by
its limit keeps the settings it finished), ``reference.md``,
``train_results.json``, ``train_metrics.csv``, ``pipelines.json`` and
``gpu_check.json`` (each step's status, seconds, command and the tail of
its output).

The steps share ``--budget-seconds`` (500 by default, for a call of
``timeout_s`` 530: starting the machine and carrying the 62 MiB there and
back took about 260 s of the 900 s of device time of the first GPU run):
each gets at most what is left, and one with under 10 s left is skipped and
recorded so. The machine has no internet and lacks rdkit, ogb and the
Hugging Face reference: bring them as wheels, and the data (see
:data:`DATA_PATHS`) laid out as ``../shared/data`` or as one
``data.tar.gz``. ``python benchmarks/gpu_bundle.py`` fills ``.whl/`` and
``.device-data/`` here (both ignored by git); then, on the GPU machine::

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
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

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
    parser.add_argument('--train-seconds', type=float, default=60.0,
                        help='Training time of the timed ZINC-subset run.')
    parser.add_argument('--budget-seconds', type=float, default=500.0,
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
            log: Optional[Path] = None, env: Optional[dict] = None,
            verdict: Optional[Callable[[str], Optional[str]]] = None
            ) -> bool:
        r"""Runs one step's :obj:`command` (its own time limit, :obj:`env`
        added to the environment) and records its status; the output goes
        to :obj:`log` when given. :obj:`verdict` reads the output of a
        command that succeeded and returns why the step failed anyway, or
        :obj:`None`."""
        start = time.perf_counter()
        left = self.deadline - start
        if left < 10:
            self._record(name, 'skipped: the time budget is spent', 0.0,
                         command, '')
            return False
        timeout = min(timeout, left)
        env = dict(os.environ, PYTHONUNBUFFERED='1',
                   GRAPHORMER_DATA_ROOT=str(self.work / 'data'),
                   **(env or {}))
        env['PYTHONPATH'] = os.pathsep.join(
            p for p in (str(REPO), env.get('PYTHONPATH')) if p)
        try:
            result = subprocess.run(command, cwd=REPO, env=env, text=True,
                                    capture_output=True, timeout=timeout)
            status = 'ok' if result.returncode == 0 else \
                f'failed (exit {result.returncode})'
            output = result.stdout + result.stderr
            reason = verdict(output) if verdict and status == 'ok' else None
            if reason:
                status = f'failed: {reason}'
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
        # On a GPU every test must run: a skip (missing data, say) would
        # pass the step with nothing checked, as in the first GPU run.
        # The CPU dry run's limit leaves room for a busy machine: 32 s
        # alone, past 60 s beside a CI run and a training run.
        self.run('tests', [PYTHON, '-m', 'pytest', '-q', '-rs', '-p',
                           'no:cacheprovider', 'tests/gpu',
                           'tests/models/test_host_syncs.py'],
                 150, self.out / 'tests_gpu.txt',
                 env=dict(GRAPHORMER_SHARED_DATA=str(self.data['shared'])),
                 verdict=None if self.device == 'cpu' else skipped_tests)

    def throughput(self) -> None:
        r"""Eager steps/s of both recipes at their batch sizes, fp32 and
        bf16, with one size bucket (the GPU default) and with four."""
        if self.tiny:
            # ZINC-subset only (processing MolHIV's 41k molecules would take
            # most of the dry run; the reference step reads it).
            self._throughput('throughput_eager', [
                '--precision', '32', 'bf16', '--batch-sizes', '16', '32'],
                180, datasets=('zinc_subset', ))
        else:
            self._throughput('throughput_eager', [
                '--precision', '32', 'bf16', '--buckets', '1', '4'], 100)

    def throughput_compiled(self) -> None:
        r"""The ZINC-subset recipe compiled (bf16); compiling takes about a
        minute per setting. Not in the dry run (tests/models/test_compile.py
        compiles on the CPU)."""
        if not self.tiny:
            self._throughput('throughput_compiled', [
                '--precision', 'bf16', '--compile', 'on'], 100,
                datasets=('zinc_subset', ))

    def throughput_large(self) -> None:
        r"""Batches of 1,024 graphs (bf16, one and four buckets): how far
        the GPU is from saturated at the recipes' batch sizes."""
        if not self.tiny:
            self._throughput('throughput_large', [
                '--precision', 'bf16', '--batch-sizes', '1024', '--buckets',
                '1', '4'], 80)

    def _throughput(self, label: str, extra: list[str], timeout: float,
                    datasets: tuple[str, ...] = ('zinc_subset', 'molhiv')
                    ) -> None:
        r"""One run of ``train_throughput.py`` on :obj:`datasets`; its
        settings (those it finished, if stopped by the time limit) join
        ``throughput.json``."""
        common = [PYTHON, 'benchmarks/train_throughput.py', '--devices',
                  self.device, '--datasets', *datasets,
                  '--data-root', str(self.work / 'data'), '--zinc-source',
                  str(self.data['zinc']), '--molhiv-source',
                  str(self.data['molhiv']), '--workers', str(self.workers)]
        common += (['--steps', '2', '--warmup', '1', *TINY_MODEL]
                   if self.tiny else ['--steps', '10', '--warmup', '3'])
        part = self.work / f'{label}.json'
        self.run(label, [*common, *extra, '--json', str(part)], timeout)
        out = self.out / 'throughput.json'
        results = json.loads(out.read_text()) if out.is_file() else []
        if part.is_file():
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
                 120 if self.tiny else self.args.train_seconds + 60)
        for name, target in (('results.json', 'train_results.json'),
                             ('metrics.csv', 'train_metrics.csv')):
            if (run_dir / name).is_file():
                shutil.copy(run_dir / name, self.out / target)

    def _steps_that_fit(self) -> int:
        r"""Steps of the ZINC-subset recipe in :obj:`--train-seconds` at
        the rate the throughput step measured for it (its batch size, bf16,
        eager, one bucket as the trainer's loader makes on a GPU), less a
        fifth for validation; 2,000 if it was not measured."""
        path = self.out / 'throughput.json'
        batch_size = recipe_batch_size('zinc_subset_sepnorm.yaml')
        rates = [r['steps_per_s'] for r in (json.loads(path.read_text())
                                            if path.is_file() else [])
                 if r['dataset'] == 'zinc_subset'
                 and r['batch_size'] == batch_size and r['buckets'] == 1
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
        if self.run('pretrain', command, 120 if self.tiny else 90):
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
                    '--device', device], 60):
                seconds = time.perf_counter() - start
                results[f'predict_{device}'] = dict(
                    molecules=count, wall_s=round(seconds, 2),
                    molecules_per_s_with_startup=round(count / seconds))
        (self.out / 'pipelines.json').write_text(json.dumps(results,
                                                            indent=2))


#: In order of what the figures need most: a step the time budget no
#: longer reaches is skipped.
STEPS = ('env', 'tests', 'throughput', 'train', 'reference',
         'throughput_compiled', 'throughput_large', 'pipelines')


def recipe_batch_size(config: str) -> int:
    from graphormer_sepnorm.training.config import load_config
    return int(load_config(REPO / 'configs' / config, [], env={})['data']
               ['batch_size'])


def skipped_tests(output: str) -> Optional[str]:
    r"""Why a pytest run that passed checked less than it should: the
    count of skipped tests in its summary line, or :obj:`None`."""
    match = re.search(r'(\d+) skipped', output)
    if match:
        return (f'{match.group(1)} tests skipped (the reasons are in '
                f'tests_gpu.txt)')
    return None


#: What the steps read under ``--data`` (laid out as ../shared/data):
#: ZINC-proxy's raw files and SMILES, MolHIV, and the real ZINC-subset
#: graphs the GPU tests compare on.
DATA_PATHS = ('ZINC-proxy/raw', 'ZINC-proxy/smiles', 'ogbg_molhiv',
                'ZINC/subset_partial_pyg/val_arrays.npz')
#: The one archive of :data:`DATA_PATHS` that gpu_bundle.py packs.
DATA_ARCHIVE = 'data.tar.gz'


def prepare_data(source: Path, work: Path) -> dict[str, Path]:
    r"""The data folders the steps read, from :obj:`source`: a folder laid
    out as ../shared/data, or one holding :data:`DATA_ARCHIVE` (unpacked
    into :obj:`work`)."""
    if not source.is_dir():
        raise SystemExit(f"--data {source} is not a folder; bring the data "
                         f"laid out as ../shared/data (see --help)")
    if (source / DATA_ARCHIVE).is_file():
        with tarfile.open(source / DATA_ARCHIVE) as tar:
            tar.extractall(work / 'shared', filter='data')
        source = work / 'shared'
    missing = [name for name in DATA_PATHS if not (source / name).exists()]
    if missing:
        raise SystemExit(f"Missing {', '.join(missing)} in {source}: --data "
                         f"must hold {', '.join(DATA_PATHS)}, or the "
                         f"{DATA_ARCHIVE} of benchmarks/gpu_bundle.py")
    return dict(shared=source, zinc=source / 'ZINC-proxy',
                smiles=source / 'ZINC-proxy' / 'smiles',
                molhiv=source / 'ogbg_molhiv')


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
