"""80 columns: the scores table keeps every sample id whole (the A/B example's ids included)."""

from __future__ import annotations

import shutil

import pytest

from tests.support import REPO, OmkRun, load_report


def scores_table(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "omk scores" in line) + 1
    end = lines.index("", start)
    return lines[start:end]


def test_ab_compare_table_keeps_every_sample_id_at_80_columns(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(REPO / "examples" / "ab-compare", pytester.path, dirs_exist_ok=True)
    monkeypatch.setenv("COLUMNS", "80")
    result = omk_run("--omk-record-mode=none", "-p", "no:cacheprovider", "--omk-report=r.json")
    table = scores_table(result.stdout.str())
    assert max(map(len, table)) <= 80, table
    assert not any("…" in line for line in table), table
    ids = [f"{s['sample_id']}[{s['variant']}]" for s in load_report(pytester.path / "r.json")["samples"]]
    assert len(ids) == 16
    shown = [line.split()[0] for line in table[1:] if line.strip()]
    for sample_id in ids:
        assert sample_id in shown, (sample_id, table)
