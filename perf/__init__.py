"""The benchmarks (test_*.py) and the tools that read their results."""
