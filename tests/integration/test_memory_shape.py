"""What a long run keeps of each sample once it has been reported (memory grows with it)."""

from __future__ import annotations

import gc

import pytest

from tests.support import OmkRun, sample, write_sample_set
from tests.support.runner import IN_PROCESS_WARNINGS, QUIET_PLUGINS

# Counts, at the end of the run, the distinct keywords dicts among the reports pytest's terminal
# reporter keeps, per item (one item, its setup/call/teardown and one report per check).
KEYWORD_PROBE = """
import pytest

@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter):
    reports = [r for kind in terminalreporter.stats.values() for r in kind if hasattr(r, "keywords")]
    by_item = {}
    for report in reports:
        by_item.setdefault(report.nodeid, set()).add(id(report.keywords))
    for nodeid, ids in sorted(by_item.items()):
        count = sum(1 for r in reports if r.nodeid == nodeid)
        terminalreporter.write_line(f"KEYWORDS {nodeid} reports={count} dicts={len(ids)}")
    empties = {id(seq) for r in reports for seq in (r.sections, r.user_properties) if not seq}
    terminalreporter.write_line(f"EMPTY SEQUENCES {len(empties)}")
"""


@pytest.mark.parametrize("workers", [None, pytest.param("2", marks=pytest.mark.multiprocess)])
def test_an_items_reports_share_one_keywords_dict_and_one_empty_sequence(
    pytester: pytest.Pytester, omk_run: OmkRun, workers: str | None
) -> None:
    if workers:
        pytest.importorskip("xdist")
    checks = [
        {"type": "contains", "value": "hello"},
        {"type": "min_length", "value": 1},
        {"type": "not_contains", "value": "x"},
    ]
    write_sample_set(pytester, *(sample(f"s{i}", capability=["a", "b"], assertions=checks) for i in range(3)))
    pytester.makeconftest(KEYWORD_PROBE)
    extra = ("-n", workers) if workers else ()
    result = omk_run("--omk-executor", "echo", "-rA", *extra)
    result.assert_outcomes(passed=3)
    lines = [line for line in result.stdout.lines if line.startswith("KEYWORDS ")]
    assert len(lines) == 3, result.stdout.lines[-20:]
    for line in lines:
        # -rA keeps the passed reports: setup, call, teardown and the three checks' reports.
        assert "reports=" in line and line.endswith("dicts=1"), line
        assert int(line.split("reports=")[1].split()[0]) >= 4, line
    # Their empty sections and user properties are one shared empty sequence too, and -rA (which
    # reads them after the run) still works.
    assert "EMPTY SEQUENCES 1" in result.stdout.lines, result.stdout.lines[-20:]
    result.stdout.fnmatch_lines(["*PASSED*s0*"])


RELEASE_PROBE = """
import pytest

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    for item in session.items:
        bundle = getattr(item, "bundle", None)
        print(f"\\nHELD {item.name} loaded={hasattr(item, 'loaded')} plan={hasattr(item, 'plan')} "
              f"file_samples={len(bundle.samples) if bundle else '-'} line={item.reportinfo()[1]}")
"""


def test_a_run_item_holds_no_sample_model_and_files_forget_their_samples(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_sample_set(
        pytester, *(sample(f"s{i}", assertions=[{"type": "contains", "value": "hello"}]) for i in range(3))
    )
    pytester.makeconftest(RELEASE_PROBE)
    result = omk_run("--omk-executor", "echo", "-s")
    result.assert_outcomes(passed=3)
    held = [line for line in result.stdout.lines if line.startswith("HELD ")]
    assert len(held) == 3, result.stdout.lines[-20:]
    for line in held:
        # The item still knows where its sample is defined (plugins print locations after the run).
        assert " loaded=False plan=False file_samples=0 line=" in line and not line.endswith("line=None"), (
            line
        )


LIVE_PLANS_PROBE = """
import gc
import pytest
from pytest_omk.models.run import SamplePlan

@pytest.hookimpl(trylast=True)
def pytest_runtest_logstart(nodeid, location):
    if not nodeid.endswith("::s4"):
        return
    # The collector froze what collection allocated (gc_policy): unfreeze to see every object.
    gc.unfreeze()
    alive = sorted(o.sample.sample_id for o in gc.get_objects() if isinstance(o, SamplePlan))
    gc.freeze()
    print(f"\\nALIVE {alive}")
"""


@pytest.mark.multiprocess
def test_a_run_samples_model_and_plan_are_freed_before_the_run_ends(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    # The run loop's own frame once kept every plan (and with it every validated sample) to the
    # end: about 6 KB per sample that the items had already let go of.
    write_sample_set(
        pytester, *(sample(f"s{i}", assertions=[{"type": "contains", "value": "hello"}]) for i in range(5))
    )
    pytester.makeconftest(LIVE_PLANS_PROBE)
    result = omk_run("--omk-executor", "echo", "-s", "-p", "no:randomly", subprocess=True)
    result.assert_outcomes(passed=5)
    alive = [line for line in result.stdout.lines if line.startswith("ALIVE ")]
    assert alive == ["ALIVE ['s4']"], result.stdout.lines[-20:]


RECORD_PROBE = """
import pytest

@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter):
    reports = [r for kind in terminalreporter.stats.values() for r in kind if hasattr(r, "nodeid")]
    holding = sorted({r.nodeid for r in reports if hasattr(r, "omk_record")})
    terminalreporter.write_line(f"REPORTS {len(reports)} HOLDING {holding}")
"""


@pytest.mark.parametrize("workers", [None, pytest.param("2", marks=pytest.mark.multiprocess)])
def test_no_kept_report_holds_a_record_and_the_summary_still_has_every_sample(
    pytester: pytest.Pytester, omk_run: OmkRun, workers: str | None
) -> None:
    # The records travel on the teardown reports, which pytest keeps to the end of the session;
    # the run keeps its own compact copy, so no report may go on holding the record itself.
    if workers:
        pytest.importorskip("xdist")
    write_sample_set(
        pytester, *(sample(f"s{i}", assertions=[{"type": "contains", "value": "hello"}]) for i in range(3))
    )
    pytester.makeconftest(RECORD_PROBE)
    extra = ("-n", workers) if workers else ()
    result = omk_run("--omk-executor", "echo", "-rA", "--omk-report=r.json", *extra)
    result.assert_outcomes(passed=3)
    [line] = [line for line in result.stdout.lines if line.startswith("REPORTS ")]
    assert int(line.split()[1]) >= 9 and line.endswith("HOLDING []"), line
    result.stdout.fnmatch_lines(["*omk scores*", "samples: 3  passed 3"])


PACKED_PROBE = """
import pytest
from pytest_omk.plugin.collector import record_collector_key

@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter):
    kept = terminalreporter.config.stash[record_collector_key].records.values()
    terminalreporter.write_line(f"PACKED {sum(k.packed is not None for k in kept)} OF {len(kept)}")
"""


@pytest.mark.parametrize(
    ("report", "packed"), [((), 0), (("--omk-report=r.json",), 3), (("--omk-markdown=r.md",), 3)]
)
def test_whole_records_are_kept_only_when_a_report_file_is_written(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    monkeypatch: pytest.MonkeyPatch,
    report: tuple[str, ...],
    packed: int,
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    write_sample_set(
        pytester, *(sample(f"s{i}", assertions=[{"type": "contains", "value": "hello"}]) for i in range(3))
    )
    pytester.makeconftest(PACKED_PROBE)
    result = omk_run("--omk-executor", "echo", *report)
    result.assert_outcomes(passed=3)
    assert f"PACKED {packed} OF 3" in result.stdout.lines, result.stdout.lines[-20:]
    result.stdout.fnmatch_lines(["*omk scores*", "samples: 3  passed 3"])


CONTEXT_PROBE = """
import pytest

@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter):
    reports = [r for kind in terminalreporter.stats.values() for r in kind if isinstance(r, pytest.SubtestReport)]
    contexts = {id(r.context) for r in reports if r.passed}
    terminalreporter.write_line(f"PASSED CHECKS {sum(r.passed for r in reports)} CONTEXTS {len(contexts)}")
"""


def test_the_passing_checks_of_a_run_share_one_context_per_message(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    # A check's report context is a frozen value that repeats from sample to sample: one per
    # message, not one per check (a large replay kept one per check).
    checks = [
        {"type": "contains", "value": "hello"},
        {"type": "min_length", "value": 1},
        {"type": "not_contains", "value": "x"},
    ]
    write_sample_set(pytester, *(sample(f"s{i}", assertions=checks) for i in range(4)))
    pytester.makeconftest(CONTEXT_PROBE)
    result = omk_run("--omk-executor", "echo", "-v")
    result.assert_outcomes(passed=4)
    assert "PASSED CHECKS 12 CONTEXTS 3" in result.stdout.lines, result.stdout.lines[-20:]
    result.stdout.fnmatch_lines(["*SUBPASSED*assertion 2: not_contains*"])


@pytest.mark.parametrize(
    ("layout", "threshold", "frozen"),
    [("samples", 1, True), ("samples", 2, False), ("plain", 1, False), ("plain in omk/", 1, False)],
)
def test_what_a_large_run_of_samples_keeps_is_frozen_at_its_end(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, layout: str, threshold: int, frozen: bool
) -> None:
    # What collection froze holds the run's whole graph (items -> config -> plugins -> reports),
    # so pytest's cleanup and the interpreter's exit would traverse the reports again and free
    # nothing: a run of at least SURVIVORS_FROZEN_FROM samples (1 or 2 here, not 1,000) freezes
    # them after pytest's own collection at unconfigure. A frozen object is tracked but in no
    # generation (gc.get_objects() leaves it out). Plain tests are not samples, even in a directory
    # named like the samples' marker (a node's name is one of its keywords too).
    monkeypatch.setattr("pytest_omk.plugin.gc_policy.SURVIVORS_FROZEN_FROM", threshold)
    if layout == "samples":
        write_sample_set(pytester, sample("s0", assertions=[{"type": "contains", "value": "hello"}]))
    else:
        directory = pytester.mkpydir("omk") if layout == "plain in omk/" else pytester.path
        (directory / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    # inline_run, not run_pytest: the test reads the run's own report objects.
    recorder = pytester.inline_run(
        *IN_PROCESS_WARNINGS, *QUIET_PLUGINS, "--omk-record-mode=off", "--omk-executor", "echo"
    )
    assert recorder.ret == pytest.ExitCode.OK
    report = recorder.getreports("pytest_runtest_logreport")[-1]
    in_generations = any(o is report for o in gc.get_objects())
    assert gc.is_tracked(report) and in_generations is not frozen


# The freeze threshold lowered to one sample in every process; the controller notes whether the
# last report it received is frozen once every plugin has unconfigured (config cleanups run after
# the unconfigure hooks). A frozen object is tracked but in no generation.
FREEZE_PROBE = """
import gc
import pytest_omk.plugin.gc_policy

pytest_omk.plugin.gc_policy.SURVIVORS_FROZEN_FROM = 1
RECEIVED = []

def pytest_runtest_logreport(report):
    RECEIVED[:] = [report]

def _check():
    report = RECEIVED[0]
    frozen = gc.is_tracked(report) and not any(o is report for o in gc.get_objects())
    with open("frozen.txt", "w") as out:
        out.write(str(frozen))

def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the controller (this suite may run under xdist itself)
        config.add_cleanup(_check)
"""


@pytest.mark.multiprocess
def test_the_xdist_controller_freezes_what_a_large_run_keeps(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    # The controller collects no item, so counting sample items never froze anything there; it
    # keeps every record and report, which pytest's cleanup and the interpreter's exit traversed.
    pytest.importorskip("xdist")
    write_sample_set(
        pytester, *(sample(f"s{i}", assertions=[{"type": "contains", "value": "hello"}]) for i in range(4))
    )
    pytester.makeconftest(FREEZE_PROBE)
    result = omk_run("--omk-executor", "echo", "-n", "2", subprocess=True)
    result.assert_outcomes(passed=4)
    assert (pytester.path / "frozen.txt").read_text() == "True"
