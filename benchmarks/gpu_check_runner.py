r"""How the GPU check (``benchmarks/gpu_check.py``) runs a step: one
subprocess within the step's limit or what is left of the budget, its
status, seconds, limit, command and output tail recorded in
``gpu_check.json`` after every step."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Optional

from device_data import prepare_data
from gpu_check_plan import LIMITS, REPO, TINY_LIMITS

PYTHON = sys.executable


class StepRunner:
    r"""The check's state (its limits, budget, data and report) and the
    running of one step; :class:`gpu_check_steps.Check` adds the steps.

    Args:
        args (argparse.Namespace): The parsed command line of
            ``gpu_check.py``.
        work (Path): A scratch folder: the unpacked data, the runs.
    """
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

    def run(self, name: str, command: list[str], log: Optional[Path] = None,
            env: Optional[dict] = None, first_path: Optional[str] = None,
            verdict: Optional[Callable[[str], Optional[str]]] = None
            ) -> bool:
        r"""Runs step :obj:`name`'s :obj:`command` within its limit of
        :data:`~gpu_check_plan.LIMITS` (or what is left of the budget),
        :obj:`env` added to the environment and :obj:`first_path` first on
        its ``PYTHONPATH``, and records its status; the output goes to
        :obj:`log` when given. :obj:`verdict` reads the output of a command
        that succeeded and returns why the step failed anyway, or
        :obj:`None`."""
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
        r"""Writes the report to ``gpu_check.json`` in the output folder."""
        (self.out / 'gpu_check.json').write_text(
            json.dumps(self.report, indent=2))

    def accelerator(self) -> str:
        r"""Lightning's ``train.accelerator`` for the check's device."""
        return 'gpu' if self.device == 'cuda' else 'cpu'


def _text(output) -> str:
    # On a timeout, subprocess gives what was read as bytes even in text
    # mode.
    if isinstance(output, bytes):
        return output.decode(errors='replace')
    return output or ''
