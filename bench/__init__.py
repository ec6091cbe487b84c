"""Benchmarks: `python -m bench verify` times tree-verify attention implementations (see bench/README.md)."""
