"""``python -m pytest_omk render --history REPORT… [--html P] [--markdown P] [--json P] [--window K]``.

The trend across many ``--omk-report`` files (merged shards included), ordered by their
``startedAt``: each sample's state and sparklines, each layer's means and whether it is sliding,
the sample sets the runs ran. Exit status: 0 when every output was written, 1 when one could not
be, 4 on unusable input (a usage error: one line naming the file and the field).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from pytest_omk._util.visible import json_visible, visible
from pytest_omk.errors import ConfigError

if TYPE_CHECKING:
    from pytest_omk.models.history import TrendDocument

USAGE_ERROR = 4
DEFAULT_WINDOW = 5
_PREFIX = "pytest-omk render: "


def add_history_arguments(render: argparse.ArgumentParser) -> None:
    """The ``render`` options of the trend (the report positional becomes optional beside them)."""
    render.add_argument(
        "--history",
        nargs="+",
        type=Path,
        metavar="REPORT",
        help="render the trend across these reports (any number, any order: they are ordered by startedAt)",
    )
    render.add_argument(
        "--json", type=Path, metavar="PATH", help="with --history: write the trend as JSON here"
    )
    render.add_argument(
        "--window",
        metavar="K",
        help=f"with --history: a layer is sliding when its last K runs are below the K before (default {DEFAULT_WINDOW})",
    )


def wants_history(args: argparse.Namespace) -> bool:
    """Whether the command line is the trend's (``render`` without ``--history`` is the one report's)."""
    return args.history is not None or args.json is not None or args.window is not None or args.report is None


def run_history(args: argparse.Namespace) -> int:
    """Read the reports, build the trend, write what was asked; the exit status."""
    # Imported here: ``python -m pytest_omk merge`` builds this parser too and needs none of it.
    from pytest_omk.compare.history_trend import build_trend
    from pytest_omk.report.history_input import read_history
    from pytest_omk.report.history_markdown import render_trend_markdown
    from pytest_omk.report.history_view import summary_counts
    from pytest_omk.report.html.trend import render_trend_html

    try:
        window = _check_usage(args)
        trend = build_trend(read_history(args.history), window=window)
    except ConfigError as exc:
        print(_PREFIX + visible(str(exc)), file=sys.stderr)
        return USAGE_ERROR
    writers: list[tuple[Path | None, Callable[[TrendDocument, TextIO], None]]] = [
        (args.html, lambda trend, out: _write(out, render_trend_html(trend))),
        (args.markdown, lambda trend, out: _write(out, render_trend_markdown(trend))),
        (args.json, write_trend_json),
    ]
    failed = False
    for path, writer in writers:
        if path is None:
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", encoding="utf-8") as out:
                writer(trend, out)
        except OSError as exc:
            print(f"{_PREFIX}cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
            failed = True
            continue
        print(f"{_PREFIX}trend of {len(trend.runs)} runs written to {path}", file=sys.stderr)
    print(_PREFIX + summary_counts(trend), file=sys.stderr)
    return 1 if failed else 0


def _check_usage(args: argparse.Namespace) -> int:
    if args.history is None:
        raise ConfigError(
            "give a REPORT to render, or --history REPORT… for the trend across reports"
            if args.report is None
            else "--json and --window go with --history REPORT…"
        )
    if args.report is not None:
        raise ConfigError(f"give {args.report} after --history with the other reports, not before it")
    if args.html is None and args.markdown is None and args.json is None:
        raise ConfigError("nothing to write: give --html PATH, --markdown PATH, --json PATH or several")
    text = DEFAULT_WINDOW if args.window is None else args.window
    try:
        window = int(text)
    except ValueError:
        window = 0
    if window < 1 or window > 10_000:
        raise ConfigError(f"--window must be a whole number of runs from 1 to 10000, not {str(text)[:40]!r}")
    return window


def _write(out: TextIO, text: str) -> None:
    out.write(text)


def write_trend_json(trend: TrendDocument, out: TextIO) -> None:
    """The trend as JSON, one sample at a time (the whole text at once would double the peak memory);
    control and bidi characters are written as JSON escapes (:func:`json_visible`)."""
    head = trend.model_dump(mode="json", exclude={"samples"})
    sliding = head.pop("sliding")
    out.write(json_visible(json.dumps(head, ensure_ascii=False)[:-1]) + ', "samples": [')
    for index, sample in enumerate(trend.samples):
        out.write(("," if index else "") + json_visible(sample.model_dump_json()))
    out.write('], "sliding": ' + json.dumps(sliding, ensure_ascii=False) + "}\n")
