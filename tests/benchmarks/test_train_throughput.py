"""benchmarks/train_throughput.py's plumbing: the options a baseline
revision's own script receives, and the report of a comparison (the
measurement itself is a benchmark, run by hand and by gpu_check's dry
run)."""
import pytest
from benchmark_helpers import script_module

train_throughput = script_module('train_throughput')


def test_baseline_runs_get_the_options_they_know():
    argv = ['--datasets', 'zinc_subset', '--baseline', 'abc123', '--json',
            'x.json', '--precision', '32', 'bf16', '--steps', '5',
            'model.num_layers=2']
    assert train_throughput._without_option(
        argv, '--baseline', '--json', '--precision') == [
        '--datasets', 'zinc_subset', '--steps', '5', 'model.num_layers=2']


def test_the_report_puts_the_baseline_beside_each_setting():
    rows = [dict(dataset='zinc_subset', device='cpu', batch_size=256,
                 buckets=4, precision='32-true', compiled=False, median_step_s=0.5,
                 baseline='abc123', baseline_median_step_s=0.75,
                 speedup_vs_baseline=1.5, device_name='AMD EPYC (2 cores)')]
    text = train_throughput.report_markdown(
        rows, ['--baseline', 'abc123', '--json', 'x.json', '--steps', '5'])
    assert '`python benchmarks/train_throughput.py --baseline abc123 ' \
        '--steps 5`' in text
    assert '| zinc_subset | cpu | 256 | 4 | 32-true | no | — | 0.500 | 512 | ' \
        '0.750 | 1.50x |' in text


def test_buckets_take_auto_or_a_positive_number():
    args = train_throughput.parse_args(['--buckets', 'auto', '1', '4'])
    assert args.buckets == ['auto', '1', '4']
    for bad in ('0', 'two', '-1'):
        with pytest.raises(SystemExit):
            train_throughput.parse_args(['--buckets', bad])
