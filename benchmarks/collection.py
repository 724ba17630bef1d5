"""Collection: ``pytest --collect-only -q`` on 10,000 samples (JSON, YAML) against pytest's floor.

The floor is a plain test module with one function parametrized with the same 10,000 ids: what
pytest itself needs to create and list that many items. YAML is compared with the floor plus the
bare parse time of the same file with libyaml's C loader, measured in this process with the garbage
collector paused, as the plugin pauses it while collecting: reading YAML cannot cost less than that.
(With the collector on, the bare parse is several times slower, which once made the plugin look
faster than its own floor.) Scale: 100,000 JSON samples against 10,000, to show collection grows
linearly.
"""

from __future__ import annotations

import gc
import pstats
import time
from pathlib import Path

import yaml

from benchmarks import _support as s
from benchmarks.samples import make_samples, write_samples

FULL, QUICK = 10_000, 2_000
SCALE = 10
"""The large collection run has ``SCALE`` times as many samples."""


def write_floor(directory: Path, ids: list[str]) -> None:
    """A plain module with one test parametrized with ``ids``."""
    (directory / "test_floor.py").write_text(
        "import pytest\n\n"
        f"IDS = {ids!r}\n\n\n"
        '@pytest.mark.parametrize("sample_id", IDS)\n'
        "def test_sample(sample_id):\n"
        "    pass\n",
        encoding="utf-8",
    )


def bare_yaml_parse(path: Path, repeats: int, *, collect_garbage: bool = True) -> float:
    """Best wall time of ``yaml.load(text, Loader=yaml.CSafeLoader)`` (file already read).

    With ``collect_garbage=False`` the cyclic garbage collector is paused while parsing, which
    shows how much of a parse of this size is the collector re-scanning the objects just built.
    """
    text = path.read_text(encoding="utf-8")
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        if not collect_garbage:
            gc.disable()
        try:
            start = time.perf_counter()
            document = yaml.load(text, Loader=yaml.CSafeLoader)
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
        del document
    return best


def run(quick: bool) -> list[s.Row]:
    count = QUICK if quick else FULL
    repeats = 2
    with s.workdir("collection") as root:
        dirs = {name: root / name for name in ("json", "yaml", "floor")}
        for directory in dirs.values():
            directory.mkdir()
            s.project_file(directory)
        samples = make_samples(count)
        write_samples(dirs["json"], samples, fmt="json")
        yaml_file = write_samples(dirs["yaml"], samples, fmt="yaml")
        write_floor(dirs["floor"], [sample["sample_id"] for sample in samples])
        del samples  # so this process's heap does not slow the in-process parse below

        def collect(name: str) -> s.RunResult:
            plugins = () if name == "floor" else ("pytest_omk.plugin",)
            return s.run_pytest("--collect-only", "-q", cwd=dirs[name], expect={}, plugins=plugins)

        # Interleaved rounds, so a burst of load on this shared machine hits every variant alike.
        best: dict[str, s.RunResult] = {}
        for _ in range(repeats):
            for name in dirs:
                result = collect(name)
                _check_collected(result, count, name)
                if name not in best or result.wall < best[name].wall:
                    best[name] = result
        parse_gc_on = bare_yaml_parse(yaml_file, repeats)
        parse = bare_yaml_parse(yaml_file, repeats, collect_garbage=False)
        profiles = {}
        for name in ("json", "yaml"):
            profile = root / f"{name}.prof"
            s.run_pytest(
                "--collect-only",
                "-q",
                cwd=dirs[name],
                expect={},
                prefix=("-m", "cProfile", "-o", str(profile)),
            )
            profiles[name] = profile_breakdown(profile)
        size_json = (dirs["json"] / "eval-samples.json").stat().st_size / 1e6
        size_yaml = yaml_file.stat().st_size / 1e6

    floor = best["floor"].wall
    return [
        *_scale_rows(count, best["json"]),
        s.target_row(
            f"collect {count:,} samples, JSON",
            best["json"].wall,
            floor,
            reference_label="floor",
            limit=1.5,
            notes=[
                f"collection: files {size_json:.1f} MB JSON, {size_yaml:.1f} MB YAML; "
                f"best of {repeats}, interleaved; floor = plain module, 1 function × {count:,} ids"
            ],
        ),
        s.target_row(
            f"collect {count:,} samples, YAML",
            best["yaml"].wall,
            floor + parse,
            reference_label="floor+C parse",
            limit=1.3,
            notes=[
                f"collection: bare CSafeLoader parse of the YAML file {s.fmt(parse)} with the garbage "
                f"collector paused, as the plugin does (in-process, best of {repeats}); "
                f"{s.fmt(parse_gc_on)} with it on (the baseline used before)",
                f"collection: where the time goes (cProfile, cumulative) — JSON: {profiles['json']}",
                f"collection: YAML: {profiles['yaml']}",
            ],
        ),
        s.Row(
            f"collect {count:,}: peak RSS JSON / YAML",
            f"{best['json'].peak_rss_mb:.0f} / {best['yaml'].peak_rss_mb:.0f} MB",
            f"floor {best['floor'].peak_rss_mb:.0f} MB",
            best["json"].peak_rss_mb / best["floor"].peak_rss_mb,
        ),
    ]


def _scale_rows(count: int, small: s.RunResult) -> list[s.Row]:
    """Collect ``SCALE × count`` JSON samples (best of 2) and one sample; compare with ``count``."""
    large_count = count * SCALE
    with s.workdir("collection-scale") as root:
        dirs = {name: root / name for name in ("large", "one")}
        for directory in dirs.values():
            directory.mkdir()
            s.project_file(directory)
        write_samples(dirs["one"], make_samples(1), fmt="json")
        # One file per ``count`` samples: a sample file may be at most 32 MB (the plugin's cap).
        samples = make_samples(large_count)
        size = 0.0
        for part in range(SCALE):
            sub = dirs["large"] / f"part-{part:02d}"
            sub.mkdir()
            size += write_samples(sub, samples[part * count : (part + 1) * count]).stat().st_size / 1e6
        del samples
        best: dict[str, s.RunResult] = {}
        for _ in range(2):
            for name, directory in dirs.items():
                result = s.run_pytest("--collect-only", "-q", cwd=directory, expect={})
                _check_collected(result, large_count if name == "large" else 1, name)
                if name not in best or result.wall < best[name].wall:
                    best[name] = result
    large, fixed = best["large"].wall, best["one"].wall
    marginal = (large - fixed) / (small.wall - fixed) if small.wall > fixed else float("inf")
    return [
        s.target_row(
            f"collect {large_count:,} vs {count:,} samples, JSON",
            large,
            small.wall,
            reference_label=f"{count:,}",
            notes=[
                f"collection: {large_count:,} samples ({SCALE} JSON files, {size:.0f} MB), best of 2, peak RSS "
                f"{best['large'].peak_rss_mb:.0f} MB; a one-sample collection (start-up) takes "
                f"{s.fmt(fixed)}; without it the ratio is {marginal:.2f}× for {SCALE}× the samples"
            ],
        )
    ]


# (label, file suffix, function): cumulative seconds. Parse, validate, markers and items are parts
# of collection; cProfile cannot see the garbage collector's pauses, which land in whatever ran.
_PARTS = [
    ("plugin import", "pytest_omk/plugin/__init__.py", "<module>"),
    ("collection", "_pytest/main.py", "perform_collect"),
    ("  parse", "pytest_omk/loading/parse.py", "parse_text"),
    ("    of which alias check", "pytest_omk/loading/parse.py", "_check_aliases"),
    ("    of which depth check", "pytest_omk/loading/parse.py", "_check_depth"),
    ("  validate", "pytest_omk/loading/validate.py", "validate_document"),
    ("  markers", "pytest_omk/plugin/planning.py", "markers_for"),
    ("  items", "_pytest/python.py", "from_parent"),
    ("gc.collect at exit", "_pytest/unraisableexception.py", "gc_collect_harder"),
]


def profile_breakdown(path: Path) -> str:
    """Cumulative seconds of the parts of a ``--collect-only`` run, from a cProfile dump."""
    table = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    total = max((entry[3] for entry in table.values()), default=0.0)
    parts = [f"total {total:.1f} s"]
    for label, suffix, func in _PARTS:
        seconds = sum(e[3] for (file, _l, name), e in table.items() if name == func and file.endswith(suffix))
        if seconds >= 0.05:
            parts.append(f"{label.strip()} {seconds:.1f} s")
    return ", ".join(parts)


def _check_collected(result: s.RunResult, count: int, name: str) -> None:
    if f"{count} tests collected" not in result.output and f"{count} test collected" not in result.output:
        tail = "\n".join(result.output.strip().splitlines()[-10:])
        raise s.BenchmarkError(f"collect-only ({name}) did not collect {count} items:\n{tail}")
