"""``python -m pytest_omk merge``: the shards' reports into one run's, their recordings into one tree.

Exit status as the one run would have had: the worst of the shards' own (a failed ordinary test, a
collection or an internal error in any shard counts; a shard the budget stopped exited 1 unless it
ran with ``--omk-allow-incomplete``) and of the merged result (0 when every sample passed and the
baseline gate held, 1 when a sample failed or errored or the gate tripped); 4 on unusable input
(as a usage error), with one line naming the file and what is wrong, two different recorded answers
under one key included.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pytest_omk._util.money import money
from pytest_omk.errors import ConfigError

USAGE_ERROR = 4


def add_merge(commands: Any) -> None:
    """The ``merge`` command's arguments (``commands``: the ``argparse`` subparsers)."""
    merge = commands.add_parser(
        "merge",
        help="merge the --omk-report files of --omk-shard runs into one run's report",
        description="Merge the JSON reports of all N shards (--omk-shard K/N) into the report one run "
        "would have written: summary, variants, comparisons, repeats and the baseline gate recomputed; "
        "with --recordings, the shards' recordings into one directory.",
    )
    merge.add_argument(
        "reports", nargs="*", type=Path, metavar="REPORT", help="one report per shard, any order"
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
    merge.add_argument(
        "--recordings",
        nargs="+",
        type=Path,
        metavar="DIR",
        help="the shards' recordings directories: their union goes to --recordings-out",
    )
    merge.add_argument(
        "--recordings-out", type=Path, metavar="DIR", help="where the union of --recordings goes"
    )


def run_merge(args: argparse.Namespace) -> int:
    """Merge what ``args`` names; the exit status (see the module doc)."""
    if bool(args.recordings) != bool(args.recordings_out):
        return _usage("--recordings and --recordings-out go together")
    if not args.reports and not args.recordings:
        return _usage(
            "nothing to merge: give the shards' reports, --recordings DIR … --recordings-out DIR, or both"
        )
    status = 0
    if args.recordings:
        status = _merge_recordings(args.recordings, args.recordings_out)
        if status:
            return status
    if args.reports:
        status = _merge_reports(args)
    return status


def _usage(message: str) -> int:
    print(f"pytest-omk merge: {message}", file=sys.stderr)
    return USAGE_ERROR


def _merge_recordings(sources: list[Path], target: Path) -> int:
    from pytest_omk.recordings.union import UnionError, union_recordings

    try:
        done = union_recordings(sources, target)
    except UnionError as exc:
        return _usage(str(exc))
    print(
        f"pytest-omk merge: {done.written} recordings from {done.inputs} directories written to {target}"
        + (f" ({done.duplicates} recorded twice with the same answer, kept once)" if done.duplicates else ""),
        file=sys.stderr,
    )
    return 0


def _merge_reports(args: argparse.Namespace) -> int:
    from pytest_omk.report.merge import merge_reports

    try:
        merged = merge_reports(args.reports, baseline=args.baseline)
    except ConfigError as exc:
        return _usage(str(exc))
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
    budget = summary.get("budget")
    if budget:
        cap = f" of {money(budget['limitUSD'])}" if budget.get("limitUSD") is not None else ""
        spent = {role: part.get("spent") or {} for role, part in (summary.get("usage") or {}).items()}
        roles = ", ".join(
            f"{role} {money(float(part.get('costUSD', 0)))} on {calls} calls"
            for role, part in spent.items()
            if (calls := int(part.get("pricedCalls", 0)) + int(part.get("unpricedCalls", 0)))
        )
        print(f"pytest-omk merge: budget: {money(budget['spentUSD'])}{cap} spent ({roles or 'no live calls'})",
              file=sys.stderr)  # fmt: skip
    for shard in merged.stopped:
        print(f"pytest-omk merge: shard {shard} stopped on its part of the budget", file=sys.stderr)
    if merged.regression:
        print(merged.regression, file=sys.stderr)
    return merged.exit_status
