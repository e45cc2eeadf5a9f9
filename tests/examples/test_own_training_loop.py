"""examples/own_training_loop.py runs, with tiny sizes: two loader workers,
AdamW, recalibration, validation, save and load (the same MAE back), and
the compiled model (traced whole with fullgraph=True; the eager backend
keeps it to seconds) scoring what the eager one does."""
import re
from pathlib import Path

from script_helpers import run_script

EXAMPLE = str(Path(__file__).resolve().parents[2] / 'examples' /
              'own_training_loop.py')


def test_own_training_loop_runs(zinc_root, tmp_path):
    root, source = zinc_root
    result = run_script(EXAMPLE, '--root', str(root), '--raw-source',
                        str(source), '--steps', '4', '--batch-size', '8',
                        '--limit', '32', '--layers', '1', '--hidden', '16',
                        '--workers', '2', '--compile-backend', 'eager',
                        '--output', str(tmp_path / 'model.pt'))
    assert result.returncode == 0, result.stderr[-3000:]
    maes = [float(m) for m in re.findall(r'validation MAE (?:after 4 steps: '
                                         r')?([0-9.]+)', result.stdout)]
    assert len(maes) == 3, result.stdout
    assert maes[0] == maes[1]  # loaded: the same weights and statistics
    assert abs(maes[2] - maes[0]) < 1e-3
    assert (tmp_path / 'model.pt').is_file()
    assert 'older than its weights' not in result.stderr


def test_help():
    result = run_script(EXAMPLE, '--help')
    assert result.returncode == 0 and '--compile-backend' in result.stdout
