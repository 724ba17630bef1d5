"""Merge the JSON reports of ``--omk-shard K/N`` runs into the report one run would have written.

The samples are concatenated in shard order (the shards are contiguous blocks of one collection
order), then everything derived from them is recomputed with the code a run uses: the summary, the
variant means and comparisons, the repeat statistics they carry, the coverage and the baseline gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_omk.compare.analysis import analyze
from pytest_omk.compare.baseline import load_baseline, regression_message
from pytest_omk.compare.variants import Variant
from pytest_omk.config.shard import Shard, parse_shard
from pytest_omk.errors import ConfigError
from pytest_omk.loading.report_file import read_valid_report
from pytest_omk.report.json_report import build_document
from pytest_omk.report.merge_budget import merged_budget
from pytest_omk.report.recompute import recomputed_outcome, worse
from pytest_omk.report.shard_checks import check_same_collection, check_shard, worst_exit
from pytest_omk.report.terminal import summarize

_FAILING = ("failed", "error")


@dataclass(frozen=True)
class Merged:
    """The merged document and what a run would have concluded from it."""

    document: dict[str, Any]
    regression: str | None
    """The baseline gate's message when it tripped (``--omk-fail-on-regression``)."""
    stopped: tuple[str, ...] = ()
    """The shards that stopped on their part of the budget (``"2/4 (3 samples not run)"``)."""

    @property
    def failed(self) -> bool:
        """Whether the one run would have exited with failures (a failed sample or the gate)."""
        outcomes = self.document["summary"]["outcomes"]
        return self.regression is not None or any(outcomes.get(o) for o in _FAILING)

    @property
    def exit_status(self) -> int:
        """The one run's exit status: the worst of the shards' (a failed ordinary test, a collection
        or internal error included) and of the merged samples and gate."""
        return worst_exit([1 if self.failed else 0, int(self.document.get("exitStatus", 0))])


def _shard_of(path: Path, document: Mapping[str, Any]) -> Shard | None:
    spec = document.get("config", {}).get("shard")
    if spec is None:
        return None
    try:
        return parse_shard(str(spec))
    except ConfigError as exc:
        raise ConfigError(f"{path}: config.shard: {exc}") from None


def order_shards(reports: Sequence[tuple[Path, dict[str, Any]]]) -> list[tuple[Path, dict[str, Any]]]:
    """The reports in shard order; every shard 1..N exactly once, all from one configuration."""
    if not reports:
        raise ConfigError("no reports to merge")
    shards = [_shard_of(path, doc) for path, doc in reports]
    for (path, _), shard in zip(reports, shards, strict=True):
        if shard is None:
            raise ConfigError(f"{path} is not a shard's report (it was written without --omk-shard K/N)")
    counts = {shard.count for shard in shards if shard is not None}
    if len(counts) != 1:
        raise ConfigError(
            f"the reports come from different shard counts: {', '.join(map(str, sorted(counts)))}"
        )
    (count,) = counts
    by_index = {
        shard.index: report for shard, report in zip(shards, reports, strict=True) if shard is not None
    }
    if len(by_index) != len(reports):
        raise ConfigError("a shard is given twice: " + ", ".join(str(s) for s in shards))
    missing = [str(Shard(i, count)) for i in range(1, count + 1) if i not in by_index]
    if missing:
        raise ConfigError(f"shards missing: {', '.join(missing)} (merge needs all {count} reports)")
    _check_same_config([by_index[i] for i in range(1, count + 1)])
    return [by_index[i] for i in range(1, count + 1)]


def _check_same_config(reports: Sequence[tuple[Path, dict[str, Any]]]) -> None:
    first_path, first = reports[0]
    reference = {k: v for k, v in first.get("config", {}).items() if k != "shard"}
    for path, document in reports[1:]:
        config = {k: v for k, v in document.get("config", {}).items() if k != "shard"}
        for key in sorted(set(reference) | set(config)):
            if reference.get(key) != config.get(key):
                raise ConfigError(
                    f"{path} and {first_path} come from different runs: config.{key} is "
                    f"{config.get(key)!r} there and {reference.get(key)!r} here"
                )


def merge_reports(paths: Sequence[Path], *, baseline: Path | None = None, cwd: Path | None = None) -> Merged:
    """Merge the shards' reports at ``paths``; the baseline is read from ``baseline`` or, as the run
    did, from the path in their configuration (relative to ``cwd``)."""
    # Each shard validated whole (models and schema) before any of it is trusted.
    read = [(path, read_valid_report(path)) for path in paths]
    for path, document in read:
        check_shard(path, document)
    reports = order_shards(read)
    check_same_collection(reports)
    rows: list[dict[str, Any]] = [sample for _, document in reports for sample in document["samples"]]
    seen: dict[str, Path] = {}
    for path, document in reports:
        for sample in document["samples"]:
            if sample["nodeid"] in seen:
                raise ConfigError(f"{sample['nodeid']} is in both {seen[sample['nodeid']]} and {path}")
            seen[sample["nodeid"]] = path
    base = cwd or Path.cwd()
    # One run's configuration: no shard, and so no way of cutting shards either.
    config = {
        **reports[0][1]["config"],
        "shard": None,
        **({"shardBy": "count"} if "shardBy" in reports[0][1]["config"] else {}),
    }
    for row in rows:
        # Recomputed from the readings: a shard's stated outcome is never trusted to be green.
        row["outcome"] = worse(row.get("outcome"), recomputed_outcome(row, config))
    baseline_doc = None
    if baseline is not None or config.get("baseline"):
        baseline_doc = load_baseline(baseline or base / str(config["baseline"]))
    analysis = analyze(
        rows,
        # Only the names and the displayed paths are used (the files are not read again).
        variants=[Variant(name, base / shown) for name, shown in (config.get("variants") or {}).items()],
        rootdir=base,
        baseline=baseline_doc,
        baseline_path=config.get("baseline") or "",
        threshold=config.get("failOnRegression"),
    )
    budget, stopped = merged_budget(reports)
    totals = {**summarize(rows), **({"budget": budget} if budget else {})}
    document = build_document(rows, totals, config, analysis, python=reports[0][1].get("python"))
    regression = regression_message(analysis["baseline"] or {})
    document.update(merge_run_fields([doc for _, doc in reports], gate_tripped=regression is not None))
    # One run's collection: this shard's cut is no part of it.
    document["collection"] = {k: v for k, v in reports[0][1]["collection"].items() if k != "shard"}
    return Merged(document, regression, tuple(stopped))


def merge_run_fields(documents: Sequence[Mapping[str, Any]], *, gate_tripped: bool) -> dict[str, Any]:
    """The run-level fields of the shards as one run's: the earliest start, the longest duration (the
    shards run side by side), the worst exit status, every collection error, the summed counts of
    ordinary tests, the first shard's environment. Reports without them (older ones) add nothing."""
    if not all("exitStatus" in doc for doc in documents):
        return {}
    other: dict[str, int] = {}
    for doc in documents:
        for name, count in doc.get("otherTests", {}).items():
            other[name] = other.get(name, 0) + int(count)
    exit_status = worst_exit(int(doc["exitStatus"]) for doc in documents)
    return {
        "exitStatus": worst_exit([exit_status, 1]) if gate_tripped else exit_status,
        "startedAt": min(str(doc["startedAt"]) for doc in documents),
        "durationS": max(float(doc["durationS"]) for doc in documents),
        "environment": documents[0]["environment"],
        "collectionErrors": [error for doc in documents for error in doc.get("collectionErrors", [])],
        "otherTests": {"total": other.pop("total", 0), **dict(sorted(other.items()))},
    }
