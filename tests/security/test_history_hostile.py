"""Reports handed to ``render --history`` are hostile: refused with one line, or shown escaped.

The base report is a real run's; each probe changes one thing in a copy. A refused report ends the
command with exit 4 and one line naming the file and the field, no traceback and no output file;
an accepted one never lets its text act on the page, the comment or the terminal.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.__main__ import main
from pytest_omk.report import history_input
from tests.support import omk_command, sample, sample_set

probe = pytest.mark.probe
pytestmark = pytest.mark.multiprocess  # the shared real report comes from a child pytest
Doc = dict[str, Any]


@pytest.fixture(scope="module")
def real_report(tmp_path_factory: pytest.TempPathFactory) -> Doc:
    """One real run's report (``echo`` answers: ``ok`` passes, ``bad`` fails), shared by the probes."""
    root = tmp_path_factory.mktemp("history-base")
    checks = {"ok": "fine", "bad": "absent"}
    samples = [
        sample(name, "fine", assertions=[{"type": "contains", "value": v}]) for name, v in checks.items()
    ]
    (root / "eval-samples.json").write_text(json.dumps(sample_set(*samples)), encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "--omk-executor=echo",
         "--omk-record-mode=off", "--omk-report=base.json"],
        cwd=root, capture_output=True, timeout=300, check=False,
    )  # fmt: skip
    document: Doc = json.loads((root / "base.json").read_text(encoding="utf-8"))
    assert [s["outcome"] for s in document["samples"]] == ["passed", "failed"]
    return document


def _set(path: str, value: Any) -> Callable[[Doc], None]:
    def change(document: Doc) -> None:
        *parents, last = path.split(".")
        node: Any = document
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value

    return change


def _drop(key: str) -> Callable[[Doc], None]:
    return lambda document: document.pop(key)


def _twice(document: Doc) -> None:
    document["samples"].append(copy.deepcopy(document["samples"][0]))


MARK = 1234.5625
"""A value json.dumps writes as ``1234.5625``: the raw probes replace that text by what it never writes."""


def _raw(path: str, text: str) -> tuple[Callable[[Doc], None], str]:
    return _set(path, MARK), text


# (name, what is changed, the text the mark becomes or None, what the error must say); a change of
# None writes the raw text as the whole file.
REFUSED: list[tuple[str, Callable[[Doc], None] | None, str | None, str]] = [
    ("NaN score", *_raw("samples.0.scores.fact", "NaN"), "holds NaN"),
    ("Infinity elsewhere", *_raw("durationS", "Infinity"), "holds Infinity"),
    ("-Infinity", *_raw("summary.means.fact", "-Infinity"), "holds -Infinity"),
    ("huge float", *_raw("samples.0.scores.fact", "1e999"), "samples[0].scores.fact: Input should be less than or equal to 5 (found inf)"),
    ("huge pass rate", *_raw("samples.1.repeats", '{"passRate": 1e400}'), "samples[1].repeats.passRate"),
    ("huge integer", *_raw("durationS", "9" * 5000), "holds a number pytest-omk does not read"),
    ("score as text", _set("samples.0.scores.fact", "5"), None, "samples[0].scores.fact: Input should be a valid number"),
    ("score as boolean", _set("samples.0.scores.composite", True), None, "samples[0].scores.composite"),
    ("score out of range", _set("samples.1.scores.judge", 6), None, "samples[1].scores.judge"),
    ("score huge", _set("samples.1.scores.fact", 1e300), None, "samples[1].scores.fact"),
    ("outcome unknown word", _set("samples.0.outcome", "green"), None, "samples[0].outcome"),
    ("nodeid a number", _set("samples.0.nodeid", 7), None, "samples[0].nodeid"),
    ("nodeid missing", lambda d: d["samples"][0].pop("nodeid"), None, "samples[0].nodeid: Field required"),
    ("variant a list", _set("samples.0.variant", ["a"]), None, "samples[0].variant"),
    ("pass rate above 1", _set("samples.0.repeats", {"passRate": 2}), None, "samples[0].repeats.passRate"),
    ("sample not an object", _set("samples.0", "x"), None, "every entry of samples must be an object"),
    ("samples not a list", _set("samples", {}), None, "samples must be a list"),
    ("startedAt a number", _set("startedAt", 5), None, "startedAt must be a string"),
    ("startedAt not a time", _set("startedAt", "yesterday"), None, "startedAt must be an ISO 8601 time"),
    ("startedAt missing", _drop("startedAt"), None, "startedAt is missing"),
    ("digest a list", _set("collection", {"digest": ["x"]}), None, "collection.digest must be a string"),
    ("digest huge", _set("collection", {"digest": "d" * 10_000}), None, "collection.digest must be a string"),
    ("another schema", _set("schemaVersion", "pytest-omk.report/v9"), None, "is not a pytest-omk report"),
    ("sample listed twice", _twice, None, "sample eval-samples.json::ok is listed twice"),
    ("nested deeply", None, "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("not UTF-8", None, "\udcff", "is not UTF-8 text"),
]  # fmt: skip


def _write(path: Path, base: Doc, change: Callable[[Doc], None] | None, raw: str | None) -> None:
    if change is None:
        path.write_bytes((raw or "").encode("utf-8", "surrogateescape"))
        return
    document = copy.deepcopy(base)
    change(document)
    text = json.dumps(document)
    if raw is not None:
        assert text.count(repr(MARK)) == 1
        text = text.replace(repr(MARK), raw)
    path.write_text(text, encoding="utf-8")


@probe("hostile report")
@pytest.mark.parametrize(("name", "change", "raw", "message"), REFUSED, ids=[case[0] for case in REFUSED])
def test_a_hostile_report_is_refused_naming_the_file_and_field(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    real_report: Doc,
    name: str,
    change: Callable[[Doc], None] | None,
    raw: str | None,
    message: str,
) -> None:
    (tmp_path / "good.json").write_text(json.dumps(real_report), encoding="utf-8")
    _write(tmp_path / "hostile.json", real_report, change, raw)
    monkeypatch.chdir(tmp_path)
    # In process (the command's own entry point): 26 interpreters would cost more than the probes.
    status = main(["render", "--history", "good.json", "hostile.json", "--html", "t.html", "--markdown", "t.md",
                   "--json", "t.json"])  # fmt: skip
    stderr = capsys.readouterr().err
    assert status == 4, (name, stderr)
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pytest-omk render: "), stderr
    assert "hostile.json" in lines[0] and message in lines[0], lines[0]
    assert not any((tmp_path / f"t.{suffix}").exists() for suffix in ("html", "md", "json"))


@probe("non-regular file")
@pytest.mark.parametrize("kind", ["link to /dev/zero", "FIFO", "over the size cap"])
def test_a_report_that_is_no_regular_file_or_too_large_is_refused_unread(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    real_report: Doc,
    kind: str,
) -> None:
    target = tmp_path / "hostile.json"
    if kind == "link to /dev/zero":
        target.symlink_to("/dev/zero")
    elif kind == "FIFO":
        os.mkfifo(target)  # opening it for reading would wait for a writer forever
    else:
        target.write_text(json.dumps(real_report), encoding="utf-8")
        monkeypatch.setattr(history_input, "MAX_REPORT_BYTES", 1000)
    monkeypatch.chdir(tmp_path)
    assert main(["render", "--history", "hostile.json", "--json", "t.json"]) == 4
    line = capsys.readouterr().err.strip()
    reason = "larger than 1000 bytes" if kind == "over the size cap" else "is not a regular file"
    assert line.startswith("pytest-omk render: hostile.json ") and reason in line and "\n" not in line
    assert not (tmp_path / "t.json").exists()


HOSTILE_TEXT = (
    "<script>alert(1)</script>|`x`\n**b** [l](javascript:alert(1)) \u202e\x1b[2J<img src=x onerror=alert(1)>"
)


@probe("hostile report")
def test_every_value_of_a_report_is_escaped_in_every_trend_output(tmp_path: Path, real_report: Doc) -> None:
    first = copy.deepcopy(real_report)
    second = copy.deepcopy(real_report)
    for document in (first, second):
        document["samples"][0]["nodeid"] = HOSTILE_TEXT
        document["samples"][0]["variant"] = HOSTILE_TEXT
    first["collection"] = {"digest": '"><script>alert(2)</script>'}
    second["startedAt"] = "2099-01-01T00:00:00+00:00"
    second["samples"][0]["outcome"] = "failed"
    (tmp_path / "a.json").write_text(json.dumps(first), encoding="utf-8")
    (tmp_path / "<b>b.json").write_text(json.dumps(second), encoding="utf-8")
    done = omk_command(tmp_path, "render", "--history", "a.json", "<b>b.json", "--html", "t.html",
                       "--markdown", "t.md", "--json", "t.json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "t.html").read_text(encoding="utf-8")
    assert "<script" not in page and "<img" not in page and "<b>" not in page
    assert "\u202e" not in page and "\x1b" not in page and "\\u202e" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;b&gt;b.json" in page
    comment = (tmp_path / "t.md").read_text(encoding="utf-8")
    assert "\u202e" not in comment and "\x1b" not in comment
    row = next(line for line in comment.splitlines() if "alert(1)" in line)
    assert row.count(" | ") == 3 and "\\<script\\>" in row and "\\[l\\]" in row and "\\`x\\`" in row
    trend = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert HOSTILE_TEXT in {s["nodeid"] for s in trend["samples"]}  # the exact text, JSON-escaped
    assert "\u202e" not in (tmp_path / "t.json").read_text(encoding="utf-8")
    assert "\x1b" not in done.stderr
