"""The modules of graphormer_sepnorm.predict import one way: base <- files
<- models <- predictor, and no module imports one that imports it, even
inside a function or under TYPE_CHECKING (read from the source with ast, so
every import counts, not only those that run). No module adds attributes to
a class after its definition: the Predictor's methods are in its class."""
import ast
from pathlib import Path

import pytest

from graphormer_sepnorm.predict import Predictor
from graphormer_sepnorm.predict.running import PredictorBase

from conftest import REPO

PACKAGE = REPO / 'graphormer_sepnorm' / 'predict'

#: Each module's layer; a module may import modules of its own layer or of a
#: lower one (as the package docstring lists them).
LAYERS = {
    'prediction': 0, 'molecules': 0, 'feature_columns': 0, 'workers': 0,
    'device_errors': 0,
    'readers': 1, 'writers': 1, 'run_record': 1, 'shards': 1, 'top_k': 1,
    'embeddings': 1, 'file_run': 1, 'pipeline': 1, 'merge': 1,
    'running': 2, 'ensemble': 2,
    'predictor': 3,
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


def class_patches(path: Path, classes: set[str]) -> list[str]:
    """The statements of the file that set an attribute of one of the
    :obj:`classes` by name (``Class.name = ...`` or ``setattr(Class,
    ...)``), anywhere in it, as ``Class.name`` (``Class.?`` for a setattr
    with a computed name)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target])
            found += [f'{t.value.id}.{t.attr}' for t in targets
                      if isinstance(t, ast.Attribute)
                      and isinstance(t.value, ast.Name)
                      and t.value.id in classes]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == 'setattr' and node.args
              and isinstance(node.args[0], ast.Name)
              and node.args[0].id in classes):
            name = node.args[1] if len(node.args) > 1 else None
            found.append(f'{node.args[0].id}.' + (
                name.value if isinstance(name, ast.Constant) else '?'))
    return found


def test_no_module_adds_attributes_to_a_class():
    """Every class of the package is whole where it is defined: no module
    (its own or another) sets a method or attribute on it afterwards."""
    classes = {node.name for path in PACKAGE.glob('*.py')
               for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.ClassDef)}
    assert 'Predictor' in classes
    patches = {path.name: class_patches(path, classes)
               for path in sorted(PACKAGE.glob('*.py'))}
    assert {name: found for name, found in patches.items() if found} == {}


def test_the_patch_check_sees_assignments_and_setattr(tmp_path):
    """Negative control: an assignment to a class attribute and a setattr
    on the class are found; an attribute of an instance is not."""
    path = tmp_path / 'm.py'
    path.write_text('class Predictor:\n'
                    '    def __init__(self):\n        self.x = 1\n'
                    'Predictor.predict_file = len\n'
                    'setattr(Predictor, "from_bundled", len)\n')
    assert class_patches(path, {'Predictor'}) == [
        'Predictor.predict_file', 'Predictor.from_bundled']


@pytest.mark.parametrize('name,owner,module', [
    ('from_checkpoint', Predictor, 'predictor'),
    ('from_checkpoints', Predictor, 'predictor'),
    ('from_bundled', Predictor, 'predictor'),
    ('predict_file', PredictorBase, 'running')])
def test_predictor_methods_are_defined_in_its_class(name, owner, module):
    """The constructors are written in the class body of Predictor in
    predictor.py, predict_file in that of the PredictorBase it shares with
    the ensemble (it hands the work to pipeline.predict_file)."""
    function = owner.__dict__[name]
    function = getattr(function, '__func__', function)  # a classmethod's
    assert function.__module__ == f'graphormer_sepnorm.predict.{module}'
    assert function.__qualname__ == f'{owner.__name__}.{name}'
