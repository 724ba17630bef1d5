"""Count the security probes by class: ``python -m tests.security.table [pytest args]``.

Runs ``tests/security`` (and the agent secrets sentinel) and prints the Markdown table of
docs/security.md: per probe class, how many probes were tried and how many held (passed). A
parametrized test counts once per parameter set.
"""

from __future__ import annotations

import sys
from collections import Counter

import pytest

TARGETS = ["tests/security"]


class _Tally:
    """A pytest plugin counting outcomes per probe class (``("probe", kind)`` user property)."""

    def __init__(self) -> None:
        self.tried: Counter[str] = Counter()
        self.held: Counter[str] = Counter()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        kind = next((str(v) for k, v in report.user_properties if k == "probe"), None)
        if kind is None or report.skipped:
            return
        # One count per probe: its call phase, or the setup phase when setup itself failed.
        if report.when == "call" or (report.when == "setup" and report.failed):
            self.tried[kind] += 1
            self.held[kind] += int(report.passed)


def render(tally: _Tally) -> str:
    """The Markdown table, classes sorted by name, with a total row."""
    rows = ["| probe class | tried | held |", "|---|---:|---:|"]
    for kind in sorted(tally.tried):
        rows.append(f"| {kind} | {tally.tried[kind]} | {tally.held[kind]} |")
    rows.append(f"| **total** | {sum(tally.tried.values())} | {sum(tally.held.values())} |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    tally = _Tally()
    code = pytest.main([*TARGETS, "-q", "-p", "no:randomly", *argv], plugins=[tally])
    print(render(tally))
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
