"""The sharding options beyond ``--omk-shard K/N``: ``auto``, ``--omk-shard-by`` and the durations file.

``plugin/options.py`` has their entries in its table and hands the raw values to :func:`shard_values`, which turns them into the ``Settings`` fields of sharding; the one flag whose
value is optional (``--omk-store-durations[=PATH]``) is registered by :func:`add_store_durations`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.config.ci_shard import shard_from_ci
from pytest_omk.config.shard import Shard, parse_shard
from pytest_omk.errors import ConfigError

DEFAULT_DURATIONS = ".test_durations"
"""pytest-split's file name, in the rootdir: both tools read and write the same file."""


def add_store_durations(parser: pytest.Parser) -> None:
    """``--omk-store-durations[=PATH]``: write each sample's recorded latency (pytest-split's format)."""
    parser.getgroup("omk").addoption(
        "--omk-store-durations",
        dest="omk_store_durations",
        nargs="?",
        const=DEFAULT_DURATIONS,
        default=None,
        metavar="PATH",
        help="write each sample's recorded call latency in seconds to PATH, pytest-split's .test_durations "
        f"format (default PATH: {DEFAULT_DURATIONS} in the rootdir), for --omk-shard-by durations",
    )


def shard_values(config: pytest.Config, values: dict[str, Any]) -> dict[str, Any]:
    """``shard``, ``shard_source``, ``shard_by``, ``durations`` and ``store_durations`` as settings."""
    raw = values.pop("shard")
    source: str | None = None
    shard: Shard | None = None
    try:
        if raw is not None and raw.strip() == "auto":
            found = shard_from_ci(os.environ)
            shard, source = found.shard, found.source
        else:
            shard = parse_shard(raw) if raw else None
    except ConfigError as exc:
        raise pytest.UsageError(f"omk: {exc}") from None
    rootdir = Path(config.rootpath)
    durations = values.pop("durations")
    if durations and config.getoption("omk_durations", default=None) is None:
        durations = str(rootdir / durations)  # from the ini file: relative to the rootdir
    store = config.getoption("omk_store_durations", default=None)
    # The flag alone writes pytest-split's file in the rootdir, where both tools look for it.
    base = rootdir if store == DEFAULT_DURATIONS else Path(config.invocation_params.dir)
    return {
        "shard": shard,
        "shard_source": source,
        "shard_by": values.pop("shard_by"),
        "durations": durations or str(rootdir / DEFAULT_DURATIONS),
        "store_durations": None if store is None else str(base / store),
    }
