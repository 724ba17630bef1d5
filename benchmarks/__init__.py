"""pytest-omk's benchmark suite: ``python -m benchmarks [--quick] [--only NAME]`` (see docs/performance.md)."""
