"""The smaller points of issue 51 (item 10): what the terminal says under other plugins."""

from __future__ import annotations

import re

import pytest

from tests.support import OmkRun, load_report, sample, write_sample_set

IDS = [f"s{n}" for n in range(8)]
CHECK = [{"type": "contains", "value": "s"}]


def table_ids(out: str) -> list[str]:
    """The sample ids of the score table's rows, top to bottom."""
    table = out.split("omk scores", 1)[1].split("mean:", 1)[0]
    return re.findall(r"^(?:eval-samples\.json::)?(s\d)\s", table, flags=re.MULTILINE)


def test_under_randomly_the_score_table_follows_the_collection_order(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_sample_set(pytester, *(sample(i, f"prompt {i}", assertions=CHECK) for i in IDS))
    result = omk_run("--omk-executor", "echo", "-p", "randomly", "-p", "no:cacheprovider",
                     "--randomly-seed=3", "-v", "--omk-report", "r.json")  # fmt: skip
    assert result.ret == 0
    ran = re.findall(r"eval-samples\.json::(s\d) PASSED", result.stdout.str())
    assert sorted(ran) == IDS and ran != IDS  # randomly did shuffle the run
    assert table_ids(result.stdout.str()) == IDS
    assert [s["sample_id"] for s in load_report(pytester.path / "r.json")["samples"]] == IDS


INTERRUPT_AT_S3 = """
def pytest_runtest_setup(item):
    if item.nodeid.endswith("::s3"):
        raise KeyboardInterrupt
"""


@pytest.mark.multiprocess
def test_ctrl_c_says_how_many_samples_were_not_run(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    pytester.makeconftest(INTERRUPT_AT_S3)
    write_sample_set(pytester, *(sample(i, f"prompt {i}", assertions=CHECK) for i in IDS[:6]))
    result = omk_run("--omk-executor", "echo", subprocess=True)  # Ctrl-C would end this session too
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["omk: interrupted: 3 of 6 samples not run"])
