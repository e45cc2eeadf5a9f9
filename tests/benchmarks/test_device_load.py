"""benchmarks/device_load.py: which resource bounds a run, from the GPU's and
the CPU cores' utilization, and the CPU share read from /proc/stat."""
import time

from benchmark_helpers import script_module

device_load = script_module('device_load')


def test_the_bound_is_the_saturated_resource():
    assert device_load.bound(97.0, 40.0) == 'GPU'
    assert device_load.bound(30.0, 95.0).startswith('data pipeline')
    assert device_load.bound(30.0, 40.0).startswith('neither')
    assert device_load.bound(None, 40.0).startswith('unknown')
    assert device_load.bound(None, 90.0).startswith('data pipeline')


def test_a_busy_loop_shows_in_the_cpu_share():
    with device_load.LoadSampler() as load:
        end = time.perf_counter() + 0.3
        while time.perf_counter() < end:
            pass
    summary = load.summary()
    # One busy core of os.cpu_count(): more than nothing, at most all.
    assert 0 < summary['cpu_busy_pct'] <= 100
