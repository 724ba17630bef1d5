"""Valid files load; legacy and v1 upstream files are refused clearly; split directories behave.

The suite's own files (``tests/data/valid``, ``tests/data/legacy``) cover every rule; the upstream
files are the format owner's own (``shared/upstream-samples``, skipped when absent), classified as
in the table at the end of ``spec/omk-semantics.md`` (§15).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.errors import SampleFileError
from pytest_omk.loading import load_directory, load_file
from pytest_omk.loading.load import split_directory_files
from pytest_omk.loading.validate import validate_document
from pytest_omk.models import AssertSet

VALID_DIR = Path(__file__).resolve().parents[2] / "data" / "valid"
LEGACY_DIR = Path(__file__).resolve().parents[2] / "data" / "legacy"
LEGACY_OWN = sorted(p for p in LEGACY_DIR.iterdir() if p.suffix in (".json", ".yaml") and p.stem != "v1")


def _any(value: object) -> Any:
    """Type-specific attributes (``type``, ``value``) without narrowing the assertion union."""
    return value


UPSTREAM_V2 = {
    "examples/agent-runtime/eval-samples.json": 2,
    "examples/custom-executor/eval-samples.json": 2,
    "examples/skill-map-showcase/skills/release-readiness/.omk/eval-samples.json": 3,
    "test/fixtures/agent-eval/control-experiments/artifact-injection.eval-samples.json": 2,
    "test/fixtures/agent-eval/control-experiments/assertion-discrimination.eval-samples.json": 2,
    "test/fixtures/agent-eval/control-experiments/env-isolation.eval-samples.json": 2,
    "test/fixtures/code-review/eval-samples.json": 5,
    "test/fixtures/custom-executor/eval-samples.json": 2,
    "test/fixtures/mcp-observation/eval-samples.json": 7,
    "test/fixtures/multi-skills/skills/classifier/.omk/eval-samples.json": 2,
    "test/fixtures/multi-skills/skills/summarizer/.omk/eval-samples.json": 1,
    "test/fixtures/multi-skills/skills/translator/.omk/eval-samples.json": 1,
}
"""Every valid v2 upstream file and its number of samples."""

UPSTREAM_V1 = {"examples/code-review-ab/eval-samples.json"}
UPSTREAM_GOLD = {
    "examples/gold-dataset/gold/annotations.yaml",
    "examples/gold-dataset/gold/metadata.yaml",
    "snapshot-0.23.0/examples/gold-dataset/gold/annotations.yaml",
    "snapshot-0.23.0/examples/gold-dataset/gold/metadata.yaml",
    "test/fixtures/eval-core/scoring-equivalence-v1.json",
}
"""Annotation and scoring data: not sample files at all, so they must not load either."""


def upstream_files(root: Path) -> list[str]:
    """Every JSON/YAML file below ``root``, hidden folders (``.omk/``) included."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.suffix in (".json", ".yaml", ".yml")
    )


def legacy_files(root: Path) -> list[str]:
    return [
        f
        for f in upstream_files(root)
        if f not in UPSTREAM_V2 and f not in UPSTREAM_V1 and f not in UPSTREAM_GOLD
    ]


def test_upstream_table_matches_the_folder(upstream_samples: Path) -> None:
    files = upstream_files(upstream_samples)
    assert set(UPSTREAM_V2) | UPSTREAM_V1 | UPSTREAM_GOLD <= set(files)
    # Hidden skill folders are part of the walk, or the .omk files would be missed silently.
    assert sum("/.omk/" in f for f in files) == 5
    assert len(legacy_files(upstream_samples)) >= 25


@pytest.mark.parametrize("name", sorted(UPSTREAM_V2))
def test_upstream_v2_file_loads(upstream_samples: Path, name: str) -> None:
    path = upstream_samples / name
    bundle = load_file(path)
    assert len(bundle.samples) == UPSTREAM_V2[name]
    assert len(json.loads(path.read_text(encoding="utf-8"))["samples"]) == UPSTREAM_V2[name]
    assert [s.index for s in bundle.samples] == list(range(UPSTREAM_V2[name]))
    assert all(s.source == path for s in bundle.samples)
    assert bundle.base_dir == path.parent


def test_upstream_v2_details_survive_loading(upstream_samples: Path) -> None:
    code_review = load_file(upstream_samples / "test/fixtures/code-review/eval-samples.json")
    weights = [d.weight for d in (code_review.samples[0].sample.rubric or {}).values()]
    assert weights == [0.3333333333333333] * 3
    showcase = load_file(
        upstream_samples / "examples/skill-map-showcase/skills/release-readiness/.omk/eval-samples.json"
    )
    assert any(s.sample.covers for s in showcase.samples)
    runtime = load_file(upstream_samples / "examples/agent-runtime/eval-samples.json")
    assert runtime.samples[0].sample.cwd == "./workspace"


def assert_rejected_as_legacy(path: Path, name: str) -> None:
    """``path`` is refused, naming ``schemaVersion``: as a bare array, or as a root without it."""
    with pytest.raises(SampleFileError) as info:
        load_file(path, display=name)
    error = info.value
    assert error.message.startswith(name)
    assert "schemaVersion" in error.reason, error.message
    text = path.read_text(encoding="utf-8")
    first_line = next(
        line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    )
    if first_line.lstrip().startswith(("[", "-")):
        assert error.where == "$", error.message
        assert error.reason.startswith("legacy top-level array is not supported"), error.message
    else:
        assert error.where == "schemaVersion", error.message
        assert "schemaVersion is missing" in error.reason


def assert_rejected_as_v1(path: Path) -> None:
    with pytest.raises(SampleFileError) as info:
        load_file(path)
    assert info.value.where == "schemaVersion"
    assert "unsupported schemaVersion 'omk.eval-sample-set/v1'" in info.value.reason
    assert "expected 'omk.eval-sample-set/v2'" in info.value.reason


@pytest.mark.parametrize("path", LEGACY_OWN, ids=lambda p: p.name)
def test_legacy_files_are_rejected_clearly(path: Path) -> None:
    assert_rejected_as_legacy(path, f"legacy/{path.name}")


def test_v1_file_is_rejected_naming_the_version() -> None:
    assert_rejected_as_v1(LEGACY_DIR / "v1.json")


def test_legacy_upstream_files_are_rejected_clearly(upstream_samples: Path) -> None:
    for name in legacy_files(upstream_samples):
        assert_rejected_as_legacy(upstream_samples / name, name)


def test_v1_upstream_file_is_rejected_naming_the_version(upstream_samples: Path) -> None:
    for name in UPSTREAM_V1:
        assert_rejected_as_v1(upstream_samples / name)


@pytest.mark.parametrize("name", sorted(UPSTREAM_GOLD))
def test_gold_data_is_not_a_sample_file(upstream_samples: Path, name: str) -> None:
    with pytest.raises(SampleFileError, match="schemaVersion"):
        load_file(upstream_samples / name)


def assert_wrapped_legacy_names_the_keys(legacy: Any) -> None:
    # Upgrading only the root is not enough: the old per-sample fields are named one by one.
    document = {"schemaVersion": "omk.eval-sample-set/v2", "samples": legacy}
    with pytest.raises(SampleFileError) as located:
        validate_document(document, path="wrapped.json", text=None)
    assert located.value.where == "samples[0].rubric"
    assert "a string rubric is the legacy format" in located.value.reason
    assert "also samples[0].dimensions: unknown key" in located.value.reason


def test_legacy_samples_wrapped_in_a_v2_root_name_the_offending_keys() -> None:
    legacy = json.loads((LEGACY_DIR / "no-version.json").read_text(encoding="utf-8"))["samples"]
    assert_wrapped_legacy_names_the_keys(legacy)


def test_upstream_legacy_samples_wrapped_in_a_v2_root(upstream_samples: Path) -> None:
    path = upstream_samples / "examples/agent-eval/eval-samples.json"
    assert_wrapped_legacy_names_the_keys(json.loads(path.read_text(encoding="utf-8")))


# --- valid documents written for this suite -----------------------------------------------------


@pytest.mark.parametrize("path", sorted(VALID_DIR.iterdir()), ids=lambda p: p.name)
def test_valid_corpus_loads(path: Path) -> None:
    assert load_file(path).samples


def test_every_assertion_type_is_in_the_valid_corpus() -> None:
    from pytest_omk.models import ASSERTION_CLASSES
    from pytest_omk.models.sample import iter_leaves

    seen: set[str] = set()
    for path in VALID_DIR.iterdir():
        for loaded in load_file(path).samples:
            for assertion in loaded.sample.assertions or []:
                seen.add(_any(assertion).type)
                seen.update(_any(leaf).type for leaf in iter_leaves(assertion))
    assert seen == set(ASSERTION_CLASSES)


def test_yaml_is_read_as_yaml_1_2() -> None:
    bundle = load_file(VALID_DIR / "features.yaml")
    first, merged, dated = (s.sample for s in bundle.samples)
    checks: list[Any] = list(first.assertions or [])
    assert [a.value for a in checks if a.type in ("max_length", "min_length")] == [1000, 10]
    assert checks[0].values == ["no", "yes", "on", "off", "2026-09-04"]
    assert checks[3].schema_ == {"enum": ["yes", "no", "2026-09-04"]}
    assert (merged.sample_id, merged.prompt, merged.difficulty) == ("yaml-merged", first.prompt, "hard")
    assert dated.sample_id == "2026-09-04"
    assert dated.mocks is not None and dated.mocks[0].match is not None
    assert dated.mocks[0].match.input == {"dry_run": "yes"}
    assert dated.mocks[0].return_ == {"ok": True, "note": "off"}
    assert load_file(VALID_DIR / "bom.yaml").samples[0].sample.sample_id == "bom"


def test_edge_values_load_as_written() -> None:
    sample = load_file(VALID_DIR / "edge-values.json").samples[0].sample
    by_type: dict[str, Any] = {_any(a).type: a for a in sample.assertions or []}
    assert by_type["rouge_n_min"].n == 2
    assert by_type["cost_max"].value == 2**53 - 1
    assert by_type["mock_hit"].value == "mcp__server__tool:10"
    assert isinstance(by_type["assert-set"], AssertSet)


# --- split directories ----------------------------------------------------------------------------


def _write(directory: Path, name: str, *ids: str, requires: dict[str, list[str]] | None = None) -> Path:
    document: dict[str, object] = {
        "schemaVersion": "omk.eval-sample-set/v2",
        "samples": [{"sample_id": i, "prompt": f"prompt of {i}"} for i in ids],
    }
    if requires is not None:
        document["requires"] = requires
    path = directory / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_split_directory_loads_in_utf16_name_order(tmp_path: Path) -> None:
    # U+FF5E sorts after an astral character's UTF-16 high surrogate (D83D) but before the astral
    # code point itself: JavaScript's order and Python's default order disagree exactly here.
    for name, sid in [
        ("b.json", "b"),
        ("a.yaml", "a"),
        ("Z.yml", "Z"),
        ("é.json", "e"),
        ("\U0001f600.json", "smile"),
        ("\uff5e.json", "tilde"),
    ]:
        _write(tmp_path, name, sid)
    bundle = load_directory(tmp_path)
    assert [s.sample.sample_id for s in bundle.samples] == ["Z", "a", "b", "e", "smile", "tilde"]
    assert sorted(["\U0001f600", "\uff5e"]) == ["\uff5e", "\U0001f600"]  # Python alone would differ
    assert bundle.base_dir == tmp_path and bundle.path == tmp_path
    assert [p.name for p in bundle.files] == [
        "Z.yml",
        "a.yaml",
        "b.json",
        "é.json",
        "\U0001f600.json",
        "\uff5e.json",
    ]
    assert bundle.samples[0].source == tmp_path / "Z.yml"


def test_split_directory_skips_reports_health_underscore_and_other_files(tmp_path: Path) -> None:
    _write(tmp_path, "cases.json", "kept")
    for skipped in [
        "report.json",
        "Report-2026.yaml",
        "HEALTH.json",
        "health_check.yml",
        "_draft.json",
        "_x.YAML",
        "notes.txt",
        "README.md",
    ]:
        (tmp_path / skipped).write_text("{ not a sample file", encoding="utf-8")
    (tmp_path / "nested.json").mkdir()
    bundle = load_directory(tmp_path)
    assert [s.sample.sample_id for s in bundle.samples] == ["kept"]
    assert [p.name for p in split_directory_files(tmp_path)] == ["cases.json"]


def test_split_directory_lists_upper_case_suffixes_but_parses_them_as_json(tmp_path: Path) -> None:
    # Upstream quirk kept on purpose: X.YAML is listed (case-insensitive match) but only a
    # lower-case .yaml/.yml suffix selects the YAML parser.
    (tmp_path / "data.YAML").write_text(
        "schemaVersion: omk.eval-sample-set/v2\nsamples: []\n", encoding="utf-8"
    )
    with pytest.raises(SampleFileError, match="invalid JSON") as info:
        load_directory(tmp_path, display="split")
    assert info.value.path == "split/data.YAML"


def test_split_directory_duplicate_id_names_both_files(tmp_path: Path) -> None:
    _write(tmp_path, "a.json", "one", "shared")
    _write(tmp_path, "b.json", "two")
    _write(tmp_path, "c.json", "shared")
    with pytest.raises(SampleFileError) as info:
        load_directory(tmp_path, display="suite")
    assert info.value.path == "suite"
    assert 'duplicate sample_id "shared"' in info.value.reason
    assert '"a.json"' in info.value.reason and '"c.json"' in info.value.reason


def test_split_directory_merges_requires_per_key_in_first_seen_order(tmp_path: Path) -> None:
    _write(tmp_path, "1.json", "a", requires={"tools": ["git", "make"], "env": ["HOME"]})
    _write(tmp_path, "2.json", "b")
    _write(tmp_path, "3.json", "c", requires={"tools": ["make", "node", "git"], "files": ["data.csv"]})
    bundle = load_directory(tmp_path)
    assert bundle.requires is not None
    assert bundle.requires.tools == ["git", "make", "node"]
    assert bundle.requires.env == ["HOME"]
    assert bundle.requires.files == ["data.csv"]
    assert bundle.requires.preflight is None


def test_split_directory_without_requires_has_none(tmp_path: Path) -> None:
    _write(tmp_path, "a.json", "a")
    assert load_directory(tmp_path).requires is None


def test_empty_split_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SampleFileError, match="no sample files found in directory"):
        load_directory(tmp_path)
    (tmp_path / "report.json").write_text("{}", encoding="utf-8")
    (tmp_path / "_skip.yaml").write_text("{}", encoding="utf-8")
    with pytest.raises(SampleFileError, match=r"excluding names starting with report, health or _"):
        load_directory(tmp_path)


def test_missing_split_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SampleFileError, match="cannot read directory"):
        load_directory(tmp_path / "absent", display="absent")


def test_invalid_file_in_split_directory_names_that_file(tmp_path: Path) -> None:
    _write(tmp_path, "a.json", "a")
    (tmp_path / "b.yaml").write_text(
        "schemaVersion: omk.eval-sample-set/v2\nsamples:\n  - sample_id: b\n    prompt: p\n    typo: 1\n",
        encoding="utf-8",
    )
    with pytest.raises(SampleFileError) as info:
        load_directory(tmp_path, display="dir")
    assert (
        info.value.message
        == "dir/b.yaml: samples[0].typo (line 5): unknown key (not part of the omk.eval-sample-set/v2 format)"
    )


def test_split_directory_of_an_upstream_skill_folder(upstream_samples: Path) -> None:
    # --omk-samples <skill>/.omk loads the folder as a split directory.
    bundle = load_directory(upstream_samples / "test/fixtures/multi-skills/skills/classifier/.omk")
    assert len(bundle.samples) == 2
