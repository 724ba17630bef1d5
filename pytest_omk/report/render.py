"""``python -m pytest_omk render REPORT.json [--html PATH] [--markdown PATH]``: a report file's pages.

The report may come from anywhere (a fork's pull request can hand over its artifact), so it is read
as ``merge`` reads a shard (:func:`pytest_omk.loading.report_file.read_valid_report`: every part
validated, exit 4 naming the file and the field), and what the pages count is counted again from its
records: each sample's outcome read again from its readings (the worse of the stated one and that),
the summary's totals, the variants, comparisons and coverage. Then the run's own writers render it,
with the run's scrubbing and escaping.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from pytest_omk.report import history_command as history

USAGE_ERROR = 4


def add_parser(commands: Any) -> None:
    """Add the ``render`` command to ``commands`` (argparse's sub-parsers)."""
    render = commands.add_parser(
        "render",
        help="write the HTML report and/or Markdown summary of a --omk-report file",
        description="Render a JSON report (a run's, or merged shards') as the run would have: the same "
        "HTML page as --omk-html and the same Markdown as --omk-markdown.",
    )
    render.add_argument("report", type=Path, nargs="?", metavar="REPORT", help="a --omk-report file")
    render.add_argument("--html", type=Path, metavar="PATH", help="write the HTML report here")
    render.add_argument("--markdown", type=Path, metavar="PATH", help="write the Markdown summary here")
    history.add_history_arguments(render)  # render --history: the trend across reports


def run(args: argparse.Namespace) -> int:
    """Render ``args.report``: 0 when written, 1 when a file could not be written, 4 on bad input."""
    from pytest_omk.errors import ConfigError
    from pytest_omk.loading.report_file import read_valid_report
    from pytest_omk.recordings.scrub import secrets_from_env
    from pytest_omk.report.outputs import ReportTargets, write_reports

    if history.wants_history(args):
        return history.run_history(args)
    if args.html is None and args.markdown is None:
        print(
            "pytest-omk render: nothing to write: give --html PATH, --markdown PATH or both", file=sys.stderr
        )
        return USAGE_ERROR
    try:
        document = recounted(read_valid_report(args.report), Path.cwd())
    except ConfigError as exc:
        print(f"pytest-omk render: {exc}", file=sys.stderr)
        return USAGE_ERROR
    # The same writers and the same scrubbing as the run's own reports.
    written = write_reports(
        document, ReportTargets(html=args.html, markdown=args.markdown), secrets_from_env(os.environ)
    )
    for line in written:
        print(line.line.replace("omk: ", "pytest-omk render: ", 1), file=sys.stderr)
    return 1 if any(line.failed for line in written) else 0


def recounted(document: dict[str, Any], cwd: Path) -> dict[str, Any]:
    """``document`` (validated) with everything counted from its records counted again: outcomes,
    the summary's totals (its run-wide notes, such as the budget, are kept), variants, comparisons
    and coverage. The baseline section is kept: the baseline file is not at hand to compare again."""
    from pytest_omk.compare.analysis import analyze
    from pytest_omk.compare.variants import Variant
    from pytest_omk.report.recompute import recomputed_outcome, worse
    from pytest_omk.report.terminal import summarize

    config = document["config"]
    rows = [dict(row) for row in document["samples"]]
    for row in rows:
        row["outcome"] = worse(row.get("outcome"), recomputed_outcome(row, config))
    analysis = analyze(
        rows,
        variants=[Variant(name, cwd / shown) for name, shown in (config.get("variants") or {}).items()],
        rootdir=cwd,
    )
    return {
        **document,
        "summary": {**document["summary"], **summarize(rows)},
        "samples": rows,
        "variants": analysis["variants"],
        "comparisons": analysis["comparisons"],
        "coverage": analysis["coverage"],
    }
