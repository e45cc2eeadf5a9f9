"""Tests of benchmarks/training_speed/. A package, so that pytest puts
tests/benchmarks (not this folder) on sys.path, where benchmark_helpers
is."""
