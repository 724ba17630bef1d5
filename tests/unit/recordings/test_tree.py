"""File operations under a recordings directory never go through a link leaving it (``recordings/tree.py``)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pytest_omk.recordings.files import RecordingFileError
from pytest_omk.recordings.tree import STALE_TEMP_SECONDS, RecordingTree

NAME = "s-0123456789abcdef.json"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


@pytest.fixture
def tree(tmp_path: Path) -> RecordingTree:
    (tmp_path / "recs" / "execute" / "01").mkdir(parents=True)
    return RecordingTree(tmp_path / "recs")


def test_a_linked_shard_is_neither_listed_read_written_nor_swept(tree: RecordingTree, outside: Path) -> None:
    (outside / NAME).write_text("{}", encoding="utf-8")
    stale = outside / ".s.abc.tmp"
    stale.write_text("", encoding="utf-8")
    old = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(stale, (old, old))
    (tree.root / "execute" / "ab").symlink_to(outside, target_is_directory=True)

    assert list(tree.files("execute")) == []
    with pytest.raises(RecordingFileError, match="leads outside the recordings directory"):
        tree.read(tree.root / "execute" / "ab" / NAME)
    with pytest.raises(RecordingFileError, match="leads outside the recordings directory"):
        tree.write(tree.root / "execute" / "ab" / "new-0123456789abcdef.json", b"{}")
    assert tree.sweep(tree.root / "execute" / "ab") == 0
    assert not tree.remove(tree.root / "execute" / "ab" / NAME)
    assert sorted(p.name for p in outside.iterdir()) == sorted([NAME, stale.name])


def test_a_linked_kind_directory_gets_no_directory_made_outside(tree: RecordingTree, outside: Path) -> None:
    (tree.root / "judge").symlink_to(outside, target_is_directory=True)
    with pytest.raises(RecordingFileError):
        tree.write(tree.root / "judge" / "cd" / NAME, b"{}")
    assert list(outside.iterdir()) == []
    assert tree.kinds() == ["execute"]


def test_a_linked_recording_is_not_listed_and_removing_it_keeps_its_target(
    tree: RecordingTree, outside: Path
) -> None:
    (outside / "target.json").write_text("{}", encoding="utf-8")
    link = tree.root / "execute" / "01" / NAME
    link.symlink_to(outside / "target.json")
    assert list(tree.files("execute")) == []
    assert tree.remove(link) and (outside / "target.json").exists()


def test_files_inside_are_written_listed_read_and_swept(tree: RecordingTree) -> None:
    path = tree.root / "execute" / "02" / NAME
    tree.write(path, b'{"format": "x"}')
    assert list(tree.files("execute")) == [path]
    with pytest.raises(RecordingFileError, match="has format 'x'"):
        tree.read(path)
    stale = path.parent / ".s.abc.tmp"
    stale.write_text("", encoding="utf-8")
    old = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(stale, (old, old))
    assert tree.sweep(path.parent) == 1 and not stale.exists()


def test_a_recordings_directory_reached_through_a_link_works(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    tree = RecordingTree(tmp_path / "alias")
    path = tree.root / "execute" / "03" / NAME
    tree.write(path, b"{}")
    assert list(tree.files("execute")) == [path]
