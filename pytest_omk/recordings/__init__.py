"""Recordings of model calls and URL fetches: store, file format, keys, miss diffs, record modes.

Below resolve, execute and judge, which all record through it; it knows no option or pytest, the
caller passes the mode, the directory and the secrets in.
"""
