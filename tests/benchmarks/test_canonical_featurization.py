"""benchmarks/canonical_featurization.py: the ratio it reports is the
quotient of its two medians, measured on a few real molecules, and it names
an unreadable input."""
import re

import pytest

from benchmark_helpers import script_module
from conftest import shared_path


def test_median_and_ratio_of_alternating_passes(monkeypatch):
    module = script_module('canonical_featurization')
    # Pass times handed out in the order measure() asks for them:
    # written, canonical, written, canonical, written, canonical.
    times = iter([1.0, 3.0, 2.0, 2.0, 9.0, 5.0])
    monkeypatch.setattr(module, 'pass_time', lambda *args: next(times))
    result = module.measure('zinc', ['C'], repeats=3)
    assert result == pytest.approx(
        {'written_us': 2e6, 'canonical_us': 3e6, 'ratio': 1.5})


def test_times_both_featurizers_on_real_molecules(tmp_path, capsys):
    main = script_module('canonical_featurization').main
    output = tmp_path / 'cost.md'
    assert main(['--molecules', str(shared_path('zinc250k',
                                                'jtvae_test.txt')),
                 '--count', '20', '--repeats', '1',
                 '--output', str(output)]) == 0
    rows = re.findall(r'\| `(\w+)` \| (\d+) \| (\d+) \| ([\d.]+)x \|',
                      output.read_text())
    assert sorted(row[0] for row in rows) == ['ogb', 'zinc']
    for _, written, canonical, ratio in rows:
        assert float(ratio) == pytest.approx(
            int(canonical) / int(written), rel=0.05, abs=0.01)


def test_unreadable_molecules_file(tmp_path, capsys):
    main = script_module('canonical_featurization').main
    assert main(['--molecules', str(tmp_path / 'missing.txt')]) == 2
    assert 'cannot read --molecules' in capsys.readouterr().err
