"""Import layers: no module of a layered part of the package imports,
directly or through others, a module that imports it back, counting the
imports inside functions too (those only hide a circle from Python, not
from the reader).

The import graph is read with :mod:`ast` from the source files (nothing is
imported): every ``import`` and ``from ... import`` statement anywhere in a
module, relative imports resolved, ``from package import name`` pointing
at the submodule ``package.name`` when there is one and at the package
otherwise. A parent package is not counted as imported by its submodules
(Python runs its ``__init__`` first, but that is no circle of the code).

Every subpackage is checked, and the whole package (circles across
subpackages). A part that still has circles goes into :data:`KNOWN_CYCLIC`
with the reason: its test is an expected failure until the circles are
gone (then it fails as an unexpected pass: remove the entry), and the
whole-package test passes over circles that lie entirely inside it (any
other circle still fails it).

Beside the circles, one arrow is checked by name: training reaches the
bundled package only through its registry of files, which reaches nothing
of training.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = 'graphormer_sepnorm'

#: The parts whose modules must not import each other in a circle: every
#: subpackage, and the whole package (circles across subpackages).
PARTS = sorted(
    [PACKAGE] + [f'{PACKAGE}.{p.name}' for p in (REPO / PACKAGE).iterdir()
                 if (p / '__init__.py').is_file()])

#: Parts with circles left, and why: the test of each is an expected
#: failure that names its circles, and the tests of the parts holding it
#: (the whole package) pass over circles that lie entirely inside it.
KNOWN_CYCLIC: dict[str, str] = {}


def module_files(package: str, root: Path = REPO) -> dict[str, Path]:
    r"""The modules of :obj:`package` (dotted name to file), packages by
    their ``__init__.py``."""
    folder = root.joinpath(*package.split('.'))
    modules = {}
    for path in sorted(folder.rglob('*.py')):
        parts = list(path.relative_to(root).with_suffix('').parts)
        if parts[-1] == '__init__':
            parts.pop()
        modules['.'.join(parts)] = path
    return modules


def _resolve(module: str, is_package: bool, level: int,
             name: str | None) -> str:
    r"""The absolute name of a relative import of :obj:`name` (or of the
    package itself for :obj:`None`) at :obj:`level` dots in
    :obj:`module`."""
    if level == 0:
        return name or ''
    base = module.split('.')
    # One dot is the module's own package: itself for an __init__.py.
    drop = level - 1 if is_package else level
    base = base[:len(base) - drop]
    return '.'.join(base + ([name] if name else []))


#: The module-level dicts of lazily loaded names (``lazy_imports``): their
#: string values (e.g. ``'.trainer'``) are imports made on first use.
LAZY_TABLES = ('_HOMES', '_LAZY')


def import_statements(path: Path) -> list[tuple[int, str | None, list[str]]]:
    r"""Every import of :obj:`path`, top level or inside functions, as
    (level, module, names): ``import a.b`` is (0, None, ['a.b']),
    ``from ..a import b`` (2, 'a', ['b']), ``from . import b``
    (1, '', ['b']), and a lazily loaded home
    ``'..a.b'`` of a :data:`LAZY_TABLES` dict (2, 'a.b', [])."""
    statements = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            statements.append((0, None, [a.name for a in node.names]))
        elif isinstance(node, ast.ImportFrom):
            statements.append((node.level, node.module or '',
                               [a.name for a in node.names]))
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id in LAZY_TABLES
                for t in node.targets):
            for value in ast.walk(node.value):
                if isinstance(value, ast.Constant) and isinstance(
                        value.value, str) and value.value.startswith('.'):
                    home = value.value.lstrip('.')
                    statements.append((len(value.value) - len(home),
                                        home, []))
    return statements


def imported_modules(module: str, path: Path,
                     known: set[str]) -> set[str]:
    r"""The modules of :obj:`known` that :obj:`module` imports anywhere in
    its source (top level, inside functions, or lazily)."""
    is_package = path.name == '__init__.py'
    out = set()
    for level, source, names in import_statements(path):
        if source is None:
            targets = names
        else:
            base = _resolve(module, is_package, level, source)
            targets = [f'{base}.{name}' if f'{base}.{name}' in known
                       else base for name in names] or [base]
        for target in targets:
            # "import a.b.c" names a.b.c; the nearest known module of it.
            while target and target not in known:
                target = target.rpartition('.')[0]
            if target and target != module:
                out.add(target)
    return out


def import_graph(package: str = PACKAGE,
                 root: Path = REPO) -> dict[str, set[str]]:
    r"""Each module of :obj:`package` and the modules of :obj:`package` it
    imports."""
    files = module_files(package, root)
    known = set(files)
    return {module: imported_modules(module, path, known)
            for module, path in files.items()}


def cycles(graph: dict[str, set[str]], part: str) -> list[list[str]]:
    r"""The circles among the modules of :obj:`part` (the name of a package
    in :obj:`graph`): one per strongly connected component of more than
    one module, as that component's modules, sorted."""
    inside = {m for m in graph if m == part or m.startswith(part + '.')}
    edges = {m: sorted(graph[m] & inside) for m in sorted(inside)}
    # Tarjan's strongly connected components, iteratively.
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


@pytest.fixture(scope='module')
def graph() -> dict[str, set[str]]:
    return import_graph()


def _inside(modules: list[str], part: str) -> bool:
    return all(m == part or m.startswith(part + '.') for m in modules)


def _param(part: str):
    if part in KNOWN_CYCLIC:
        return pytest.param(part, marks=pytest.mark.xfail(
            reason=KNOWN_CYCLIC[part], strict=True))
    return part


@pytest.mark.parametrize('part', [_param(p) for p in PARTS])
def test_no_import_circle(graph, part):
    found = [cycle for cycle in cycles(graph, part)
             if not any(known != part and _inside(cycle, known)
                        for known in KNOWN_CYCLIC)]
    assert not found, (
        f"modules of {part} import each other in a circle (counting imports "
        f"inside functions): " + '; '.join(' <-> '.join(c) for c in found))


def _reached(graph: dict[str, set[str]], start: set[str]) -> set[str]:
    r"""The modules that those of :obj:`start` import, directly or through
    others."""
    reached, todo = set(), list(start)
    while todo:
        for other in graph[todo.pop()] - reached:
            reached.add(other)
            todo.append(other)
    return reached


def test_training_reads_only_the_bundled_registry(graph):
    """Training names bundled backbones (``model.init_from: bundled:<name>``)
    through the registry of bundled files, the package's ``__init__``, and
    reaches no other module of bundled; the registry reaches no module of
    training. The modules of bundled that build bundles from training runs
    are then the only arrow between the two, and importing training never
    loads them."""
    training = {m for m in graph if m.startswith(f'{PACKAGE}.training')}
    registry = f'{PACKAGE}.bundled'
    assert {m for m in _reached(graph, training)
            if m.startswith(registry)} <= {registry}
    assert not _reached(graph, {registry}) & training


def test_the_graph_reads_relative_and_function_level_imports(tmp_path):
    """A hand-made package: a relative import inside a function, ``from .
    import sub``, ``from ..x import name`` (a name, not a module) and an
    absolute import of a submodule, and the lazily loaded homes of a
    ``_HOMES`` table (``lazy_imports``); the circle a -> b -> a is found,
    the one-way c -> a is not a circle."""
    pkg = tmp_path / 'pkg'
    (pkg / 'sub').mkdir(parents=True)
    (pkg / '__init__.py').write_text('from . import a\n')
    (pkg / 'a.py').write_text('import os\nfrom .sub import b\n')
    (pkg / 'sub' / '__init__.py').write_text(
        "_HOMES = {'c_name': '.c', **dict.fromkeys(('x', 'y'), '..a')}\n"
        "NOT_A_TABLE = {'n': '.b'}\n")
    (pkg / 'sub' / 'b.py').write_text(
        'def f():\n    from ..a import thing\n    return thing\n')
    (pkg / 'sub' / 'c.py').write_text('import pkg.a\nfrom . import b\n')
    graph = import_graph('pkg', tmp_path)
    assert graph == {
        'pkg': {'pkg.a'},
        'pkg.a': {'pkg.sub.b'},
        'pkg.sub': {'pkg.sub.c', 'pkg.a'},
        'pkg.sub.b': {'pkg.a'},
        'pkg.sub.c': {'pkg.a', 'pkg.sub.b'},
    }
    assert cycles(graph, 'pkg') == [['pkg.a', 'pkg.sub.b']]
    assert cycles(graph, 'pkg.sub') == []


def test_the_package_imports_no_research_tooling():
    # The installed package holds the library alone: the results tables,
    # baselines and bundling live in benchmarks/ beside it and are not
    # installed.
    outside = {module: sorted(found) for module, path in
               module_files(PACKAGE).items()
               if (found := imported_names(path) & {'benchmarks', 'scripts',
                                                    'tests'})}
    assert not outside, outside


def test_only_the_cli_room_parses_arguments():
    # The command lines live in graphormer_sepnorm/cli/; the library's
    # subpackages take arguments as Python values, not argv.
    parsing = sorted(
        module for module, path in module_files(PACKAGE).items()
        if not module.startswith(f'{PACKAGE}.cli')
        and 'argparse' in imported_names(path))
    assert parsing == []


def imported_names(path: Path) -> set[str]:
    r"""The top-level names of the modules :obj:`path` imports anywhere."""
    names = set()
    for level, source, imported in import_statements(path):
        if source is None:
            names |= {name.split('.')[0] for name in imported}
        elif level == 0:
            names.add(source.split('.')[0])
    return names
