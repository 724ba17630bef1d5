"""End to end: ``--omk-mutate`` grades mutated copies of each output with the sample's
deterministic checks, no model call, and lists the samples whose checks catch no mutant (issue 46)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import OmkRun, load_report, report_samples, sample, write_sample_set

CONFTEST = """
import pathlib

HERE = pathlib.Path(__file__).parent
ANSWERS = {
    "loose": "The capital of France is Paris. It has about 2 million inhabitants.",
    "tight": '{"city": "Paris", "population": 2100000}',
}


def answer(request):
    with (HERE / "calls.log").open("a", encoding="utf-8") as log:
        log.write(request.sample_id + "\\n")
    return ANSWERS[request.sample_id]


def pytest_omk_make_executor(config):
    return answer
"""

SCHEMA = {
    "type": "object",
    "required": ["city", "population"],
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
}


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    write_sample_set(
        pytester,
        sample("loose", "capital of France?", assertions=[{"type": "max_length", "value": 2000}]),
        sample(
            "tight",
            "capital of France as JSON",
            assertions=[{"type": "contains", "value": "Paris"}, {"type": "json_schema", "schema": SCHEMA}],
        ),
    )
    return pytester


def test_mutate_lists_weak_samples(project: pytest.Pytester, omk_run: OmkRun) -> None:
    result = omk_run("--omk-mutate", "--omk-report", "r.json", "--omk-html", "r.html")
    assert result.ret == 0
    # One model call per sample: mutants are graded without calling anything.
    assert sorted((project.path / "calls.log").read_text(encoding="utf-8").split()) == ["loose", "tight"]
    samples = report_samples(load_report(Path(project.path / "r.json")))
    loose, tight = samples["loose"]["mutation"], samples["tight"]["mutation"]
    assert loose["caught"] == 0 and loose["weak"] is True
    assert tight["caught"] >= 3 and tight["weak"] is False
    assert tight["mutants"] == sum(1 for m in tight["results"] if m["applied"])
    out = result.stdout.str()
    assert "omk mutation" in out
    assert "weak" in out and "loose" in out
    html = (project.path / "r.html").read_text(encoding="utf-8")
    assert "Mutation" in html and "loose" in html


def test_mutants_are_deterministic(project: pytest.Pytester, omk_run: OmkRun) -> None:
    omk_run("--omk-mutate", "--omk-report", "one.json")
    omk_run("--omk-mutate", "--omk-report", "two.json")
    one = json.loads((project.path / "one.json").read_text(encoding="utf-8"))
    two = json.loads((project.path / "two.json").read_text(encoding="utf-8"))
    assert [s["mutation"] for s in one["samples"]] == [s["mutation"] for s in two["samples"]]


def test_without_mutate_nothing_is_mutated(project: pytest.Pytester, omk_run: OmkRun) -> None:
    omk_run("--omk-report", "r.json")
    samples = report_samples(load_report(Path(project.path / "r.json")))
    assert samples["loose"].get("mutation") is None
