"""benchmarks/train_throughput.py's command line: --buckets takes 'auto' or
a positive number (the measurement itself is a benchmark, run by hand and
by the device rehearsal; its parts are tested in training_speed/)."""
import pytest
from benchmark_helpers import script_module

train_throughput = script_module('train_throughput')


def test_buckets_take_auto_or_a_positive_number():
    args = train_throughput.parse_args(['--buckets', 'auto', '1', '4'])
    assert args.buckets == ['auto', '1', '4']
    for bad in ('0', 'two', '-1'):
        with pytest.raises(SystemExit):
            train_throughput.parse_args(['--buckets', bad])
