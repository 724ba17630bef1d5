"""Comparisons inside one pytest run: variants (A/B), repeats, baselines and coverage.

Everything in this package is plain Python over JSON-safe sample records (no pytest import), so
it runs the same on the controller under xdist and is unit-tested without a pytest session.
"""
