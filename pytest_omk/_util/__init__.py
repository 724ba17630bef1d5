"""Leaf helpers that know no sample: process trees, capped HTTP bodies."""
