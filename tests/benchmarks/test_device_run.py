"""benchmarks/device_run.sh, the device command, with a stand-in Python that
records its calls: the carried wheels go to DEVICE_SITE, the reference's to
a path of their own that only GRAPHORMER_REFERENCE_PATH names, and the check
gets what is left of the budget. The rehearsal in CI runs it for real."""
import os
import subprocess

from conftest import REPO

FAKE = '''#!/bin/sh
echo "$* | PYTHONPATH=$PYTHONPATH | REF=$GRAPHORMER_REFERENCE_PATH" >> "$LOG"
'''


def test_the_device_script_installs_then_runs_the_check(tmp_path):
    tree = tmp_path / 'tree'
    (tree / 'benchmarks').mkdir(parents=True)
    (tree / 'benchmarks' / 'device_run.sh').write_text(
        (REPO / 'benchmarks' / 'device_run.sh').read_text())
    for name in ('.whl/rdkit-1-cp312-none-any.whl',
                 '.whl/reference/transformers-4.57.6-1slim-py3-none-any.whl'):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_bytes(b'')
    fake = tmp_path / 'python'
    fake.write_text(FAKE)
    fake.chmod(0o755)
    env = dict(os.environ, OUT=str(tmp_path / 'out'), LOG=str(tmp_path /
                                                             'log'),
               DEVICE_SITE=str(tmp_path / 'site'), DEVICE_PYTHON=str(fake))
    env.pop('PYTHONPATH', None)
    result = subprocess.run(['bash', 'benchmarks/device_run.sh', '--tiny'],
                            cwd=tree, env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    site = tmp_path / 'site'
    wheels, reference, check = (tmp_path / 'log').read_text().splitlines()
    assert wheels.startswith('-m pip install') and \
        f'--target {site} .whl/rdkit-1-cp312-none-any.whl |' in wheels
    assert f'--target {site}-reference .whl/reference/transformers-' \
        in reference
    args, path, ref = check.split(' | ')
    assert args.startswith(f'benchmarks/gpu_check.py --out {tmp_path}/out '
                           '--data .device-data --spent-seconds ')
    assert args.endswith(" --tiny") and 0 <= int(args.split()[6]) <= 10
    assert path == f'PYTHONPATH={site}' and ref == f'REF={site}-reference'
