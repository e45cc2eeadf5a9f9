"""Helpers of the benchmark script tests."""
import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / 'benchmarks'


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
