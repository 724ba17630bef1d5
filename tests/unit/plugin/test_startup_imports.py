"""What loading the plugin imports: only what a run needs before its first model call.

Everything imported when pytest loads the plugin delays the first wave of calls (docs/performance.md,
"The lean call path"); the report writers are needed only when the run ends. And every pytest run
in a project with the plugin installed loads it, sample files or not: the format's models
(pydantic), the call path (asyncio, httpx) and the loop thread wait for the first sample file.
"""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys

import pytest

from pytest_omk.execute.names import BUILTIN_EXECUTORS
from pytest_omk.run import executors as factory
from tests.support import run_pytest, sample, write_sample_set

LATE = ("pytest_omk.report.html", "pytest_omk.report.markdown")
HEAVY = (
    "pydantic",
    "yaml",
    "asyncio",
    "httpx",
    "py_mini_racer",
    "pytest_omk.models.sample",
    "pytest_omk.execute.calls",
    "pytest_omk.run.loop",
)
"""Imported only once a sample file is collected (the models, the call path, the loop thread)."""


def _loaded_after(code: str, names: tuple[str, ...]) -> list[str]:
    # A fresh interpreter: this test process has imported everything already.
    script = f"import sys, json\n{code}\nprint(json.dumps([m for m in {names!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    loaded: list[str] = json.loads(out)
    return loaded


def test_loading_the_plugin_does_not_import_the_report_writers() -> None:
    assert _loaded_after("import pytest_omk.plugin", LATE) == []


def test_loading_the_plugin_builds_no_model_and_imports_no_call_path() -> None:
    assert _loaded_after("import pytest_omk.plugin", HEAVY) == []


CONFTEST = f"""
import json, sys

def pytest_unconfigure(config):
    with open("loaded.json", "w") as out:
        json.dump([m for m in {HEAVY!r} if m in sys.modules], out)
"""


def _run_loaded(pytester: pytest.Pytester, *args: str, passed: int = 1) -> set[str]:
    run_pytest(pytester, *args, subprocess=True).assert_outcomes(passed=passed)
    return set(json.loads((pytester.path / "loaded.json").read_text()))


@pytest.mark.multiprocess
@pytest.mark.parametrize("options", [(), ("--omk-executor", "openai", "--omk-judge", "openai")])
def test_a_run_without_sample_files_pays_for_none_of_it(
    pytester: pytest.Pytester, options: tuple[str, ...]
) -> None:
    # An executor set for the whole project (ini or command line) does not start the call path
    # in the project's plain test runs either. Other installed plugins may import some of these
    # modules themselves: the run without this plugin is the baseline.
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    baseline = _run_loaded(pytester, "-p", "no:omk")
    assert _run_loaded(pytester, *options) <= baseline


@pytest.mark.multiprocess
def test_a_run_with_a_sample_file_starts_the_call_path_while_it_collects(pytester: pytest.Pytester) -> None:
    # The counterpart, so that the test above cannot pass by the conftest seeing nothing.
    pytester.makeconftest(CONFTEST)
    write_sample_set(pytester, sample("s1", "hi", assertions=[{"type": "contains", "value": "hi"}]))
    loaded = _run_loaded(pytester, "--omk-executor", "echo", "--omk-judge", "none", "--omk-record-mode=off")
    assert loaded >= {
        "pydantic",
        "pytest_omk.models.sample",
        "pytest_omk.execute.calls",
        "pytest_omk.run.loop",
    }


def test_the_builtin_names_are_the_factorys() -> None:
    # The names are listed apart so that checking --omk-executor imports no executor; a name the
    # factory did not know would be run as a command line.
    assert set(BUILTIN_EXECUTORS) == {*factory._BUILTINS, *factory._AGENT_SPECS}


@pytest.mark.parametrize("package", ["pytest_omk.models", "pytest_omk.loading"])
def test_every_lazily_exported_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError):
        module.not_a_name  # noqa: B018


FORMAT_READERS = ("yaml", "lxml")
"""Imported only when a run needs them: PyYAML for a YAML sample file, lxml for a fetched page."""

READERS_CONFTEST = f"""
import json, sys

def pytest_unconfigure(config):
    with open("loaded.json", "w") as out:
        json.dump([m for m in {FORMAT_READERS!r} if m in sys.modules], out)
"""


@pytest.mark.multiprocess
@pytest.mark.parametrize(
    ("name", "expected"), [("eval-samples.json", set()), ("eval-samples.yaml", {"yaml"})]
)
def test_a_run_imports_the_yaml_reader_only_for_yaml_files_and_no_html_parser(
    pytester: pytest.Pytester, name: str, expected: set[str]
) -> None:
    # Each is tens of milliseconds before the first model call; neither is needed to read JSON or
    # to run samples without URLs. The YAML case shows that the conftest sees the imports.
    pytester.makeconftest(READERS_CONFTEST)
    write_sample_set(
        pytester, sample("s1", "hi", assertions=[{"type": "contains", "value": "hi"}]), name=name
    )
    loaded = _run_loaded(
        pytester,
        "--omk-executor",
        "echo",
        "--omk-judge",
        "none",
        "--omk-record-mode=off",
    )
    assert loaded == expected


MODEL_MODULES = (
    "pytest_omk.models._base",
    "pytest_omk.models.mocks",
    "pytest_omk.models.results",
    "pytest_omk.models.sample",
    "pytest_omk.models.report",
    "pytest_omk.models.report_document",
    "pytest_omk.models.assertions._base",
    "pytest_omk.models.assertions.agent",
    "pytest_omk.models.assertions.bounds",
    "pytest_omk.models.assertions.composite",
    "pytest_omk.models.assertions.judged",
    "pytest_omk.models.assertions.similarity",
    "pytest_omk.models.assertions.text",
)


def test_model_classes_hold_evaluated_annotations() -> None:
    # A string annotation (``from __future__ import annotations``) is compiled and evaluated by
    # pydantic for every class that has it: about a fifth of importing the models, which a live
    # run does before its first call (pytest_omk.models._base).
    from pydantic import BaseModel

    classes = 0
    for name in MODEL_MODULES:
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == name:
                classes += 1
                own = inspect.get_annotations(value)
                assert [field for field, hint in own.items() if isinstance(hint, str)] == [], (
                    value.__qualname__
                )
    assert classes > 50


def test_the_report_models_are_built_on_first_use() -> None:
    # Imported when the first item is set up, while the first wave of calls goes out: building
    # their validators then would compete with it for the interpreter.
    code = (
        "import pytest_omk.report.records\n"
        "from pytest_omk.models.report import SampleRecord\n"
        "print(json.dumps([SampleRecord.__pydantic_complete__, SampleRecord.model_json_schema() is not None,"
        " SampleRecord.__pydantic_complete__]))"
    )
    script = f"import json\n{code}"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [False, True, True]
