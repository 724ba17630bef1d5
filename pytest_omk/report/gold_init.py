"""``python -m pytest_omk gold init REPORT DIR``: a blind gold dataset skeleton from a run's report.

The skeleton (``metadata.yaml`` and ``annotations.yaml`` in ``DIR``) lists the report's judged
samples, each with ``score: null`` to fill in; it holds no judge score or reason, so whoever labels
is not anchored by the judge. ``--html PAGE`` writes a self-contained labelling page
(:mod:`pytest_omk.report.html.labelling`) that builds the ``annotations.yaml`` text as one labels.
``--sample N --seed S`` picks N samples stratified across the judge's scores (rounded), so the
labels cover the judge's low scores as well as its high ones.

The report is hostile input (anyone can hand one over): it is read with the ``render`` command's
checks (a pytest-omk report, bounded nesting) and each sample must be a valid record; the texts it
holds reach the page only escaped.
"""

from __future__ import annotations

import argparse
import random
import stat
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from pytest_omk.errors import ConfigError
from pytest_omk.loading.report_file import read_report
from pytest_omk.models.report import SampleRecord

USAGE_ERROR = 4
MAX_REPORT_BYTES = 1 << 30
"""Largest report read (a 10,000-sample report is about 30 MB)."""


def add_command(commands: Any) -> None:
    """Register ``gold init`` under ``python -m pytest_omk``'s subcommands."""
    gold = commands.add_parser("gold", help="gold datasets for --omk-gold: gold init REPORT DIR",
                               description="Gold datasets (omk's format) for judge calibration.")  # fmt: skip
    actions = gold.add_subparsers(dest="gold_command", required=True, metavar="ACTION")
    init = actions.add_parser(
        "init",
        help="write a blind dataset skeleton for a report's judged samples",
        description="Write metadata.yaml and annotations.yaml (score: null to fill in) for the judged "
        "samples of a --omk-report file, without the judge's scores.",
    )
    init.add_argument("report", type=Path, metavar="REPORT", help="a --omk-report file")
    init.add_argument("directory", type=Path, metavar="DIR", help="the dataset directory to write")
    init.add_argument("--html", type=Path, metavar="PAGE", help="also write a labelling page here")
    init.add_argument(
        "--sample", type=int, metavar="N", help="label only N samples, stratified by judge score"
    )
    init.add_argument(
        "--seed", type=int, default=0, metavar="S", help="seed of --sample's choice (default 0)"
    )
    init.add_argument("--annotator", default="YOUR-NAME", help="metadata.annotator (default YOUR-NAME)")
    init.set_defaults(handler=run_init)


def judged_records(document: Mapping[str, Any], report: Path) -> list[SampleRecord]:
    """The report's samples with a judge score, one per sample id (the first variant's)."""
    samples = document.get("samples")
    if not isinstance(samples, list):
        raise ConfigError(f"{report}: samples must be a list")
    chosen: dict[str, SampleRecord] = {}
    for index, raw in enumerate(samples):
        try:
            record = SampleRecord.of(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "the sample"
            raise ConfigError(
                f"{report}: samples[{index}] is not a pytest-omk record ({where}: {first['msg']})"
            ) from None
        if record.scores.judge is not None and record.sample_id not in chosen:
            chosen[record.sample_id] = record
    return list(chosen.values())


def stratified(records: Sequence[SampleRecord], count: int, seed: int) -> list[SampleRecord]:
    """``count`` records drawn in turn from each judge score (rounded to a whole point), in a seeded
    random order within each; the result keeps the report's order."""
    if count >= len(records):
        return list(records)
    rng = random.Random(seed)
    strata: dict[int, list[int]] = {}
    for index, record in enumerate(records):
        strata.setdefault(round(record.scores.judge or 0), []).append(index)
    for members in strata.values():
        rng.shuffle(members)
    picked: list[int] = []
    while len(picked) < count:
        for score in sorted(strata):
            if strata[score] and len(picked) < count:
                picked.append(strata[score].pop())
    return [records[i] for i in sorted(picked)]


def skeleton(records: Sequence[SampleRecord], annotator: str) -> tuple[str, str]:
    """``metadata.yaml`` and ``annotations.yaml``: blind (no judge score), every score null."""
    metadata = {
        "metadata": {
            "annotator": annotator,
            "annotatedAt": datetime.now(UTC).date().isoformat(),
            "version": "0.1",
            "scale": {"min": 1, "max": 5},
            "notes": "Written by python -m pytest_omk gold init; fill in every score (1-5) before use.",
        }
    }
    rows = {"annotations": [{"sample_id": r.sample_id, "score": None, "reason": ""} for r in records]}
    # safe_dump quotes what needs it (a date-like or yes/no id, markup, control characters).
    dump = {"allow_unicode": False, "sort_keys": False, "width": 100}
    return yaml.safe_dump(metadata, **dump), yaml.safe_dump(rows, **dump)  # type: ignore[call-overload]


def _check_file(path: Path) -> None:
    """A regular file of a bounded size: a FIFO would block the read, a device never end it."""
    try:
        info = path.stat()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path} is not a regular file (a FIFO, a device, a socket or a directory)")
    if info.st_size > MAX_REPORT_BYTES:
        raise ConfigError(f"{path} is {info.st_size:,} bytes; a report may have at most {MAX_REPORT_BYTES:,}")


def run_init(args: argparse.Namespace) -> int:
    """The command's body: read, choose, write; 4 on unusable input, 1 when a file cannot be written."""
    try:
        _check_file(args.report)
        document = read_report(args.report)
        records = judged_records(document, args.report)
        if args.sample is not None and args.sample < 1:
            raise ConfigError(f"--sample must be at least 1, not {args.sample}")
        if not records:
            raise ConfigError(f"{args.report}: no sample has a judge score (nothing to label)")
        present = sorted(p.name for p in args.directory.glob("*.y*ml")) if args.directory.is_dir() else []
        if present:
            raise ConfigError(
                f"{args.directory} already has YAML files ({', '.join(present)}); choose another directory"
            )
    except ConfigError as exc:
        print(f"pytest-omk gold init: {exc}", file=sys.stderr)
        return USAGE_ERROR
    chosen = stratified(records, args.sample, args.seed) if args.sample else records
    metadata, annotations = skeleton(chosen, args.annotator)
    try:
        args.directory.mkdir(parents=True, exist_ok=True)
        (args.directory / "metadata.yaml").write_text(metadata, encoding="utf-8")
        (args.directory / "annotations.yaml").write_text(annotations, encoding="utf-8")
        if args.html is not None:
            from pytest_omk.report.html.labelling import render_labelling

            args.html.write_text(render_labelling(chosen), encoding="utf-8")
    except OSError as exc:
        print(f"pytest-omk gold init: cannot write: {exc}", file=sys.stderr)
        return 1
    page = f" and the labelling page {args.html}" if args.html is not None else ""
    print(f"pytest-omk gold init: {len(chosen)} samples to label in {args.directory}{page}", file=sys.stderr)
    return 0
