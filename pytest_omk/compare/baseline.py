"""Compare a run with a stored baseline report (``--omk-baseline``) and find regressions.

Samples are matched on (file, ``sample_id``, variant). Layer means are compared on the matched
samples only (each layer over the samples that have it in both runs), so selecting a subset with
``-k`` compares like with like. With ``--omk-fail-on-regression X`` a regression is:

- a layer whose mean dropped by more than ``X`` (per variant when variants are used);
- a sample that passed in the baseline and now failed (or errored).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_omk.errors import BudgetExhausted, ConfigError
from pytest_omk.grade.stats import mean2
from pytest_omk.js.numbers import round2

DELTA_LAYERS = ("composite", "fact", "behavior", "judge", "assertions")
GATE_LAYERS = ("composite", "fact", "behavior", "judge")
"""The layers the gate watches (the flat assertion score is shown, not gated)."""
CHANGE_THRESHOLD = 0.01
"""A sample is listed as changed when its outcome changed or its composite moved by more than this."""
_FAILING = ("failed", "error")
_STILL_FAILING = ("failed", "xfailed")
_EPSILON = 1e-9

SampleKey = tuple[str, str, str | None]


def load_baseline(path: Path) -> dict[str, Any]:
    """Read an earlier ``--omk-report`` document; :class:`ConfigError` when it is not one."""
    # Imported here: the record models are not built when the plugin loads (a run without a
    # baseline never needs them this early).
    from pytest_omk.loading.report_file import check_records, read_report

    try:
        document = read_report(path)
    except ConfigError as exc:
        raise ConfigError(f"--omk-baseline: {exc}") from None
    samples = document.get("samples")
    if not isinstance(samples, list):
        raise ConfigError(f"--omk-baseline: {path} has no valid 'samples' list")
    try:
        # Strictly, as the writer wrote them: a carried record (--omk-changed) becomes this run's
        # result, and a NaN score or a string line must stop the run here, not at its end.
        check_records(path, samples)
    except ConfigError as exc:
        raise ConfigError(f"--omk-baseline: {exc}") from None
    return document


def check_overlap(baseline: Mapping[str, Any], nodeids: Iterable[str], *, path: str) -> None:
    """Refuse a regression gate whose baseline holds none of the selected items: it would compare
    nothing and pass (:class:`ConfigError`)."""
    known = [str(row["nodeid"]) for row in baseline["samples"] if isinstance(row.get("nodeid"), str)]
    selected = list(nodeids)
    if set(known).isdisjoint(selected):
        example = f", such as {known[0]}" if known else ""
        raise ConfigError(
            f"--omk-fail-on-regression: none of the {len(selected)} selected items is in the baseline "
            f"{path} ({len(known)} samples{example}), so the gate would compare nothing; give the report "
            "of these samples as --omk-baseline"
        )


def _key(row: Mapping[str, Any]) -> SampleKey:
    return (str(row["file"]), str(row["sample_id"]), row.get("variant"))


def _delta(current: float | None, before: float | None) -> float | None:
    return None if current is None or before is None else round2(current - before)


def _layer_means(pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Per layer: baseline and current mean over the pairs that have the layer in both, and the delta."""
    means: dict[str, dict[str, Any]] = {}
    for layer in DELTA_LAYERS:
        both = [
            (old["scores"].get(layer), new["scores"].get(layer))
            for old, new in pairs
            if old["scores"].get(layer) is not None and new["scores"].get(layer) is not None
        ]
        before, after = mean2(b for b, _ in both), mean2(a for _, a in both)
        means[layer] = {
            "baseline": before,
            "current": after,
            "delta": _delta(after, before),
            "samples": len(both),
        }
    return means


def _sample_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    deltas = {layer: _delta(new["scores"].get(layer), old["scores"].get(layer)) for layer in DELTA_LAYERS}
    return {
        "nodeid": new["nodeid"],
        "sample_id": new["sample_id"],
        "variant": new.get("variant"),
        "baselineOutcome": old.get("outcome"),
        "outcome": new.get("outcome"),
        "baselineScores": {layer: old["scores"].get(layer) for layer in DELTA_LAYERS},
        "scores": {layer: new["scores"].get(layer) for layer in DELTA_LAYERS},
        "deltas": deltas,
    }


def _same_result(before: Any, after: Any) -> bool:
    """A failure again is no change, reported ``failed`` or (a known failure) ``xfailed``."""
    return before == after or (before in _STILL_FAILING and after in _STILL_FAILING)


def compare_with_baseline(
    rows: Sequence[Mapping[str, Any]],
    baseline: Mapping[str, Any],
    *,
    path: str,
    threshold: float | None,
) -> dict[str, Any]:
    """The report's ``baseline`` section: matched counts, layer deltas, changed samples, regressions."""
    before = {_key(s): s for s in baseline["samples"]}
    # A sample the budget stopped did not run: it counts as not run, never as a regression.
    now = {_key(r): r for r in rows if not str(r.get("skipReason") or "").startswith(BudgetExhausted.PREFIX)}
    pairs = [(before[k], r) for k, r in now.items() if k in before]
    variants = list(dict.fromkeys(new.get("variant") for _, new in pairs))
    layers: list[dict[str, Any]] = [
        {"variant": v, "layers": _layer_means([(o, n) for o, n in pairs if n.get("variant") == v])}
        for v in variants
    ]
    changes = [_sample_change(old, new) for old, new in pairs]
    changed = [
        c
        for c in changes
        if not _same_result(c["baselineOutcome"], c["outcome"])
        or (
            c["deltas"]["composite"] is not None
            and abs(c["deltas"]["composite"]) > CHANGE_THRESHOLD + _EPSILON
        )
    ]
    regressions: list[dict[str, Any]] = []
    if threshold is not None:
        for c in changes:
            if c["baselineOutcome"] == "passed" and c["outcome"] in _FAILING:
                dropped = [layer for layer in GATE_LAYERS if (c["deltas"][layer] or 0.0) < 0]
                regressions.append({"kind": "sample", **c, "layers": dropped})
        for group in layers:
            for layer in GATE_LAYERS:
                stats = group["layers"][layer]
                if stats["delta"] is not None and -stats["delta"] > threshold + _EPSILON:
                    regressions.append(
                        {"kind": "layer", "variant": group["variant"], "layer": layer, **stats}
                    )
    return {
        "path": path,
        "matched": len(pairs),
        "new": sum(1 for k in now if k not in before),
        "notRun": sum(1 for k in before if k not in now),
        "threshold": threshold,
        "layers": layers,
        "changed": changed,
        "regressions": regressions,
    }


def regression_message(section: Mapping[str, Any]) -> str | None:
    """One message naming every regressed sample and layer, or ``None`` when there is none."""
    parts = regression_parts(section)
    if not parts:
        return None
    return f"omk: regression against baseline {section['path']}: " + "; ".join(parts)


def regression_parts(section: Mapping[str, Any]) -> list[str]:
    """One line per regressed sample or layer of a report's ``baseline`` section."""
    parts: list[str] = []
    if section.get("threshold") is not None and section.get("matched") == 0:
        parts.append("no sample of this run is in the baseline (0 matched): the gate compared nothing")
    for r in section.get("regressions") or []:
        where = f" [variant {r['variant']}]" if r.get("variant") else ""
        if r["kind"] == "sample":
            layers = ", ".join(
                f"{layer} {r['baselineScores'][layer]:.2f} -> {r['scores'][layer]:.2f}"
                for layer in r["layers"]
            )
            parts.append(
                f"sample {r['nodeid']} {r['baselineOutcome']} -> {r['outcome']}"
                + (f" ({layers})" if layers else "")
            )
        else:
            parts.append(
                f"layer {r['layer']}{where} mean {r['baseline']:.2f} -> {r['current']:.2f} "
                f"({r['delta']:+.2f}, allowed -{section['threshold']:g})"
            )
    return parts
