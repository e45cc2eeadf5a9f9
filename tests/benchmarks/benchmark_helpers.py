"""Helpers of the benchmark script tests."""
import importlib.util
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / 'benchmarks'


def script_module(name: str):
    """The module benchmarks/<name>.py, imported from its file."""
    spec = importlib.util.spec_from_file_location(
        name, BENCHMARKS / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def script_main(name: str):
    """The main() of benchmarks/<name>.py, imported from its file."""
    return script_module(name).main
