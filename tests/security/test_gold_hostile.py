"""Gold dataset files are hostile input (``--omk-gold``): each attack is a clear refusal or bounded.

Links in or out of the directory, FIFOs, oversized files, alias bombs, NaN and numbers past a
double, duplicate ids and 100,000 annotations. Every refusal is a :class:`GoldIssue` naming the
file (and the annotation's index); none is a traceback or a hang.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_omk.loading import gold as gold_module
from pytest_omk.loading.gold import GoldIssue, load_gold

probe = pytest.mark.probe
META = 'metadata:\n  annotator: a\n  annotatedAt: "2026-12-01"\n  version: "1"\n'


def dataset(tmp_path: Path, labels: str) -> Path:
    root = tmp_path / "gold"
    root.mkdir()
    (root / "metadata.yaml").write_text(META, encoding="utf-8")
    (root / "labels.yaml").write_text(labels, encoding="utf-8")
    return root


def refused(directory: Path) -> str:
    with pytest.raises(GoldIssue) as caught:
        load_gold(directory)
    return str(caught.value)


@probe("hostile gold file")
def test_a_link_out_of_the_directory_is_refused_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("annotations:\n  - {sample_id: leaked, score: 3}\n", encoding="utf-8")
    root = dataset(tmp_path, "annotations:\n  - {sample_id: a, score: 3}\n")
    (root / "more.yaml").symlink_to(secret)
    message = refused(root)
    assert f"{root / 'more.yaml'}: the file is not a regular file (a symbolic link" in message
    assert "leaked" not in message


@probe("hostile gold file")
def test_a_link_to_a_device_and_a_fifo_are_refused(tmp_path: Path) -> None:
    root = dataset(tmp_path, "annotations:\n  - {sample_id: a, score: 3}\n")
    (root / "zero.yaml").symlink_to("/dev/zero")
    os.mkfifo(root / "pipe.yaml")  # opening it for reading would wait for a writer forever
    with pytest.raises(GoldIssue) as caught:
        load_gold(root)
    issues = caught.value.issues
    assert any("pipe.yaml: the file is not a regular file (a FIFO" in i for i in issues)
    assert any("zero.yaml: the file is not a regular file (a symbolic link" in i for i in issues)


@probe("hostile gold file")
def test_a_file_over_the_size_limit_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gold_module, "MAX_FILE_BYTES", 1000)
    root = dataset(tmp_path, "annotations:\n" + "  - {sample_id: a, score: 3}\n" * 100)
    assert "labels.yaml: the file is larger than 1000 bytes" in refused(root)


@probe("hostile gold file")
def test_a_yaml_alias_bomb_fails_at_once(tmp_path: Path) -> None:
    rows = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    rows += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    root = dataset(tmp_path, "\n".join(rows) + "\nannotations: *a8\n")
    assert "labels.yaml" in refused(root) and "alias" in refused(root)


@probe("hostile gold file")
@pytest.mark.parametrize(
    ("score", "problem"),
    [
        (".nan", "score is required and must be a finite number"),
        ("-.inf", "score is required and must be a finite number"),
        ("1e999", "score is required and must be a finite number"),
        ("9" * 6000, "score is required and must be a finite number"),
        ("1e300", "score 1e+300 is outside metadata.scale [1, 5]"),
    ],
)
def test_nan_and_huge_scores_are_refused_with_file_and_index(
    tmp_path: Path, score: str, problem: str
) -> None:
    root = dataset(
        tmp_path, f"annotations:\n  - {{sample_id: ok, score: 3}}\n  - {{sample_id: bad, score: {score}}}\n"
    )
    assert f"{root / 'labels.yaml'}: annotations[1]: {problem}" in refused(root)


@probe("hostile gold file")
def test_a_duplicate_id_is_refused_at_its_second_place(tmp_path: Path) -> None:
    root = dataset(tmp_path, "annotations:\n  - {sample_id: a, score: 3}\n  - {sample_id: a, score: 4}\n")
    assert 'labels.yaml: annotations[1]: duplicate sample_id "a"' in refused(root)


@probe("hostile gold file")
def test_a_hundred_thousand_annotations_load(tmp_path: Path) -> None:
    # Bounded by the file size limit (16 MB) and loaded in one pass; the time is measured in
    # benchmarks/, never here.
    rows = "".join(f"  - {{sample_id: s{i}, score: {1 + i % 5}}}\n" for i in range(100_000))
    root = dataset(tmp_path, "annotations:\n" + rows)
    loaded = load_gold(root)
    assert len(loaded.annotations) == 100_000
    assert loaded.annotations[-1].sample_id == "s99999"


@probe("hostile gold file")
def test_more_files_than_allowed_are_refused_before_any_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gold_module, "MAX_FILES", 3)
    root = dataset(tmp_path, "annotations: []\n")
    for i in range(3):
        (root / f"x{i}.yaml").write_text("{", encoding="utf-8")
    assert "5 .yaml files; a gold dataset may have at most 3" in refused(root)
