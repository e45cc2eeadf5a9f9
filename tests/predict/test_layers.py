"""The modules of graphormer_sepnorm.predict import one way: base <- model
<- files <- command line, and no module imports one that imports it, even
inside a function or under TYPE_CHECKING (read from the source with ast, so
every import counts, not only those that run)."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

PACKAGE = REPO / 'graphormer_sepnorm' / 'predict'

#: Each module's layer; a module may import modules of its own layer or of a
#: lower one (as the package docstring lists them).
LAYERS = {
    'prediction': 0, 'molecules': 0, 'graphs': 0, 'workers': 0,
    'predictor': 1, 'ensemble': 1, 'loading': 1,
    'readers': 2, 'writers': 2, 'run_record': 2, 'shards': 2, 'top_k': 2,
    'embeddings': 2, 'pipeline': 2, 'merge': 2,
    'cli': 3,
    '__init__': 4,
}


def imports_within(path: Path, package: str = 'graphormer_sepnorm.predict'
                   ) -> set[str]:
    """The modules of the package that the file imports anywhere."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:  # from .x import y / from . import x
                names = ([node.module.split('.')[0]] if node.module else
                         [alias.name for alias in node.names])
            elif node.level == 0 and (node.module or '').startswith(
                    package + '.'):
                names = [node.module[len(package) + 1:].split('.')[0]]
            elif node.level == 0 and node.module == package:
                names = [alias.name for alias in node.names]
            else:
                continue
            found.update(names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(package + '.'):
                    found.add(alias.name[len(package) + 1:].split('.')[0])
    modules = {p.stem for p in path.parent.glob('*.py')}
    return found & modules - {path.stem}


def import_graph(folder: Path) -> dict[str, set[str]]:
    return {path.stem: imports_within(path)
            for path in sorted(folder.glob('*.py'))}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each module that is on one (depth-first)."""
    found, state = [], {}

    def visit(module, path):
        state[module] = 'open'
        for other in sorted(graph.get(module, ())):
            if state.get(other) == 'open':
                found.append(path[path.index(other):] + [other])
            elif other not in state:
                visit(other, path + [other])
        state[module] = 'done'

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


def test_every_module_has_a_layer():
    assert set(import_graph(PACKAGE)) == set(LAYERS), \
        'place the new module in LAYERS and in the package docstring'


def test_imports_go_one_way():
    graph = import_graph(PACKAGE)
    upward = [f'{module} (layer {LAYERS[module]}) imports {other} (layer '
              f'{LAYERS[other]})' for module, others in graph.items()
              for other in others if LAYERS[other] > LAYERS[module]]
    assert upward == []
    assert cycles(graph) == []


def test_the_checks_see_every_kind_of_import(tmp_path):
    """Negative control: a cycle through a function-level import, a
    TYPE_CHECKING import and an absolute import are all found."""
    (tmp_path / 'a.py').write_text(
        'def f():\n    from .b import g\n')
    (tmp_path / 'b.py').write_text(
        'from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n'
        '    from graphormer_sepnorm.predict.c import h\n')
    (tmp_path / 'c.py').write_text('from . import a\n')
    graph = import_graph(tmp_path)
    assert graph == {'a': {'b'}, 'b': {'c'}, 'c': {'a'}}
    assert cycles(graph) == [['a', 'b', 'c', 'a']]


@pytest.mark.parametrize('module', ['predictor', 'ensemble', 'pipeline'])
def test_facade_methods_whichever_module_is_imported_first(module):
    """The methods that the loading and pipeline modules add to Predictor
    are there however the package is entered (a fresh interpreter)."""
    code = (f'import graphormer_sepnorm.predict.{module} as m\n'
            'from graphormer_sepnorm.predict.predictor import Predictor\n'
            'assert callable(Predictor.from_checkpoints)\n'
            'assert callable(Predictor.from_bundled)\n'
            'assert callable(Predictor.predict_file)\n')
    subprocess.run([sys.executable, '-c', code], check=True, cwd=REPO,
                   timeout=120)
