"""Benchmarks (run by hand or with ``make bench``; pytest does not collect them)."""
