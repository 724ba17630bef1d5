"""``--omk-variant NAME=PATH`` parsing and per-variant means."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_omk.compare.variants import Variant, parse_variant, parse_variants, variant_summaries
from pytest_omk.errors import ConfigError


@pytest.fixture
def prompts(tmp_path: Path) -> Path:
    (tmp_path / "a.md").write_text("Be brief.", encoding="utf-8")
    (tmp_path / "b.md").write_text("Be thorough.", encoding="utf-8")
    return tmp_path


def test_parse_resolves_relative_paths_against_base(prompts: Path) -> None:
    assert parse_variant("concise=a.md", prompts) == Variant("concise", (prompts / "a.md").resolve())
    assert parse_variant(" v1.2_x-y = b.md ", prompts).name == "v1.2_x-y"


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("concise", "must look like NAME=PATH"),
        ("=a.md", "must look like NAME=PATH"),
        ("concise=", "must look like NAME=PATH"),
        ("with space=a.md", "may only contain"),
        ("a[b]=a.md", "may only contain"),
        ("missing=nope.md", "does not exist"),
    ],
)
def test_invalid_specs_are_config_errors(prompts: Path, spec: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        parse_variant(spec, prompts)


def test_a_directory_is_not_a_prompt_file(prompts: Path) -> None:
    (prompts / "dir").mkdir()
    with pytest.raises(ConfigError, match="does not exist"):
        parse_variant("d=dir", prompts)


def test_names_must_be_unique_and_order_is_kept(prompts: Path) -> None:
    variants = parse_variants(["b=b.md", "a=a.md"], prompts)
    assert [v.name for v in variants] == ["b", "a"]
    with pytest.raises(ConfigError, match="given twice"):
        parse_variants(["a=a.md", "a=b.md"], prompts)
    assert parse_variants([], prompts) == ()


def _row(variant: str, outcome: str, composite: float | None, fact: float | None = None) -> dict[str, object]:
    scores = {"assertions": composite, "fact": fact, "behavior": None, "judge": None, "composite": composite}
    return {"variant": variant, "outcome": outcome, "scores": scores}


def test_variant_summaries_mean_present_scores_only(prompts: Path) -> None:
    variants = parse_variants(["a=a.md", "b=b.md"], prompts)
    rows = [
        _row("a", "passed", 5.0, 5.0),
        _row("a", "failed", 2.33, None),
        _row("a", "error", None),
        _row("b", "passed", 4.0, 3.0),
    ]
    summaries = variant_summaries(rows, variants, prompts)
    assert summaries[0]["name"] == "a" and summaries[0]["path"] == "a.md"
    assert summaries[0]["samples"] == 3
    assert summaries[0]["outcomes"] == {"passed": 1, "failed": 1, "error": 1}
    assert summaries[0]["means"]["composite"] == 3.67  # (5 + 2.33) / 2 = 3.665 → half-up
    assert summaries[0]["means"]["fact"] == 5.0
    assert summaries[0]["means"]["judge"] is None
    assert summaries[1]["means"] == {
        "assertions": 4.0,
        "fact": 3.0,
        "behavior": None,
        "judge": None,
        "composite": 4.0,
    }
