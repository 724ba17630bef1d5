"""The Markdown summary (``--omk-markdown``, ``$GITHUB_STEP_SUMMARY``) and the pytest-html columns, end to end.

The Markdown is parsed as CommonMark with GitHub's tables (markdown-it-py), so the checks are on
what a reader sees rendered: headings, table rows and cells, list items.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from pytest_omk.report.markdown import render_markdown
from tests.browser.conftest import preload_stages
from tests.support import REPO, FakeCommand, OmkRun, executor_arg, load_report, sample, write_sample_set
from tests.support.wrapped import unwrapped

preload_stages()


@dataclass
class Section:
    """What follows one heading: its tables (rows of cell texts, header first) and list items."""

    heading: str
    tables: list[list[list[str]]] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    paragraphs: list[str] = field(default_factory=list)


def rendered(markdown: str) -> list[Section]:
    """The summary as rendered sections, in order."""
    sections: list[Section] = []
    context: list[str] = []
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        if token.type.endswith("_open"):
            context.append(token.type)
            if token.type == "table_open":
                sections[-1].tables.append([])
            elif token.type == "tr_open":
                sections[-1].tables[-1].append([])
        elif token.type.endswith("_close"):
            context.pop()
        elif token.type == "inline":
            text = "".join(
                child.content for child in token.children or [] if child.type in ("text", "code_inline")
            )
            where = context[-1]
            if where == "heading_open":
                sections.append(Section(text))
            elif where in ("th_open", "td_open"):
                sections[-1].tables[-1][-1].append(text)
            elif "list_item_open" in context:
                sections[-1].items.append(text)
            else:
                sections[-1].paragraphs.append(text)
    return sections


def by_heading(sections: list[Section]) -> dict[str, Section]:
    return {re.sub(r" \(\d+\)$", "", s.heading): s for s in sections}


def _example(
    pytester: pytest.Pytester, omk_run: OmkRun, name: str, *args: str
) -> tuple[pytest.RunResult, dict[str, Any]]:
    shutil.copytree(REPO / "examples" / name, pytester.path, dirs_exist_ok=True)
    result = omk_run("--omk-record-mode=none", "-p", "no:cacheprovider", "--omk-report=report.json", *args)
    return result, load_report(pytester.path / "report.json")


def test_quickstart_summary(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = pytester.path / "step-summary.md"
    step.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    result, report = _example(pytester, omk_run, "quickstart", "--omk-markdown=out/summary.md")
    written = (pytester.path / "out" / "summary.md").read_text(encoding="utf-8")
    # GitHub's file is appended to (earlier steps keep their part); ours gets the same summary.
    assert step.read_text(encoding="utf-8") == "earlier step\n" + written
    unwrapped(result).fnmatch_lines(
        [
            f"omk: Markdown summary written to {pytester.path / 'out' / 'summary.md'}",
            f"omk: step summary written to {step}",
        ]
    )

    sections = rendered(written)
    assert [s.heading for s in sections] == ["pytest-omk: 7 samples, 6 passed, 1 xfailed"]
    means = report["summary"]["means"]
    assert sections[0].tables == [
        [
            ["composite", "fact", "behavior", "judge"],
            [f"{means[k]:.2f}" for k in ("composite", "fact", "behavior", "judge")],
        ]
    ]
    # The judge's calls are most of the bill: shown apart from the model's, and in the total.
    assert sections[0].paragraphs == [
        "Executor openai (gpt-4o-mini) · judge openai (gpt-4o) · model calls: 0 live, 14 replayed · cost $0.009",
        "model under test: 7 calls (0 live, 7 replayed), tokens 275 in / 196 out, $0.00016 · "
        "judge: 7 calls (0 live, 7 replayed), tokens 2,949 in / 149 out, $0.0089",
    ]


def test_ab_compare_summary(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    _, report = _example(pytester, omk_run, "ab-compare", "--omk-markdown=summary.md")
    sections = by_heading(rendered((pytester.path / "summary.md").read_text(encoding="utf-8")))
    assert list(sections) == ["pytest-omk: 16 samples, 5 failed, 11 passed", "Variants", "Failed samples"]

    variants = sections["Variants"].tables[0]
    assert variants[0] == ["variant", "samples", "passed", "failed", "composite", "fact", "behavior", "judge"]
    assert [row[:4] for row in variants[1:]] == [["concise", "8", "4", "4"], ["detailed", "8", "7", "1"]]
    assert sections["Variants"].items == [
        "detailed − concise (composite): +0.33 [-0.13, +0.75] over 8 samples: no clear difference"
    ]

    failed = [s for s in report["samples"] if s["outcome"] == "failed"]
    rows = sections["Failed samples"].tables[0]
    assert rows[0] == ["sample", "outcome", "composite", "reasons"]
    assert [r[0] for r in rows[1:]] == [f"{s['sample_id']}[{s['variant']}]" for s in failed]
    assert rows[1][3].startswith("assertion 1: regex: expected the output to match /30[ -]day/i")


def test_summary_keeps_hostile_text_inside_its_cell(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    hostile = "a | b\n## not a heading <script>x</script> `tick` *star*"
    write_sample_set(pytester, sample("evil", assertions=[{"type": "contains", "value": "absent"}]))
    omk_run(executor_arg(fake_command.script({"evil": {"output": hostile}})), "--omk-markdown=summary.md")
    text = (pytester.path / "summary.md").read_text(encoding="utf-8")
    assert "<script>" not in text
    sections = by_heading(rendered(text))
    assert list(sections) == ["pytest-omk: 1 samples, 1 failed", "Failed samples"]
    (row,) = sections["Failed samples"].tables[0][1:]
    assert len(row) == 4
    assert "a | b ## not a heading <script>x</script> `tick` *star*" in row[3]


def test_step_summary_is_cut_to_its_limit_with_a_note() -> None:
    samples = [
        {
            "sample_id": f"s{i}",
            "outcome": "failed",
            "scores": {"composite": 1.0},
            "error": None,
            "assertions": [{"index": 0, "type": "contains", "status": "fail", "message": "x" * 200}],
            "rubric": {},
        }
        for i in range(500)
    ]
    document = {
        "summary": {"samples": 500, "outcomes": {"failed": 500}, "means": {}},
        "config": {},
        "samples": samples,
    }
    text = render_markdown(document, limit=20_000)
    assert len(text.encode("utf-8")) <= 20_000
    sections = by_heading(rendered(text))
    shown = len(sections["Failed samples"].tables[0]) - 1
    assert 0 < shown < 500
    assert (
        sections["Failed samples"].paragraphs[-1].startswith(f"{500 - shown} more failed samples not shown")
    )
    assert len(render_markdown(document).encode("utf-8")) > 20_000  # the default limit (1 MiB) keeps them all


# --- pytest-html ------------------------------------------------------------------------------------


def pytest_html_tests(path: Path) -> dict[str, list[dict[str, Any]]]:
    """pytest-html's per-test rows, read from the JSON blob its report page carries."""
    blob = re.search(r'data-jsonblob="([^"]*)"', path.read_text(encoding="utf-8"))
    assert blob is not None
    tests: dict[str, list[dict[str, Any]]] = json.loads(html.unescape(blob.group(1)))["tests"]
    return tests


@pytest.mark.floor("pytest-html")
def test_pytest_html_has_one_row_per_sample_with_score_columns(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    pytest.importorskip("pytest_html")
    write_sample_set(
        pytester,
        sample(
            "good", assertions=[{"type": "contains", "value": "yes"}, {"type": "max_length", "value": 50}]
        ),
        sample(
            "bad",
            assertions=[{"type": "contains", "value": "yes"}, {"type": "contains", "value": "<b>bold</b>"}],
        ),
    )
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    spec = fake_command.script({"*": {"output": "yes <i>tag</i>", "costUSD": 0.0021}})
    result = omk_run(
        executor_arg(spec),
        "--html=report.html",
        "--omk-report=omk.json",
        "eval-samples.json",
        "test_plain.py",
    )
    result.assert_outcomes(passed=2, failed=2)  # the failed item and its failed subtest
    report = {s["sample_id"]: s for s in load_report(pytester.path / "omk.json")["samples"]}
    tests = pytest_html_tests(pytester.path / "report.html")

    assert sorted(tests) == ["eval-samples.json::bad", "eval-samples.json::good", "test_plain.py::test_plain"]
    assert {nodeid: [row["result"] for row in rows] for nodeid, rows in tests.items()} == {
        "eval-samples.json::bad": ["Failed"],
        "eval-samples.json::good": ["Passed"],
        "test_plain.py::test_plain": ["Passed"],
    }
    for sample_id in ("good", "bad"):
        (row,) = tests[f"eval-samples.json::{sample_id}"]
        scores = report[sample_id]["scores"]
        assert row["omk_composite"] == f"{scores['composite']:.2f}"
        assert row["omk_fact"] == f"{scores['fact']:.2f}"
        assert row["omk_cost"] == "$0.0021"
        (extra,) = [e for e in row["extras"] if e["format_type"] == "html"]
        assert "&lt;i&gt;tag&lt;/i&gt;" in extra["content"] and "<i>" not in extra["content"]
        assert extra["content"].count("<tr>") == 1 + 2  # header row + one per assertion
    assert tests["test_plain.py::test_plain"][0]["omk_composite"] == ""


@pytest.mark.floor("pytest-html")
def test_pytest_html_installed_but_unused_costs_nothing(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    """Without ``--html`` no sample's readings are rendered into extras nobody will draw."""
    pytest.importorskip("pytest_html")
    write_sample_set(pytester, sample("one", assertions=[{"type": "contains", "value": "yes"}]))
    pytester.makeconftest(
        """
        import pytest

        @pytest.hookimpl(trylast=True)
        def pytest_runtest_logreport(report):
            if report.when == "teardown" and getattr(report, "extras", None):
                with open("extras.txt", "a") as f:
                    f.write(report.nodeid + "\\n")
        """
    )
    spec = fake_command.script({"*": {"output": "yes"}})
    omk_run(executor_arg(spec)).assert_outcomes(passed=1)
    assert not (pytester.path / "extras.txt").exists()
    omk_run(executor_arg(spec), "--html=report.html").assert_outcomes(passed=1)
    assert (pytester.path / "extras.txt").read_text().split() == ["eval-samples.json::one"]


def test_secrets_reach_no_report(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "tok-5ecret-value-1234"
    monkeypatch.setenv("ACME_SERVICE_TOKEN", secret)
    step = pytester.path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    write_sample_set(pytester, sample("leaky", assertions=[{"type": "contains", "value": "absent"}]))
    spec = fake_command.script({"leaky": {"output": f"the token is {secret}"}})
    omk_run(executor_arg(spec), "--omk-html=r.html", "--omk-markdown=r.md", "--omk-report=r.json")
    for name in ("r.html", "r.md", "r.json", "step.md"):
        content = (pytester.path / name).read_text(encoding="utf-8")
        assert secret not in content, name
        assert "REDACTED" in content, name


# --- under pytest-randomly the table keeps the collection order ------------------------------------

RANDOMLY_IDS = [f"s{n}" for n in range(8)]
S_CHECK = [{"type": "contains", "value": "s"}]


def table_ids(out: str) -> list[str]:
    """The sample ids of the score table's rows, top to bottom."""
    table = out.split("omk scores", 1)[1].split("mean:", 1)[0]
    return re.findall(r"^(?:eval-samples\.json::)?(s\d)\s", table, flags=re.MULTILINE)


@pytest.mark.floor("pytest-randomly")
def test_under_randomly_the_score_table_follows_the_collection_order(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_sample_set(pytester, *(sample(i, f"prompt {i}", assertions=S_CHECK) for i in RANDOMLY_IDS))
    result = omk_run("--omk-executor", "echo", "-p", "randomly", "-p", "no:cacheprovider",
                     "--randomly-seed=3", "-v", "--omk-report", "r.json")  # fmt: skip
    assert result.ret == 0
    ran = re.findall(r"eval-samples\.json::(s\d) PASSED", result.stdout.str())
    assert sorted(ran) == RANDOMLY_IDS and ran != RANDOMLY_IDS  # randomly did shuffle the run
    assert table_ids(result.stdout.str()) == RANDOMLY_IDS
    assert [s["sample_id"] for s in load_report(pytester.path / "r.json")["samples"]] == RANDOMLY_IDS
