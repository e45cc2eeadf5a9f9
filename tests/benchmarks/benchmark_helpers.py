"""Helpers of the benchmark script tests."""
import importlib.util
import os
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / 'benchmarks'


def script_module(name: str):
    """The module benchmarks/<name>.py, imported from its file (and
    registered, as dataclasses need their module in sys.modules)."""
    spec = importlib.util.spec_from_file_location(
        name, BENCHMARKS / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def script_main(name: str):
    """The main() of benchmarks/<name>.py, imported from its file."""
    return script_module(name).main


def relative(path) -> str:
    """:obj:`path` relative to the repository root, where the benchmark
    scripts run."""
    return os.path.relpath(path, REPO)


def chemprop_plan(folder, **extra):
    """A plan of chemprop baseline runs (two seeds, one trial) written to
    ``folder/chemprop.yaml``, its keys updated with :obj:`extra`."""
    plan = folder / 'chemprop.yaml'
    plan.write_text(yaml.safe_dump({
        'destination': relative(folder / 'kept'),
        'chemprop': {'dataset': 'molhiv', 'source': '../shared/data/x',
                     'train_molecules': 2000},
        'seeds': [0, 1], 'trials': {'small': ['--max-epochs', '3']},
        **extra}))
    return plan
