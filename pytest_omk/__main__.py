"""``python -m pytest_omk``: tools over report files; each command's parser and body live in its module.

- ``merge report-*.json [-o merged.json] [--recordings DIR … --recordings-out DIR]`` merges sharded
  runs' reports and recordings (:mod:`pytest_omk.report.merge_command`, which says its exit status).
- ``render REPORT.json [--html PATH] [--markdown PATH]`` writes the HTML report and the Markdown
  summary of any report file (merged shards included) exactly as the run that wrote it would have
  (:mod:`pytest_omk.report.render`); ``render --history REPORT… [--json PATH] [--window K]`` the trend
  across many reports (:mod:`pytest_omk.report.history_command`).
- ``gold init REPORT DIR [--html PAGE] [--sample N --seed S]`` writes a blind gold dataset skeleton
  (and a labelling page) for a report's judged samples (:mod:`pytest_omk.report.gold_init`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pytest_omk.report import render
from pytest_omk.report.gold_init import add_command as add_gold_command
from pytest_omk.report.merge_command import add_merge, run_merge


def main(argv: Sequence[str] | None = None) -> int:
    """Run a ``python -m pytest_omk`` command; returns its exit status."""
    parser = argparse.ArgumentParser(prog="python -m pytest_omk", description="pytest-omk tools")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_merge(commands)
    render.add_parser(commands)
    add_gold_command(commands)  # gold init: its handler is set on the parsed arguments
    args = parser.parse_args(argv)
    if args.command == "gold":
        return int(args.handler(args))
    return run_merge(args) if args.command == "merge" else render.run(args)


if __name__ == "__main__":
    sys.exit(main())
