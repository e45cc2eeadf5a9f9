"""The READMEs: configs/README.md documents every config key and
scripts/README.md every script (each answers --help); the quick start holds
the two commands; README.md stays short and its numbers are generated or
cited; relative links and anchors of the four READMEs resolve."""
import re
import subprocess
import sys

import pytest

from graphormer_sepnorm.training.config import options_markdown
from readme_helpers import (READMES, REPO, anchors, links, prose, read,
                            without_code)

SCRIPTS = sorted((REPO / 'scripts').glob('*.py'))
#: README.md's hard size limit (bytes); the rest lives beside what it
#: documents.
README_LIMIT = 20_000


def test_every_config_key_is_documented():
    """configs/README.md's table of configuration keys is the schema's
    table (OPTIONS, every key), row for row: a key added, or a type, default
    or meaning changed in the code, shows here."""
    assert options_markdown() in read('configs/README.md'), (
        "configs/README.md's key table differs from the config schema; "
        "replace it with the output of `python scripts/train.py "
        "--list-options`, under 'Configuration keys'")


#: Runs every script file as __main__ with --help, in one new interpreter
#: (one import of torch for all, not one per script), and prints
#: {script: [exit status, standard output]} as JSON.
_HELP_OF_EVERY_SCRIPT = '''
import contextlib, io, json, runpy, sys
helps = {}
for path in sys.argv[1:]:
    sys.argv = [path, '--help']
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            runpy.run_path(path, run_name='__main__')
            status = 0
        except SystemExit as stop:
            status = stop.code or 0
    helps[path] = [status, out.getvalue()]
print(json.dumps(helps))
'''


@pytest.fixture(scope='module')
def script_helps() -> dict:
    import json
    result = subprocess.run(
        [sys.executable, '-c', _HELP_OF_EVERY_SCRIPT, *map(str, SCRIPTS)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.parametrize('script', SCRIPTS, ids=lambda p: p.name)
def test_every_script_is_documented_and_has_help(script, script_helps):
    assert f'`scripts/{script.name}`' in read('scripts/README.md'), (
        f'scripts/README.md does not list scripts/{script.name}; add a row '
        f'to its table of scripts')
    status, out = script_helps[str(script)]
    assert status == 0 and 'usage:' in out, (status, out)


def test_quick_start_has_the_two_commands_ci_runs():
    readme = read('README.md')
    ci = (REPO / '.ci' / 'run').read_text()
    test_command = 'pip install -e ".[test,reference]" && python -m pytest -q tests'
    assert test_command in readme and test_command in ci
    assert 'pip install -e ".[plots]" && python scripts/train.py --config' \
        in readme


def test_readme_is_short():
    size = (REPO / 'README.md').stat().st_size
    assert size <= README_LIMIT, (
        f'README.md has {size:,} bytes, over its limit of {README_LIMIT:,}; '
        f'move details to configs/, scripts/ or benchmarks/README.md and '
        f'link them')


@pytest.mark.parametrize('readme', READMES)
def test_relative_links_resolve(readme):
    """Every relative link and image of the README points at a file or
    folder of the repository, and every #anchor at a heading there."""
    folder = (REPO / readme).parent
    broken = []
    for text, target in links(read(readme)):
        if re.match(r'[a-z]+:', target):  # https:, mailto:
            continue
        path, _, anchor = target.partition('#')
        file = (folder / path).resolve() if path else REPO / readme
        if not file.exists() or REPO not in (file, *file.parents):
            broken.append(f'{target} (no such file in the repository)')
        elif anchor and file.suffix == '.md' and anchor not in anchors(
                file.read_text()):
            broken.append(f'{target} (no heading with that anchor)')
    assert not broken, f'{readme}: broken links: {", ".join(broken)}'


def test_link_check_sees_a_broken_anchor_and_file():
    from readme_helpers import slug
    assert slug('`scripts/convert_hf.py`') == 'scriptsconvert_hfpy'
    assert slug('Your own molecules (CSV)') == 'your-own-molecules-csv'
    assert anchors('# A\n```\n# not a heading\n```\n## A\n') == {'a', 'a-1'}
    assert links('[x](a.md#b) `[y](c)` ![i](d.png)') == [('x', 'a.md#b'),
                                                           ('i', 'd.png')]


def paragraph_numbers(text: str) -> list:
    """(number, paragraph) for every number in the prose of :obj:`text`
    (generated blocks, code and link targets left out)."""
    found = []
    for paragraph in re.split(r'\n\s*\n', prose(text)):
        words = re.sub(r'\]\([^)]*\)', ']', paragraph)
        for number in re.findall(r'(?<![A-Za-z0-9_.])\d+(?:[.,]\d+)*',
                                 words):
            found.append((number, paragraph))
    return found


def uncited(text: str) -> list:
    """The numbers of :obj:`text`'s prose that no generated file
    (benchmarks/results/) linked from the same paragraph holds."""
    missing = []
    for number, paragraph in paragraph_numbers(text):
        cited = [(REPO / target.partition('#')[0]).resolve()
                 for _, target in links(paragraph)]
        sources = [f for f in cited if f.is_file() and
                   REPO / 'benchmarks' / 'results' in f.parents]
        # The whole number, not a part of one (45 is not in 451.8).
        whole = re.compile(rf'(?<![\d.,]){re.escape(number)}(?!\d|[.,]\d)')
        if not any(whole.search(f.read_text()) for f in sources):
            missing.append(number)
    return missing


def test_numbers_in_readme_are_generated_or_cited():
    """A number in README.md's text comes from a generated block, or is
    cited from a generated file (benchmarks/results/) linked in the same
    paragraph, so that it cannot go stale by hand."""
    missing = uncited(without_code(read('README.md')))
    assert not missing, (
        f'README.md states {", ".join(missing)} without a source: put the '
        f'number in a generated block, or cite it from a file under '
        f'benchmarks/results/ linked in the same paragraph')


def test_number_check_sees_a_hand_written_number():
    cited = ('57.4x, see [it](benchmarks/results/reference_comparison.md)')
    assert uncited(cited) == []
    assert uncited('It is 45-60x faster.') == ['45', '60']
    assert uncited('45x, see [it](benchmarks/results/reference_comparison.md)'
                   ) == ['45']
    assert uncited('bf16 and `123` and [x](https://a.b/2106.05234)') == []
