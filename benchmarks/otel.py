"""``--omk-otel``'s cost: the same run with its trace exported to a loopback OTLP/HTTP receiver.

N samples answered by a canned Python executor (no model, no recordings, so the run is mostly the
plugin's own work and the telemetry's share shows), three variants interleaved, :data:`ROUNDS`
runs each, medians used: without the option (the floor), with ``--omk-otel``, and with
``--omk-otel --omk-otel-content``. The receiver decodes what it is sent with the official protobuf
definitions (``tests/support/otlp.py``) and counts the sample spans: a figure counts only for a run
whose spans all arrived.
"""

from __future__ import annotations

from benchmarks import _support as s
from benchmarks.samples import make_samples, write_canned_executor, write_samples
from tests.support.otlp import OtlpReceiver

FULL, QUICK = 2_000, 300
ROUNDS = 3
TARGET = 1.3
"""The trace may add at most this ratio to the run without it (a first budget, docs/telemetry.md)."""


def run(quick: bool) -> list[s.Row]:
    count = QUICK if quick else FULL
    receiver = OtlpReceiver().start()
    env = s.base_env({"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
    env.pop("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", None)
    variants = {
        "no trace": (),
        "--omk-otel": ("--omk-otel",),
        "with content": ("--omk-otel", "--omk-otel-content"),
    }
    runs: dict[str, list[s.RunResult]] = {name: [] for name in variants}
    try:
        with s.workdir("otel") as root:
            s.project_file(root)
            spec = write_canned_executor(root)
            write_samples(root, make_samples(count, rubric=0, assertions=3))
            base = ("-q", "--omk-executor", spec, "--omk-record-mode", "off", "--omk-judge", "none")
            for index in range(ROUNDS):
                for name in s.rotated(list(variants), index):
                    receiver.spans.clear()
                    result = s.run_pytest(*base, *variants[name], cwd=root, env=env, expect={"passed": count})
                    sent = sum(span.name.startswith("omk.sample ") for span in receiver.spans)
                    if variants[name] and sent != count:
                        raise s.BenchmarkError(f"otel: {name} delivered {sent} of {count} sample spans")
                    runs[name].append(result)
    finally:
        receiver.stop()
    floor = s.median_run(runs["no trace"])
    notes = (
        f"otel: {count:,} samples × 3 assertions, canned executor; walls of {ROUNDS} interleaved runs — "
        + "; ".join(f"{name} {s.walls(runs[name])} s" for name in variants)
        + f"; peak RSS without {floor.peak_rss_mb:.0f} MB, with "
        f"{s.median_run(runs['--omk-otel']).peak_rss_mb:.0f} MB",
    )
    return [
        s.target_row(
            f"{count:,} samples, {name} vs no trace",
            s.median_run(runs[name]).wall,
            floor.wall,
            reference_label="no trace",
            limit=TARGET,
            notes=notes if name == "with content" else (),
        )
        for name in ("--omk-otel", "with content")
    ]
