#!/usr/bin/env python
r"""The GPU check: one prepared run on a fresh single-GPU machine that says
whether this library works there and how fast it is.

``benchmarks/device_run.sh`` is the device command: it installs the carried
wheels and runs this script. Steps, in this order, each a subprocess with
its own time limit (:data:`LIMITS`, which add up to the 540 s budget of a
call of ``timeout_s`` 570; a step that fails or runs out of time loses
nothing of the others), each writing its figures as it goes:

1. ``env``: the machine (``nvidia-smi``, CPU, versions, the reference's
   transformers on its own path); ``tests``: ``tests/gpu`` and
   ``tests/models/test_host_syncs.py``; on a GPU a skipped test fails the
   step;
2. ``speed``: training steps/s (forward, backward, clipping, AdamW) at each
   recipe's batch size (ZINC 128 and the ZINC-subset recipe's 256, MolHIV
   128), fp32 and bf16, ours beside the Hugging Face reference on the same
   batches (``benchmarks/compare_reference.py --devices cuda``, with the
   reference's transformers first on its path: ``--reference-path``);
3. ``train``: a timed real ZINC-subset training of the recipe
   (``configs/zinc_subset_sepnorm.yaml``) for ``--train-seconds``
   (``train.max_minutes``; the schedule spans the steps that fit at the
   rate step 2 measured), with validation and test MAE;
4. ``compiled``: the ZINC-subset recipe eager, then with its regions
   compiled (bf16, ``GraphormerSepNorm.compile_regions``), compile time
   apart from the steady steps/s;
5. ``pretrain`` and ``predict``: pretraining and prediction molecules/s,
   with the GPU's and the CPU cores' utilization and what bounds them
   (``benchmarks/device_load.py``).

Everything goes to ``--out`` as at most 8 files: ``env.txt``,
``tests_gpu.txt``, ``reference.md`` (rewritten after every row),
``train_results.json``, ``train_metrics.csv``, ``throughput.json`` (step
4), ``pipelines.json`` and ``gpu_check.json`` (each step's status,
seconds, limit, command and the tail of its output, rewritten after every
step).

The machine has no internet and lacks rdkit, ogb and the Hugging Face
reference: ``python benchmarks/gpu_bundle.py`` packs them as wheels and the
data (see :data:`DATA_PATHS`) as one ``data.tar.xz`` into ``.whl/`` and
``.device-data/`` (both ignored by git), which the call carries.

``--device cpu --tiny`` is the rehearsal: every step on the CPU with a tiny
model and a few steps (:data:`TINY_LIMITS`), as
``benchmarks/device_rehearsal.sh`` runs it in CI on a copy of what travels.
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
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
# The package is not installed on the device machine: the check imports it
# from the tree (recipe_batch_size), like its steps do.
sys.path[:0] = [str(Path(__file__).resolve().parent), str(REPO)]
from device_data import prepare_data  # noqa: E402
from device_load import LoadSampler  # noqa: E402

#: The recipe's model, shrunk for the rehearsal.
TINY_MODEL = ['model.num_layers=1', 'model.hidden_channels=16',
              'model.ffn_channels=16', 'model.num_heads=2']

#: Each step's time limit (s) on the GPU, in the order they run; they add
#: up to the default ``--budget-seconds``. Measured on the H200 of
#: 2026-11-28: env 23 s, the tests over 80 s, speed 35 s, predict 9 s;
#: compiling the recipe took over 140 s (90 to over 190 s before).
LIMITS = {'env': 30, 'tests': 120, 'speed': 45, 'train': 130,
          'compiled': 155, 'pretrain': 40, 'predict': 20}
#: The rehearsal's limits (``--tiny``): caps for two CPU cores that other
#: jobs may share (at a load of 8 to 10 on two cores the env step took over
#: 90 s and the tests 120 s), not what it takes.
TINY_LIMITS = {'env': 150, 'tests': 240, 'speed': 240, 'train': 300,
               'compiled': 300, 'pretrain': 240, 'predict': 120}
#: The steps of :data:`LIMITS` that each method of :class:`Check` runs.
STEPS = {'env': ('env', ), 'tests': ('tests', ), 'speed': ('speed', ),
         'train': ('train', ), 'compiled': ('compiled', ),
         'pipelines': ('pretrain', 'predict')}
#: ZINC batch sizes of the speed step: the goal's 128 and the ZINC-subset
#: recipe's (configs/base/zinc_subset.yaml).
ZINC_BATCH_SIZES = (128, 256)
#: Training time of the pretraining step (s), within its limit.
PRETRAIN_SECONDS = 20


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--out', type=Path, required=True,
                        help='Output folder (at most 8 files).')
    parser.add_argument('--data', type=Path,
                        default=REPO.parent / 'shared' / 'data',
                        help='Data folder laid out as ../shared/data, or '
                        'holding the data.tar.xz of gpu_bundle.py.')
    parser.add_argument('--device', default='cuda', choices=['cuda', 'cpu'])
    parser.add_argument('--tiny', action='store_true',
                        help='Rehearsal: tiny model, a few steps.')
    parser.add_argument('--steps', default=None,
                        help=f"Only these steps, comma-separated, of "
                        f"{', '.join(STEPS)}.")
    parser.add_argument('--train-seconds', type=float, default=90.0,
                        help='Training time of the timed ZINC-subset run.')
    parser.add_argument('--budget-seconds', type=float, default=None,
                        help='Wall time for all steps (default: the sum of '
                        'the step limits, 540 s on a GPU): each step gets '
                        'at most what is left, and a step with under 10 s '
                        'left is skipped (recorded as such).')
    parser.add_argument('--spent-seconds', type=float, default=0.0,
                        help='Seconds of the budget spent before the check '
                        '(device_run.sh: installing the wheels).')
    parser.add_argument('--workers', type=int, default=None,
                        help='Loader workers (default: CPUs - 2, at most 8).')
    parser.add_argument('--reference-path', default=os.environ.get(
        'GRAPHORMER_REFERENCE_PATH'), help='Folder holding the reference\'s '
        'transformers 4.57 (device_run.sh installs .whl/reference/ there), '
        'put first on the speed step\'s PYTHONPATH alone (default: '
        '$GRAPHORMER_REFERENCE_PATH; none: the environment\'s '
        'transformers).')
    return parser.parse_args(argv)


class Check:
    r"""Runs the steps into :obj:`args.out`, one subprocess each."""
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.out = args.out
        self.work = work
        self.tiny = args.tiny
        self.device = args.device
        self.limits = TINY_LIMITS if args.tiny else LIMITS
        self.workers = (args.workers if args.workers is not None else
                        max(0, min(8, (os.cpu_count() or 2) - 2)))
        self.report: dict = {'device': args.device, 'tiny': args.tiny,
                             'started': time.strftime('%Y-%m-%d %H:%M:%S'),
                             'limits': self.limits, 'steps': {}}
        self.data = prepare_data(args.data, work)
        budget = (args.budget_seconds if args.budget_seconds is not None
                  else sum(self.limits.values())) - args.spent_seconds
        self.report['budget_s'] = budget
        self.deadline = time.perf_counter() + budget

    # -------------------------------------------------------------- plumbing
    def run(self, name: str, command: list[str], log: Optional[Path] = None,
            env: Optional[dict] = None, first_path: Optional[str] = None,
            verdict: Optional[Callable[[str], Optional[str]]] = None
            ) -> bool:
        r"""Runs step :obj:`name`'s :obj:`command` within its limit of
        :data:`LIMITS` (or what is left of the budget), :obj:`env` added to
        the environment and :obj:`first_path` first on its ``PYTHONPATH``,
        and records its status; the output goes to :obj:`log` when given.
        :obj:`verdict` reads the output of a command that succeeded and
        returns why the step failed anyway, or :obj:`None`."""
        start = time.perf_counter()
        left = self.deadline - start
        if left < 10:
            self._record(name, 'skipped: the time budget is spent', 0.0,
                         command, '')
            return False
        timeout = min(self.limits[name], left)
        env = dict(os.environ, PYTHONUNBUFFERED='1',
                   GRAPHORMER_DATA_ROOT=str(self.work / 'data'),
                   **(env or {}))
        env['PYTHONPATH'] = os.pathsep.join(
            p for p in (first_path, str(REPO), env.get('PYTHONPATH')) if p)
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
        self._record(name, status, seconds, command, output, timeout)
        return status == 'ok'

    def _record(self, name: str, status: str, seconds: float,
                command: list[str], output: str, limit: float = 0.0) -> None:
        self.report['steps'].setdefault(name, []).append(dict(
            status=status, seconds=round(seconds, 1), limit_s=round(limit),
            command=' '.join(command), output_tail=output[-3000:]))
        print(f'[{name}] {status} in {seconds:.0f} s', flush=True)
        self.save()

    def save(self) -> None:
        (self.out / 'gpu_check.json').write_text(
            json.dumps(self.report, indent=2))

    def accelerator(self) -> str:
        return 'gpu' if self.device == 'cuda' else 'cpu'

    # ----------------------------------------------------------------- steps
    def env(self) -> None:
        r"""Versions of what the steps import, the GPU and the reference's
        transformers on its own path, then the CPU and ``nvidia-smi``."""
        code = ('import platform, torch, torch_geometric, lightning\n'
                'print("python", platform.python_version())\n'
                'print("torch", torch.__version__, "cuda", torch.version.cuda)'
                '\nprint("torch_geometric", torch_geometric.__version__)\n'
                'print("lightning", lightning.__version__)\n'
                'import torchmetrics  # Imports transformers when present.\n'
                'for name in ("rdkit", "ogb", "transformers", "numba"):\n'
                '    module = __import__(name)\n'
                '    print(name, getattr(module, "__version__", "?"))\n'
                'if torch.cuda.is_available():\n'
                '    p = torch.cuda.get_device_properties(0)\n'
                '    print("gpu", p.name, p.total_memory // 2**20, "MiB",\n'
                '          p.multi_processor_count, "SMs")\n'
                'print("cpus", __import__("os").cpu_count())\n')
        # The reference's transformers on its own path, read from its
        # metadata (importing it again would take half the step).
        code += ('import importlib.metadata as m, sys\n'
                 'for d in m.distributions(path=sys.argv[1:2]):\n'
                 '    print("reference", d.metadata["Name"], d.version)\n')
        log = self.out / 'env.txt'
        self.run('env', [PYTHON, '-c', code, self.args.reference_path or ''],
                 log)
        smi = shutil.which('nvidia-smi')
        with open(log, 'a') as f:
            f.write(f'\nplatform {platform.platform()}\n'
                    f'processor {_cpu_name()}\n')
            if smi:
                f.write(subprocess.run([smi], capture_output=True,
                                       text=True).stdout)

    def tests(self) -> None:
        # On a GPU every test must run: a skip (missing data, say) would
        # pass the step with nothing checked, as in the first GPU run.
        # One worker per file on a GPU; on the CPU everything but the
        # host-sync counts skips, and starting workers costs more.
        workers = '0' if self.device == 'cpu' else '3'
        # -v names every test as it ends, so a step that runs out of time
        # still says which failed.
        self.run('tests', [PYTHON, '-m', 'pytest', '-v', '-rfEs',
                           '--tb=short', '-p',
                           'no:cacheprovider', '-n', workers, 'tests/gpu',
                           'tests/models/test_host_syncs.py'],
                 self.out / 'tests_gpu.txt',
                 env=dict(GRAPHORMER_SHARED_DATA=str(self.data['shared']),
                          GRAPHORMER_PRINT_FAILURES_AT_ONCE='1'),
                 verdict=None if self.device == 'cpu' else skipped_tests)

    def speed(self) -> None:
        r"""Ours beside the reference, training steps at the recipes' batch
        sizes, fp32 and bf16 (``compare_reference.py``, CUDA rows only on
        a GPU); the rows also go to ``speed.json`` in the work folder for
        :meth:`_steps_that_fit`."""
        if self.tiny:
            size = ['--zinc-batch-sizes', '8', '16', '--molhiv-batch-sizes',
                    '8', '--batches', '1', '--repeats', '1', '--num-layers',
                    '1']
        else:
            size = ['--zinc-batch-sizes', *map(str, ZINC_BATCH_SIZES),
                    '--batches', '2', '--repeats', '3']
        self.run('speed', [PYTHON, 'benchmarks/compare_reference.py',
                           '--shared', str(self.data['shared']), *size,
                           '--devices', self.device, '--output',
                           str(self.out / 'reference.md'), '--json',
                           str(self.work / 'speed.json')],
                 first_path=self.args.reference_path)

    def train(self) -> None:
        # The step count sets the schedule; train.max_minutes stops the run
        # in time whatever the rate (the first GPU run's estimate was 1.6x
        # too many steps for its limit). The rehearsal plans the steps too,
        # so that it runs the code the GPU runs (its import of the package
        # failed on the device), then takes 4.
        steps = self._steps_that_fit()
        if self.tiny:
            steps = 4
        run_dir = self.work / 'runs' / 'zinc_subset'
        command = [PYTHON, 'scripts/train.py', '--config',
                   'configs/zinc_subset_sepnorm.yaml',
                   f'data.root={self.work / "data"}',
                   f'data.raw_source={self.data["zinc"]}',
                   f'output_dir={run_dir.parent}', f'run_name={run_dir.name}',
                   f'train.max_steps={steps}', f'optim.total_steps={steps}',
                   f'train.max_minutes={self.args.train_seconds / 60:.3f}',
                   f'optim.warmup_steps={max(1, steps // 16)}',
                   f'train.val_every_n_steps={max(1, steps // 8)}',
                   f'data.num_workers={self.workers}',
                   f'train.accelerator={self.accelerator()}',
                   'train.progress_bar=false']
        if self.tiny:
            command += [*TINY_MODEL, 'data.batch_size=16',
                        'data.limit_train=64', 'data.limit_val=32',
                        'data.limit_test=32']
        self.run('train', command)
        for name, target in (('results.json', 'train_results.json'),
                             ('metrics.csv', 'train_metrics.csv')):
            if (run_dir / name).is_file():
                shutil.copy(run_dir / name, self.out / target)

    def _steps_that_fit(self) -> int:
        r"""Steps of the ZINC-subset recipe in :obj:`--train-seconds` at
        the rate the speed step measured for its model (SepNorm, the
        recipe's batch size, bf16, CUDA), halved for the loader and the
        validations; 2,000 if it was not measured."""
        path = self.work / 'speed.json'
        batch_size = recipe_batch_size('zinc_subset_sepnorm.yaml')
        times = [r['ours'] for r in (json.loads(path.read_text())
                                     if path.is_file() else [])
                 if r.get('dataset') == 'ZINC'
                 and r.get('batch_size') == batch_size
                 and r.get('device') == 'cuda' and r.get('norm') == 'SepNorm'
                 and r.get('precision') == 'bf16'
                 and r['unit'] == 'ms/step (wall)']
        if not times:
            return 2000
        return max(100, int(1000 / times[0] * self.args.train_seconds * 0.5))

    def compiled(self) -> None:
        r"""The ZINC-subset recipe at the goal's batch of 128 (bf16), on
        the data the train step processed, eager and then with its regions
        compiled (``GraphormerSepNorm.compile_regions``; the whole forward
        did not compile within 140 s on the H200): ``train_throughput.py``
        times the first step (compiling) apart from the steady steps."""
        command = [PYTHON, 'benchmarks/train_throughput.py', '--devices',
                   self.device, '--datasets', 'zinc_subset', '--data-root',
                   str(self.work / 'data'), '--zinc-source',
                   str(self.data['zinc']), '--workers', str(self.workers),
                   '--precision', 'bf16', '--compile', 'off', 'regions',
                   '--json',
                   str(self.out / 'throughput.json')]
        # The rehearsal traces and differentiates the graph but leaves out
        # inductor's C++ code generation (minutes on two CPU cores).
        command += (['--batch-sizes', '16', '--compile-backend', 'aot_eager',
                     '--steps', '2', '--warmup', '1', *TINY_MODEL]
                    if self.tiny else
                    ['--batch-sizes', '128', '--steps', '30', '--warmup',
                     '5'])
        self.run('compiled', command)

    def pipelines(self) -> None:
        r"""Pretraining and prediction molecules/s from SMILES, with the
        GPU's and the CPU cores' utilization meanwhile and what bounds each
        (:class:`~device_load.LoadSampler`); ``pipelines.json`` after
        each."""
        results: dict = {}
        corpus = self.work / 'corpus'
        corpus.mkdir(exist_ok=True)
        train_csv = self.data['smiles'] / 'train.csv'
        smiles = [line.split(',')[0] for line in
                  train_csv.read_text().splitlines()[1:]]
        (corpus / 'train.smi').write_text('\n'.join(smiles[:-500]) + '\n')
        (corpus / 'val.smi').write_text('\n'.join(smiles[-500:]) + '\n')
        # As many steps as fit in PRETRAIN_SECONDS (train.max_minutes);
        # the run's results.json says how many ran.
        steps = 3 if self.tiny else 20000
        batch = 16 if self.tiny else 256
        validate = 3 if self.tiny else 100
        pretrain_dir = self.work / 'runs' / 'pretrain'
        command = [PYTHON, 'scripts/pretrain.py', '--config',
                   'configs/pretrain/sepnorm.yaml', f'pretrain.corpus={corpus}',
                   f'output_dir={pretrain_dir.parent}',
                   f'run_name={pretrain_dir.name}',
                   f'train.max_steps={steps}', f'data.batch_size={batch}',
                   f'train.max_minutes={PRETRAIN_SECONDS / 60:.3f}',
                   f'data.num_workers={self.workers}', 'data.limit_val=256',
                   f'pretrain.val_every_n_steps={validate}',
                   'pretrain.scaler_molecules=500',
                   f'train.accelerator={self.accelerator()}',
                   'train.progress_bar=false']
        if self.tiny:
            command += TINY_MODEL
        path = self.out / 'pipelines.json'
        start = time.perf_counter()
        with LoadSampler() as load:
            ok = self.run('pretrain', command)
        if ok:
            seconds = time.perf_counter() - start
            run = json.loads((pretrain_dir / 'results.json').read_text())
            results['pretrain'] = dict(
                steps=run['steps'], batch_size=batch, workers=self.workers,
                wall_s=round(seconds, 1),
                molecules_per_s_training=round(
                    run['throughput_graphs_per_s'] or 0),
                molecules_per_s_with_startup=round(
                    run['graphs_seen'] / seconds),
                **load.summary())
            path.write_text(json.dumps(results, indent=2))
        count = 200 if self.tiny else len(smiles)
        source = self.work / 'predict.csv'
        source.write_text('smiles\n' + '\n'.join(smiles[:count]) + '\n')
        output = self.work / 'predictions.csv'
        start = time.perf_counter()
        with LoadSampler() as load:
            ok = self.run('predict', [
                PYTHON, 'scripts/predict.py', '--model', 'zinc', '--input',
                str(source), '--output', str(output), '--device',
                self.device, '--num-workers', str(max(1, self.workers))])
        if ok:
            seconds = time.perf_counter() - start
            results['predict'] = dict(
                device=self.device, molecules=count, wall_s=round(seconds, 2),
                molecules_per_s_with_startup=round(count / seconds),
                **load.summary())
            path.write_text(json.dumps(results, indent=2))


def recipe_batch_size(config: str) -> int:
    r"""``data.batch_size`` of the shipped config :obj:`config`."""
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
    chosen = (tuple(STEPS) if args.steps is None else
              tuple(args.steps.split(',')))
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
