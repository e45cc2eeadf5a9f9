"""Every bash and python block of the four READMEs runs verbatim, in order,
in a copy of the repository's files (what a fresh clone holds) with
../shared/data beside it, unless the line before it marks it as a template
(``<!-- template: why -->``). ``<!-- test: append "ARGS" to SCRIPT -->``
appends ARGS to each command of the block that runs SCRIPT (a few training
steps instead of a whole training); nothing else is changed."""
import fnmatch
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import shared_path
from readme_helpers import READMES, REPO, Block, code_blocks

RUN = {'bash': ['bash', '-euo', 'pipefail', '-c'],
       'python': [sys.executable, '-c']}
#: Fences that hold no code to run (a folder tree, a config excerpt).
NOT_CODE = {'text', 'yaml'}
APPEND = re.compile(r'^append "([^"]+)" to (\S+)$')
ALL_BLOCKS = [block for readme in READMES for block in code_blocks(readme)]


def runnable(readme: str) -> list[Block]:
    return [b for b in code_blocks(readme) if b.marker != 'template'
            and b.language in RUN]


def with_appended(block: Block) -> str:
    """The block's code, with the marker's arguments appended to every
    command (a line and its backslash continuations) that runs the
    marker's script."""
    if block.marker != 'test':
        return block.code
    match = APPEND.match(block.marker_text)
    assert match and block.language == 'bash', (
        f'{block}: write the marker as <!-- test: append "ARGS" to SCRIPT '
        f'-->, on a bash block')
    extra, script = match.groups()
    commands = re.split(r'(?<!\\)\n', block.code.rstrip('\n'))
    assert any(script in c for c in commands), (
        f'{block}: no command runs {script}, which its marker names')
    assert not any(script in c and ' #' in c for c in commands), (
        f'{block}: a command running {script} ends in a comment; move the '
        f'comment to its own line so that arguments can be appended')
    return '\n'.join(f'{c} {extra}' if script in c else c
                     for c in commands) + '\n'


@pytest.mark.parametrize('block', ALL_BLOCKS, ids=str)
def test_every_block_says_what_it_is(block):
    """Each fence names its language; bash and python blocks run or are
    marked as templates with a reason; markers are well formed."""
    assert block.language in set(RUN) | NOT_CODE, (
        f'{block}: give the fence a language, one of '
        f'{", ".join(sorted(set(RUN) | NOT_CODE))} (bash and python blocks '
        f'run in tests/test_readme_blocks.py)')
    if block.marker == 'template':
        assert block.marker_text, f'{block}: say why it is a template'
    if block.marker is not None:
        assert block.language in RUN, f'{block}: a marker on a non-code block'
    with_appended(block)  # a test marker that applies


def test_appending_touches_only_the_named_script():
    block = Block('x', 1, 'bash', 'python a.py \\\n    --x 1\npython b.py\n',
                  'test', 'append "k=1" to a.py')
    assert with_appended(block) == 'python a.py \\\n    --x 1 k=1\npython b.py\n'


#: Linked into the copy rather than copied: the package, so that the
#: checkout's cache of Numba-compiled code serves the blocks too (compiling
#: it afresh costs a minute). No block may write into it (test_blocks_run
#: checks), so the link is as good as a copy.
LINKED = 'graphormer_sepnorm'


def git_status() -> str:
    return subprocess.run(['git', 'status', '--porcelain', LINKED],
                          cwd=REPO, capture_output=True, text=True).stdout


def gitignored(parts: tuple) -> bool:
    """Whether .gitignore's simple patterns (``name/``, ``/name/``,
    ``*.glob``; a leading slash anchors to the root) exclude a path."""
    for line in (REPO / '.gitignore').read_text().split() + ['/.git/']:
        pattern = line.strip('/')
        candidates = parts[:1] if line.startswith('/') else parts
        if any(fnmatch.fnmatch(part, pattern) for part in candidates):
            return True
    return False


def fresh_copy(target: Path) -> Path:
    """The files a clone of this checkout holds (tracked, and new files not
    ignored), copied to :obj:`target` (the package linked, see
    :data:`LINKED`)."""
    listed = subprocess.run(
        ['git', 'ls-files', '-z', '--cached', '--others',
         '--exclude-standard'], cwd=REPO, capture_output=True)
    if listed.returncode == 0:
        names = filter(None, listed.stdout.decode().split('\0'))
    else:  # not a git checkout: every file that .gitignore lets through
        names = [str(p.relative_to(REPO)) for p in REPO.rglob('*')
                 if not gitignored(p.relative_to(REPO).parts)]
    target.mkdir(parents=True)
    (target / LINKED).symlink_to(REPO / LINKED)
    for name in names:
        source = REPO / name
        if source.is_file() and not name.startswith(LINKED + '/'):
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.mark.slow
@pytest.mark.parametrize('readme', [r for r in READMES if runnable(r)])
def test_blocks_run(readme, tmp_path):
    shared = shared_path()
    (tmp_path / 'shared').mkdir()
    (tmp_path / 'shared' / 'data').symlink_to(shared)
    clone = fresh_copy(tmp_path / 'repo')
    env = {k: v for k, v in os.environ.items()
           if not k.startswith('GRAPHORMER_')}
    env.update(PYTHONPATH=str(clone), MPLBACKEND='Agg')
    before = git_status()
    for block in runnable(readme):
        result = subprocess.run(RUN[block.language] + [with_appended(block)],
                                cwd=clone, env=env, capture_output=True,
                                text=True, timeout=900)
        assert result.returncode == 0, (
            f'{block} failed (exit status {result.returncode}):\n'
            f'{result.stderr[-3000:]}')
        assert git_status() == before, (
            f'{block} wrote into {LINKED}/ (linked to the checkout); mark it '
            f'as a template or make it write elsewhere')
