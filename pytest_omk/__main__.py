"""``python -m pytest_omk``: tools over report files.

- ``merge report-*.json [-o merged.json]`` merges sharded runs' reports. Exit status as the one run
  would have had: the worst of the shards' own (a failed ordinary test, a collection or an internal
  error in any shard counts) and of the merged result (0 when every sample passed and the baseline
  gate held, 1 when a sample failed or errored or the gate tripped); 4 on unusable input (as a
  usage error), with one line naming the file and what is wrong.
- ``render REPORT.json [--html PATH] [--markdown PATH]`` writes the HTML report and the Markdown
  summary of any report file (merged shards included) exactly as the run that wrote it would have;
  0 when written, 1 when a file could not be written, 4 on unusable input.
- ``gold init REPORT DIR [--html PAGE] [--sample N --seed S]`` writes a blind gold dataset skeleton
  (and a labelling page) for a report's judged samples (:mod:`pytest_omk.report.gold_init`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_omk.errors import ConfigError
from pytest_omk.report.gold_init import add_command as add_gold_command

USAGE_ERROR = 4


def main(argv: Sequence[str] | None = None) -> int:
    """Run a ``python -m pytest_omk`` command; returns its exit status."""
    parser = argparse.ArgumentParser(prog="python -m pytest_omk", description="pytest-omk tools")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    merge = commands.add_parser(
        "merge",
        help="merge the --omk-report files of --omk-shard runs into one run's report",
        description="Merge the JSON reports of all N shards (--omk-shard K/N) into the report one run "
        "would have written: summary, variants, comparisons, repeats and the baseline gate recomputed.",
    )
    merge.add_argument(
        "reports", nargs="+", type=Path, metavar="REPORT", help="one report per shard, any order"
    )
    merge.add_argument(
        "-o", "--output", type=Path, metavar="PATH", help="write the merged report here (default: stdout)"
    )
    merge.add_argument(
        "--baseline",
        type=Path,
        metavar="PATH",
        help="baseline report (default: the runs' --omk-baseline path)",
    )
    render = commands.add_parser(
        "render",
        help="write the HTML report and/or Markdown summary of a --omk-report file",
        description="Render a JSON report (a run's, or merged shards') as the run would have: the same "
        "HTML page as --omk-html and the same Markdown as --omk-markdown.",
    )
    render.add_argument("report", type=Path, metavar="REPORT", help="a --omk-report file")
    render.add_argument("--html", type=Path, metavar="PATH", help="write the HTML report here")
    render.add_argument("--markdown", type=Path, metavar="PATH", help="write the Markdown summary here")
    add_gold_command(commands)  # gold init: pytest_omk.report.gold_init
    args = parser.parse_args(argv)
    if args.command == "gold":
        return int(args.handler(args))
    return _merge(args) if args.command == "merge" else _render(args)


def _merge(args: argparse.Namespace) -> int:
    from pytest_omk.report.merge import merge_reports

    try:
        merged = merge_reports(args.reports, baseline=args.baseline)
    except ConfigError as exc:
        print(f"pytest-omk merge: {exc}", file=sys.stderr)
        return USAGE_ERROR
    text = json.dumps(merged.document, indent=2, ensure_ascii=False) + "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
    summary = merged.document["summary"]
    counts = ", ".join(f"{n} {outcome}" for outcome, n in summary["outcomes"].items()) or "no samples"
    print(
        f"pytest-omk merge: {len(args.reports)} shards, {summary['samples']} samples: {counts}",
        file=sys.stderr,
    )
    if merged.regression:
        print(merged.regression, file=sys.stderr)
    return merged.exit_status


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
