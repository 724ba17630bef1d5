"""Helpers for end-to-end runs of the plugin with ``pytester``.

- :func:`write_samples` writes a sample document (dict → JSON or YAML by extension, str verbatim).
- :func:`sample_set` / :func:`sample` build documents with little noise.
- ``omk_run``: runs pytest in ``pytester`` with ``--omk-record-mode=off`` (unless the test gives a
  record mode), in process by default.
- :func:`parse_junit` returns suite properties and per-testcase properties and verdicts.
- :func:`load_report` loads an ``--omk-report`` file and validates it against the shipped schema.
- ``fake_command``: scripts ``tests/fakes/omk_command.py`` and builds the ``--omk-executor`` spec.
"""

from __future__ import annotations

import json
import shlex
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
REPORT_SCHEMA = REPO / "schemas" / "report" / "v1" / "report.schema.json"
FAKE_COMMAND = REPO / "tests" / "fakes" / "omk_command.py"
SCHEMA_VERSION = "omk.eval-sample-set/v2"
NO_EXECUTOR = "no executor configured (set --omk-executor or omk_executor)"

_PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No judge is auto-selected and nothing can reach a provider: these runs stay offline."""
    for name in (*_PROVIDER_ENV, "OMK_FAKE_SCRIPT", "OMK_FAKE_LOG", "PYTEST_XDIST_AUTO_NUM_WORKERS", "CI"):
        monkeypatch.delenv(name, raising=False)


# --- sample documents ---------------------------------------------------------------------------


def sample(sample_id: str, prompt: str = "say hello", **fields: Any) -> dict[str, Any]:
    """One sample dict."""
    return {"sample_id": sample_id, "prompt": prompt, **fields}


def sample_set(*samples: dict[str, Any], **root: Any) -> dict[str, Any]:
    """A v2 document holding ``samples`` (extra root keys such as ``requires`` as keywords)."""
    return {"schemaVersion": SCHEMA_VERSION, **root, "samples": list(samples)}


def write_samples(pytester: pytest.Pytester, name: str, doc: Mapping[str, Any] | str) -> Path:
    """Write ``doc`` to ``name`` (relative to the pytester dir, parents created) and return the path."""
    path = pytester.path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(doc, str):
        text = doc
    elif path.suffix in (".yaml", ".yml"):
        text = yaml.safe_dump(dict(doc), sort_keys=False, allow_unicode=True)
    else:
        text = json.dumps(doc, indent=2, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    return path


def write_sample_set(
    pytester: pytest.Pytester, *samples: dict[str, Any], name: str = "eval-samples.json", **root: Any
) -> Path:
    """Write a v2 document of ``samples`` (extra root keys as keywords) to ``name``; return the path."""
    return write_samples(pytester, name, sample_set(*samples, **root))


# --- running ------------------------------------------------------------------------------------


OmkRun = Callable[..., pytest.RunResult]


@pytest.fixture
def omk_run(pytester: pytest.Pytester) -> OmkRun:
    """``omk_run(*args, subprocess=False)``: pytest in the pytester dir, recordings off by default."""

    def run(*args: str | Path, subprocess: bool = False) -> pytest.RunResult:
        argv = [str(a) for a in args]
        if not any(a.startswith("--omk-record-mode") for a in argv):
            argv.insert(0, "--omk-record-mode=off")
        # Unrelated plugins cost time on every in-process run (hypothesis re-imports itself).
        argv[:0] = ["-p", "no:hypothesispytest", "-p", "no:anyio"]
        if subprocess:
            return pytester.runpytest_subprocess(*argv)
        # pytest_omk is already imported by the outer session, so it cannot be rewritten: harmless.
        argv[:0] = ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
        return pytester.runpytest_inprocess(*argv)

    return run


# --- JUnit XML ----------------------------------------------------------------------------------


@dataclass
class JUnitCase:
    """One ``<testcase>``: its properties in order, and its verdict elements."""

    classname: str
    name: str
    properties: list[tuple[str, str]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def props(self) -> dict[str, str]:
        return dict(self.properties)


@dataclass
class JUnitReport:
    suite_properties: dict[str, str]
    cases: dict[str, JUnitCase]
    """Keyed by ``<classname>::<name>``, e.g. ``eval-samples.json::s1``."""
    suite: dict[str, str]
    """The ``<testsuite>`` attributes."""


def parse_junit(path: Path) -> JUnitReport:
    """Parse a ``--junitxml`` file (one suite)."""
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None, "no <testsuite> in the JUnit XML"
    suite_props: dict[str, str] = {}
    suite_props_el = suite.find("properties")
    if suite_props_el is not None:
        suite_props = {p.attrib["name"]: p.attrib["value"] for p in suite_props_el.findall("property")}
    cases: dict[str, JUnitCase] = {}
    for el in suite.findall("testcase"):
        case = JUnitCase(classname=el.attrib.get("classname", ""), name=el.attrib["name"])
        props_el = el.find("properties")
        if props_el is not None:
            case.properties = [(p.attrib["name"], p.attrib["value"]) for p in props_el.findall("property")]
        case.failures = [f.attrib.get("message", "") for f in el.findall("failure")]
        case.errors = [f.attrib.get("message", "") + "\n" + (f.text or "") for f in el.findall("error")]
        case.skipped = [f.attrib.get("message", "") for f in el.findall("skipped")]
        cases[f"{case.classname}::{case.name}"] = case
    return JUnitReport(suite_properties=suite_props, cases=cases, suite=dict(suite.attrib))


# --- JSON report --------------------------------------------------------------------------------


def load_report(path: Path) -> dict[str, Any]:
    """Load an ``--omk-report`` document and validate it against its JSON Schema."""
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    schema = json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))
    validator_cls = jsonschema.validators.validator_for(schema)
    validator_cls.check_schema(schema)
    validator = validator_cls(schema, format_checker=validator_cls.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "report does not match its schema:\n" + "\n".join(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors
    )
    return document


def report_samples(document: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The report's samples keyed by ``sample_id``."""
    return {s["sample_id"]: s for s in document["samples"]}


# --- the fake command executor ------------------------------------------------------------------


@dataclass
class FakeCommand:
    """Scripts ``tests/fakes/omk_command.py`` for one test."""

    directory: Path
    answers: dict[str, Any] = field(default_factory=dict)

    @property
    def script_path(self) -> Path:
        return self.directory / "answers.json"

    @property
    def log_dir(self) -> Path:
        return self.directory / "requests"

    def script(self, answers: Mapping[str, Any]) -> str:
        """Write the answers and return the ``--omk-executor`` spec running the fake."""
        self.answers = dict(answers)
        self.script_path.write_text(json.dumps(self.answers, ensure_ascii=False), encoding="utf-8")
        return self.spec

    @property
    def spec(self) -> str:
        argv = [
            sys.executable,
            str(FAKE_COMMAND),
            "--script",
            str(self.script_path),
            "--log",
            str(self.log_dir),
        ]
        return shlex.join(argv)

    def request(self, sample_id: str) -> dict[str, Any]:
        """What the command received for ``sample_id`` (plus ``process_cwd``)."""
        record: dict[str, Any] = json.loads((self.log_dir / f"{sample_id}.json").read_text(encoding="utf-8"))
        return record

    def called(self) -> list[str]:
        """Sample ids the command was called for."""
        return sorted(p.stem for p in self.log_dir.glob("*.json")) if self.log_dir.is_dir() else []


@pytest.fixture
def fake_command(tmp_path_factory: pytest.TempPathFactory) -> FakeCommand:
    """A scriptable command executor (outside the pytester dir so it is never collected)."""
    return FakeCommand(tmp_path_factory.mktemp("omk-command"))


@pytest.fixture
def fake_judge(tmp_path_factory: pytest.TempPathFactory) -> FakeCommand:
    """A second scriptable command, for ``--omk-judge`` (answer with ``judge_reply``)."""
    return FakeCommand(tmp_path_factory.mktemp("omk-judge"))


def judge_reply(score: int, reason: str = "scripted judge reply") -> dict[str, Any]:
    """A fake-command answer whose output is a valid judge reply."""
    return {"output": json.dumps({"score": score, "reason": reason})}


def executor_arg(spec: str) -> str:
    """``--omk-executor=<spec>`` as one argv element."""
    return f"--omk-executor={spec}"
