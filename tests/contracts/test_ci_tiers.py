"""CI runs the real-server tier: its extra installed, its tests listed one by one, once, and checked."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _commands() -> list[str]:
    run = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    return [line.strip() for line in run.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_ci_installs_the_realserver_extra_and_runs_the_tier_before_the_rest_once() -> None:
    commands = _commands()
    assert "python -m pip install --quiet --no-compile -e '.[test,realserver]'" in commands
    # Started in the background beside the static checks; waited for, shown and checked before
    # the main step.
    tier = commands.index('pytest -v -n 2 tests/realserver >"$logs/realserver.log" 2>&1 &')
    waited = commands.index('wait "$realserver" || realserver_rc=$?')
    checked = commands.index('[ "$realserver_rc" = 0 ] || { echo "real-server tier failed"; exit 1; }')
    main = next(
        i for i, line in enumerate(commands) if line.startswith("OMK_REQUIRE_SHARED=1 pytest -q -n 2")
    )
    assert tier < waited < checked < main
    assert commands[main].endswith("--ignore=tests/realserver")


def test_the_realserver_extra_is_pinned_exactly() -> None:
    # The tier asserts what one llama.cpp build answers: a new build is a deliberate bump.
    extra = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    assert sorted(requirement.split("==")[0] for requirement in extra["realserver"]) == ["gguf", "xllamacpp"]
    assert all("==" in requirement for requirement in extra["realserver"])
