"""benchmarks/ensemble_throughput.py with the predictions' timings replaced
by known ones: the steady rates and the single / ensemble ratio are the
arithmetic the report claims, and every model runs the same inputs."""
import os

import pytest

from benchmark_helpers import script_module


def test_rates_and_ratio_by_hand(tmp_path, monkeypatch):
    """Rows 100 and 1,100. The single model takes 2 + 0.001 s per row (wall)
    and 1 + 0.002 CPU-s per row; the ensemble four times the per-row cost.
    Steady: 1,000 rows in 1 s wall (single) -> 1,000 molecules/s; CPU: 2 s
    for 1,000 rows -> cores * 500 molecules/s; the ensemble's CPU rate is a
    quarter of that, so the ratio is 4.00x."""
    module = script_module('ensemble_throughput')
    smiles_dir = tmp_path / 'zinc250k'
    smiles_dir.mkdir()
    seen = []

    def fake_run(cmd, env):
        name = cmd[cmd.index('--model') + 1]
        rows = len(open(cmd[cmd.index('--input') + 1]).read().split())
        seen.append((name, rows))
        factor = 1 if name.endswith('-single') else 4
        return {'wall': 2 + 0.001 * rows * factor,
                'cpu': 1 + 0.002 * rows * factor}

    monkeypatch.setattr(module, 'run_measured', fake_run)
    monkeypatch.setattr(module, 'zinc_smiles',
                        lambda folder, count: ['C' * (1 + i % 5)
                                               for i in range(count)])
    out = tmp_path / 'report.md'
    assert module.main(['--models', 'zinc', '--rows', '100', '1100',
                        '--repeats', '2', '--smiles-dir', str(smiles_dir),
                        '--output', str(out)]) == 0
    assert sorted(set(seen)) == [('zinc', 100), ('zinc', 1100),
                                 ('zinc-single', 100), ('zinc-single', 1100)]
    assert len(seen) == 8  # 2 models x 2 sizes x 2 repeats
    cores = len(os.sched_getaffinity(0))
    text = out.read_text()
    members = len(module.bundled_model_paths('zinc'))
    assert (f'| `zinc-single` | 1 | 3.1 | 1,000 | {cores * 500:,} |  |'
            in text)
    assert (f'| `zinc` | {members} | 6.4 | 250 | {cores * 125:,} | 4.00x |'
            in text)


def test_only_ensembles_can_be_asked_for():
    module = script_module('ensemble_throughput')
    with pytest.raises(SystemExit):
        module.parse_args(['--models', 'zinc-single'])
