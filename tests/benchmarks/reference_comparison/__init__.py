"""Tests of benchmarks/reference_comparison/. A package, so that pytest puts
tests/benchmarks (not this folder) on sys.path, where benchmark_helpers
is."""
