"""``python -m pytest_omk``: tools over report files.

- ``merge report-*.json [-o merged.json] [--recordings DIR … --recordings-out DIR]`` merges sharded
  runs' reports and recordings (:mod:`pytest_omk.report.merge_command`, which says its exit status).
- ``render REPORT.json [--html PATH] [--markdown PATH]`` writes the HTML report and the Markdown
  summary of any report file (merged shards included) exactly as the run that wrote it would have;
  0 when written, 1 when a file could not be written, 4 on unusable input.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_omk.errors import ConfigError
from pytest_omk.report.merge_command import add_merge, run_merge

USAGE_ERROR = 4


def main(argv: Sequence[str] | None = None) -> int:
    """Run a ``python -m pytest_omk`` command; returns its exit status."""
    parser = argparse.ArgumentParser(prog="python -m pytest_omk", description="pytest-omk tools")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_merge(commands)
    render = commands.add_parser(
        "render",
        help="write the HTML report and/or Markdown summary of a --omk-report file",
        description="Render a JSON report (a run's, or merged shards') as the run would have: the same "
        "HTML page as --omk-html and the same Markdown as --omk-markdown.",
    )
    render.add_argument("report", type=Path, metavar="REPORT", help="a --omk-report file")
    render.add_argument("--html", type=Path, metavar="PATH", help="write the HTML report here")
    render.add_argument("--markdown", type=Path, metavar="PATH", help="write the Markdown summary here")
    args = parser.parse_args(argv)
    return run_merge(args) if args.command == "merge" else _render(args)


def _render(args: argparse.Namespace) -> int:
    from pytest_omk.compare.baseline import read_report
    from pytest_omk.recordings.scrub import secrets_from_env
    from pytest_omk.report.outputs import ReportTargets, write_reports

    if args.html is None and args.markdown is None:
        print(
            "pytest-omk render: nothing to write: give --html PATH, --markdown PATH or both", file=sys.stderr
        )
        return USAGE_ERROR
    try:
        document = read_report(args.report)
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


if __name__ == "__main__":
    sys.exit(main())
