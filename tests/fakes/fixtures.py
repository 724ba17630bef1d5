"""Fixtures for the fake model servers (filled in with the HTTP executors)."""
