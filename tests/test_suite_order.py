"""conftest.py's collection order: the slowest files it names exist and
are collected first, in its order (a renamed file would silently fall back
to the default order and unbalance the two CI workers)."""
import subprocess
import sys

from conftest import REPO, SLOWEST_FIRST


def test_slowest_files_exist_and_come_first():
    for name in SLOWEST_FIRST:
        assert (REPO / 'tests' / name).is_file(), (
            f'tests/{name} is gone: update SLOWEST_FIRST in tests/conftest.py')
    result = subprocess.run(
        [sys.executable, '-m', 'pytest', '-q', '-n', '0', '--collect-only',
         '-p', 'no:cacheprovider', 'tests/test_suite_order.py',
         'tests/models/test_compile.py', 'tests/test_readme_blocks.py'],
        capture_output=True, text=True, timeout=300, cwd=REPO)
    assert result.returncode == 0, result.stderr
    files = []
    for line in result.stdout.splitlines():
        name = line.split('::')[0]
        if '::' in line and name not in files:
            files.append(name)
    assert files == ['tests/test_readme_blocks.py',
                     'tests/models/test_compile.py',
                     'tests/test_suite_order.py']
