"""The run's options as plain values: the ``Settings`` record, its converters, the shard spec.

No pytest here: the pytest layer reads the command line and ini files and hands the stages a
``Settings`` value.
"""
