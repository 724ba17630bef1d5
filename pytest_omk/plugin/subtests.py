"""Report a graded sample: its record first, then one pytest subtest per assertion and rubric dimension.

Grading happens in :mod:`pytest_omk.grade.verdict`; this module only turns the verdict into the
record and into subtest outcomes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_omk.errors import OmkError, SampleFailed
from pytest_omk.grade.scoring import scores_record
from pytest_omk.grade.verdict import Verdict, verdict
from pytest_omk.models import Sample
from pytest_omk.models.report import SampleRecord
from pytest_omk.models.results import Reading
from pytest_omk.models.run import SampleRun
from pytest_omk.plugin.compat import report_passed_subtests, subtests_of, suspend_xfail_mark
from pytest_omk.plugin.item_records import note, note_lines
from pytest_omk.plugin.known_failures import KNOWN, known_failure_key
from pytest_omk.plugin.safety import masked_key
from pytest_omk.report.failure_text import failure_line
from pytest_omk.report.records import (
    assertion_records,
    execution_record,
    judge_provenance,
    rubric_records,
)
from pytest_omk.report.repeated import repeated_parts

if TYPE_CHECKING:
    from pytest_omk.config.settings import Settings
    from pytest_omk.js.v8 import JsEngine
    from pytest_omk.loading.positions import SampleLines
    from pytest_omk.plugin.nodes import SampleItem


def emit_reading(
    reading: Reading,
    *,
    strict: bool,
    tripwire: bool = False,
    line: int | None = None,
    check: str = "",
    because: str = "tripwire",
) -> None:
    """Turn a reading into the subtest's outcome (inside ``subtests.test``); a failure carries the
    check's ``line`` in its file and its name, for the failure's location. ``tripwire``: the sample
    is expected to fail, ``because`` says why (a tripwire, or a known failure of the baseline)."""
    if reading.status == "fail":
        if tripwire:
            # A sample expected to fail: its failed checks are expected failures too.
            pytest.xfail(f"{because}: {reading.message}")
        raise SampleFailed(reading.message, line=line, check=check)
    if reading.status == "missing":
        if strict:
            raise SampleFailed(f"missing evidence (--omk-strict): {reading.message}", line=line, check=check)
        pytest.skip(reading.message)


def fill_record(
    wire: dict[str, Any],
    sample: Sample,
    runs: list[SampleRun],
    graded: Verdict,
    mask: Callable[[str], str] | None = None,
) -> None:
    """Complete the sample's record (its wire form, in place) with what was graded."""
    wire.update(graded_parts(sample, runs, graded, mask))


def graded_parts(
    sample: Sample, runs: list[SampleRun], graded: Verdict, mask: Callable[[str], str] | None = None
) -> dict[str, Any]:
    """The record's parts for what was graded; ``mask`` masks a stored text whole before it is
    cut to the stored cap."""
    if graded.repeats is not None:
        parts = repeated_parts(sample, runs, graded, graded.repeats, mask)
    else:
        [run] = runs
        parts = {
            "scores": scores_record(graded.runs[0].scores),
            "assertions": assertion_records(list(sample.assertions or []), graded.readings),
            "rubric": rubric_records(sample, graded.rubric),
            "execution": execution_record(run.execution, mask),
            "urls": list(run.resolved.urls),
        }
    parts.update(judge_provenance(runs))
    # The parts are JSON values already, and the rest of the record is in the wire form from
    # setup: building and dumping a model per part, or the whole record, only cost time.
    return parts


def checks(sample: Sample, graded: Verdict) -> list[tuple[str, Reading]]:
    """Each check's subtest message and reading: assertions by index, then rubric dimensions."""
    labels = [f"assertion {i}: {a.type}" for i, a in enumerate(sample.assertions or [])]
    return [
        *zip(labels, graded.readings, strict=True),
        *((f"rubric: {n}", r) for n, r in graded.rubric.items()),
    ]


def check_lines(lines: SampleLines | None, graded: Verdict) -> list[int | None]:
    """Each check's line in the order of :func:`checks` (an ``assert-set``: its culprit child's)."""
    if lines is None:
        return [None] * (len(graded.readings) + len(graded.rubric))
    return [
        *(lines.assertion(i, reading.at) for i, reading in enumerate(graded.readings)),
        *(lines.rubric.get(name) for name in graded.rubric),
    ]


def report_checks(
    item: SampleItem,
    checked: list[tuple[str, Reading]],
    *,
    strict: bool,
    tripwire: bool,
    lines: list[int | None] | None = None,
    because: str = "tripwire",
) -> None:
    """One subtest per check, in order: passes in batches, the others through ``subtests.test``."""
    passed: list[str] = []
    for index, (message, reading) in enumerate(checked):
        if reading.status == "pass":
            passed.append(message)
            continue
        report_passed_subtests(item, passed)
        passed = []
        line = lines[index] if lines else None
        with subtests_of(item).test(msg=message):
            emit_reading(reading, strict=strict, tripwire=tripwire, line=line, check=message, because=because)
    report_passed_subtests(item, passed)


def _mask(item: SampleItem) -> Callable[[str], str]:
    """The run's masking of secrets in what messages quote (identity before the session exists)."""
    return item.config.stash.get(masked_key, str)


def error_line(item: SampleItem, error: OmkError, settings: Settings, js: JsEngine) -> str:
    """The line an item ERRORs with. When only the judge failed (the model answered), the record
    first gets the answer and every check that needs no judge, read as usual (the judged ones
    missing); no subtest is reported."""
    from pytest_omk.run.pipeline import JudgeFailed  # lazy: the call path (asyncio), on an error only

    if not isinstance(error, JudgeFailed):
        return f"{type(error).__name__}: {error}"
    sample, runs = item.loaded.sample, [error.run]
    graded = verdict(sample, item.bundle.base_dir, runs, settings, js, mask=_mask(item))
    note(item, graded_parts(sample, runs, graded, _mask(item)))
    return f"JudgeError: {error}"


def grade_and_report(item: SampleItem, settings: Settings, js: JsEngine) -> None:
    """Grade the item's run(s), record them, emit one subtest per check; fail the item if needed."""
    sample = item.loaded.sample
    auto_max = settings.repeat if settings.repeat_auto else None
    graded = verdict(
        sample, item.bundle.base_dir, item.omk_runs, settings, js, auto_max=auto_max, mask=_mask(item)
    )
    # The record is complete before any subtest is reported: with -x the first failed subtest
    # ends the item, and the reports must still hold what was graded.
    note(item, graded_parts(sample, item.omk_runs, graded, _mask(item)))
    if settings.mutate:
        from pytest_omk.grade.weakness import assess  # lazy: the mutants, with --omk-mutate only

        mutation = assess(
            sample, item.bundle.base_dir, item.omk_runs[0].execution, js, seed=settings.mutate_seed
        )
        note(item, {"mutation": mutation})
    checked = checks(sample, graded)
    # Lines are read only when a check did not pass: a green run never reads its files again.
    lines = check_lines(item.check_lines(), graded) if any(r.status != "pass" for _, r in checked) else None
    if lines is not None:
        note_lines(item, lines)
    # A known failure (--omk-known-failures=xfail) is expected to fail as a tripwire is.
    known = item.stash.get(known_failure_key, None)
    if known is not None:
        note(item, {"knownFailure": known})
    tripwire = bool(sample.tripwire) or known is not None
    if tripwire:
        suspend_xfail_mark(item)
    because = "tripwire" if sample.tripwire else KNOWN
    report_checks(item, checked, strict=settings.strict, tripwire=tripwire, lines=lines, because=because)
    if graded.failure:
        raise SampleFailed(failure_line(graded, SampleRecord.of(item.omk_record), strict=settings.strict))
    if checked and all(reading.status == "missing" for _, reading in checked):
        # Nothing could be graded (no judge for a rubric-only sample, say): never a pass.
        reason = f"nothing could be graded: {checked[0][1].message}"
        note(item, {"skipReason": reason})
        pytest.skip(reason)
