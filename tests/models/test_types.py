import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip('mypy', reason='mypy is in the [test] extra')

ROOT = Path(__file__).resolve().parents[2]
USAGE = Path(__file__).with_name('typed_usage.py')

# Only the package root and the modules that define the model's options are
# analysed (their own errors silenced); torch, PyG and the rest are skipped
# (Any), which keeps the run to seconds.
MYPY_INI = """\
[mypy]
follow_imports = skip
ignore_missing_imports = True
[mypy-graphormer_sepnorm,graphormer_sepnorm.models.*,\
graphormer_sepnorm.nn.sep_norm,graphormer_sepnorm.nn.graph_attention_bias]
follow_imports = silent
"""


def test_a_type_checker_sees_the_model_and_its_options(tmp_path):
    ini = tmp_path / 'mypy.ini'
    ini.write_text(MYPY_INI)
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, '-m', 'mypy', '--config-file', str(ini),
         '--cache-dir', str(tmp_path / 'cache'), '--no-error-summary',
         str(USAGE)], capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, 'MYPYPATH': str(ROOT)})
    seconds = time.perf_counter() - start
    lines: dict[int, str] = {}
    for m in re.finditer(r'typed_usage\.py:(\d+): (?:error|note): (.*)',
                         result.stdout):
        lines[int(m[1])] = lines.get(int(m[1]), '') + m[2] + '\n'
    source = USAGE.read_text().splitlines()

    def line_of(text):
        return next(i for i, line in enumerate(source, 1) if text in line)

    assert lines[line_of('reveal_type(model)')] == (
        'Revealed type is '
        '"graphormer_sepnorm.models.graphormer_sepnorm.GraphormerSepNorm"\n'
    ), result.stdout
    assert ('Unexpected keyword argument "hidden_channel"' in
            lines[line_of('hidden_channel=')]), result.stdout
    assert ('"norm" to "GraphormerSepNorm" has incompatible type' in
            lines[line_of("norm='batch'")]), result.stdout
    # The correct call (and the import) is clean: errors only where meant.
    assert not set(lines) & set(range(1, line_of('reveal_type(model)')))
    assert seconds < 60, f'mypy took {seconds:.0f} s'
