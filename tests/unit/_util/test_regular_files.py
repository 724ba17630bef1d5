"""Reading a planted file (``_util/regular_files.py``): regular, not through a link, capped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_omk._util.regular_files import RefusedFile, read_regular


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"data")
    assert read_regular(tmp_path / "f", 10) == b"data"


def test_a_link_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "target").write_bytes(b"secret")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    with pytest.raises(RefusedFile, match="symbolic link"):
        read_regular(tmp_path / "link", 10)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(RefusedFile, match="not a regular file"):
        read_regular(tmp_path / "pipe", 10)


def test_a_larger_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    with (tmp_path / "big").open("wb") as handle:
        handle.truncate(1 << 30)  # sparse
    with pytest.raises(RefusedFile, match="larger than 10 bytes"):
        read_regular(tmp_path / "big", 10)


def test_a_missing_file_or_parent_is_not_found(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    for missing in (tmp_path / "none", tmp_path / "file" / "below"):
        with pytest.raises(FileNotFoundError):
            read_regular(missing, 10)
