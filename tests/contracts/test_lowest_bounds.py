"""The lowest-versions run pins exactly the lower bounds pyproject.toml declares, and CI runs it."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
# Tools that check the code without running it: the main CI step runs them at the newest versions.
NOT_RUN_AT_LOWEST = {"ruff", "mypy", "types-pyyaml", "types-jsonschema"}
REQUIREMENT = re.compile(r"^([A-Za-z0-9_.-]+)\s*(?:>=\s*([0-9][0-9A-Za-z.]*))?")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared_lower_bounds() -> dict[str, str | None]:
    project = PYPROJECT["project"]
    requirements = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    bounds: dict[str, str | None] = {}
    for requirement in requirements:
        match = REQUIREMENT.match(requirement)
        assert match, requirement
        bounds[_canonical(match[1])] = match[2]
    return bounds


def _pins() -> dict[str, str]:
    text = (REPO / ".ci" / "constraints-lowest.txt").read_text(encoding="utf-8")
    pins: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"not an exact pin: {line!r}"
            pins[_canonical(name)] = version.strip()
    return pins


def test_every_run_dependency_has_a_lower_bound_pinned_exactly() -> None:
    bounds = {n: v for n, v in _declared_lower_bounds().items() if n not in NOT_RUN_AT_LOWEST}
    missing = sorted(name for name, version in bounds.items() if version is None)
    assert not missing, f"declare a tested lower bound for {missing}"
    # As versions: a bound of 4.20 is pinned as 4.20.0.
    pins = {name: Version(version) for name, version in _pins().items()}
    assert pins == {name: Version(str(version)) for name, version in bounds.items()}


def test_ci_runs_the_lowest_bounds_step_and_waits_for_it() -> None:
    # It runs beside the main steps (its install waits on the network; its tests fill the main
    # suite's idle CPU); CI fails unless its install and its tests both succeeded.
    run = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line.strip() for line in run.splitlines() if not line.lstrip().startswith("#")]
    install = next(i for i, line in enumerate(commands) if line.startswith("bash .ci/lowest install"))
    tests = next(i for i, line in enumerate(commands) if line.startswith("bash .ci/lowest test"))
    main = next(
        i for i, line in enumerate(commands) if line.startswith("OMK_REQUIRE_SHARED=1 pytest -q -n 2")
    )
    waited = commands.index('wait "$beside"')
    assert install < tests < main < waited
    checked = commands[waited:]
    assert any("lowest-install.rc" in line and "exit 1" in line for line in checked)
    assert any("lowest.rc" in line and "exit 1" in line for line in checked)
    lowest = (REPO / ".ci" / "lowest").read_text(encoding="utf-8")
    assert "-c .ci/constraints-lowest.txt" in lowest


# Dependencies that only an end-to-end run drives (a unit test cannot reach them): besides pytest
# and its plugins, the official openai client an app calls through, and the OpenTelemetry SDK.
DRIVEN_END_TO_END = {"openai", "opentelemetry-sdk"}


def _floor_marks() -> dict[str, set[str]]:
    """Each dist a ``@pytest.mark.floor(...)`` in tests/integration names, with the files naming it."""
    named: dict[str, set[str]] = {}
    for path in sorted((REPO / "tests" / "integration").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr == "floor" and ast.unparse(node.func.value) == "pytest.mark":
                for arg in node.args:
                    assert isinstance(arg, ast.Constant) and isinstance(arg.value, str), ast.unparse(node)
                    named.setdefault(_canonical(arg.value), set()).add(path.name)
    return named


def test_every_floor_mark_names_a_pinned_dependency_and_every_test_tool_has_one() -> None:
    named = _floor_marks()
    pins = _pins()
    assert not sorted(set(named) - set(pins)), (
        "a floor mark names a dist .ci/constraints-lowest.txt does not pin"
    )
    # pytest-omk drives pytest and every pytest plugin it supports end to end: each has at least
    # one test that the lowest-bounds run selects with `-m floor`.
    driven = {name for name in pins if name.startswith("pytest")} | DRIVEN_END_TO_END
    assert not sorted(driven - set(named)), "mark a test that drives it @pytest.mark.floor(<dist>)"
    lowest = (REPO / ".ci" / "lowest").read_text(encoding="utf-8")
    assert "pytest -q -n 2 -m floor tests/integration" in lowest
    assert "pytest -q -n 2 tests/unit tests/contracts" in lowest
