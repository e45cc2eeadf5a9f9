r"""The steps of the GPU check (``benchmarks/gpu_check.py``), in the order
it runs them: each builds its command, runs it as a subprocess
(:class:`~gpu_check_runner.StepRunner`) and keeps its figures in the output
folder."""
from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
import time
from typing import Optional

from device_load import LoadSampler
from gpu_check_plan import (PRETRAIN_SECONDS, TINY_MODEL, ZINC_BATCH_SIZES,
                            recipe_batch_size)
from gpu_check_runner import PYTHON, StepRunner


class Check(StepRunner):
    r"""Runs the steps into :obj:`args.out`, one subprocess each: one
    method a name of :data:`~gpu_check_plan.STEPS`."""
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
                   'configs/pretrain/sepnorm.yaml',
                   f'pretrain.corpus={corpus}',
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


def skipped_tests(output: str) -> Optional[str]:
    r"""Why a pytest run that passed checked less than it should: the
    count of skipped tests in its summary line, or :obj:`None`."""
    match = re.search(r'(\d+) skipped', output)
    if match:
        return (f'{match.group(1)} tests skipped (the reasons are in '
                f'tests_gpu.txt)')
    return None


def _cpu_name() -> str:
    try:
        for line in open('/proc/cpuinfo'):
            if line.startswith('model name'):
                return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or 'unknown'

