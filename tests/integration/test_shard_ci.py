"""``--omk-shard auto`` reads each CI system's parallel-job variables, and every way of cutting (by
hand, from the CI, under pytest-randomly) gives N shards whose union is the whole selection, each
item once; what cannot be trusted is a usage error naming the variables."""

from __future__ import annotations

import json
import re

import pytest

from pytest_omk.config.ci_shard import CI_SYSTEMS
from tests.support import OmkRun, load_report, omk_main, sample, write_sample_set
from tests.support.wrapped import unwrapped

EXECUTOR = """
def answer(request):
    return {"output": "fine " + request.prompt, "costUSD": 0.001, "numTurns": 1}
"""
SAMPLES = 11
COMMON = ("--omk-executor=python:answers:answer", "-p", "no:cacheprovider")


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for system in CI_SYSTEMS:  # the outer CI's own variables must not choose the shard here
        monkeypatch.delenv(system.index, raising=False)
        monkeypatch.delenv(system.total, raising=False)
    pytester.syspathinsert()
    pytester.makepyfile(answers=EXECUTOR)
    checks = [{"type": "contains", "value": "fine"}]
    write_sample_set(pytester, *[sample(f"a{i}", f"task {i}", assertions=checks) for i in range(6)],
                     name="one/eval-samples.json")  # fmt: skip
    write_sample_set(pytester, *[sample(f"b{i}", f"job {i}", assertions=checks) for i in range(5)],
                     name="two/eval-samples.json")  # fmt: skip
    return pytester


def selected(result: pytest.RunResult) -> list[str]:
    """The node ids a ``--collect-only -q`` run lists."""
    return [line for line in result.stdout.lines if "eval-samples.json::" in line]


def by_hand(omk_run: OmkRun, k: int, n: int) -> list[str]:
    return selected(omk_run(*COMMON, "--collect-only", "-q", f"--omk-shard={k}/{n}"))


CASES = [  # (system, index value, total value, the shard K/N it means)
    ("GitLab", "1", "3", (1, 3)),
    ("GitLab", "3", "3", (3, 3)),
    ("CircleCI", "0", "3", (1, 3)),
    ("CircleCI", "2", "3", (3, 3)),
    ("Buildkite", "1", "4", (2, 4)),
    ("Azure Pipelines", "2", "2", (2, 2)),
    ("Kubernetes Indexed Job", "0", "2", (1, 2)),
    ("Kubernetes Indexed Job", "3", "4", (4, 4)),
]


@pytest.mark.parametrize(("name", "index", "total", "expected"), CASES)
def test_each_ci_systems_variables_select_the_right_shard(
    project: pytest.Pytester,
    omk_run: OmkRun,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    index: str,
    total: str,
    expected: tuple[int, int],
) -> None:
    (system,) = [s for s in CI_SYSTEMS if s.name == name]
    monkeypatch.setenv(system.index, index)
    monkeypatch.setenv(system.total, total)
    result = omk_run(*COMMON, "--collect-only", "-q", "--omk-shard=auto")
    assert result.ret == 0, result.stderr.str()
    k, n = expected
    assert selected(result) == by_hand(omk_run, k, n) != []
    unwrapped(result).fnmatch_lines(
        [f"omk: shard {k}/{n} from {name} {system.index}={index} {system.total}={total}*"]
    )


def test_the_ini_key_says_auto_too(
    project: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makeini("[pytest]\nomk_shard = auto\n")
    monkeypatch.setenv("CIRCLE_NODE_INDEX", "1")
    monkeypatch.setenv("CIRCLE_NODE_TOTAL", "2")
    assert selected(omk_run(*COMMON, "--collect-only", "-q")) == by_hand(omk_run, 2, 2)
    header = omk_run(*COMMON, "--collect-only")  # the header, which -q leaves out
    unwrapped(header).fnmatch_lines(
        ["omk: shard 2/2 from CircleCI CIRCLE_NODE_INDEX=1 CIRCLE_NODE_TOTAL=2, cut by count"]
    )


@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_union_of_the_shards_is_the_whole_selection_each_item_once(
    project: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch, n: int
) -> None:
    whole = selected(omk_run(*COMMON, "--collect-only", "-q", "-k", "not a3"))
    blocks = []
    for index in range(n):  # as a Kubernetes Indexed Job numbers its pods
        monkeypatch.setenv("JOB_COMPLETION_INDEX", str(index))
        monkeypatch.setenv("OMK_SHARD_TOTAL", str(n))
        blocks.append(selected(omk_run(*COMMON, "--collect-only", "-q", "-k", "not a3", "--omk-shard=auto")))
    union = [nodeid for block in blocks for nodeid in block]
    assert sorted(union) == sorted(whole) and len(union) == len(set(union)) == SAMPLES - 1


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "no CI parallel-job variables are set; it reads CI_NODE_INDEX/CI_NODE_TOTAL (GitLab)"),
        ({"CI_NODE_TOTAL": "3"}, "CI_NODE_TOTAL=3 is set but CI_NODE_INDEX is not (GitLab)"),
        (
            {"CIRCLE_NODE_INDEX": "3", "CIRCLE_NODE_TOTAL": "3"},
            "out of range (CircleCI counts jobs from 0 to 2)",
        ),
        ({"BUILDKITE_PARALLEL_JOB": "x", "BUILDKITE_PARALLEL_JOB_COUNT": "2"}, "must be a whole number"),
        ({"JOB_COMPLETION_INDEX": "1"}, "JOB_COMPLETION_INDEX is set but OMK_SHARD_TOTAL is not"),
        (
            {"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "2", "CIRCLE_NODE_INDEX": "1", "CIRCLE_NODE_TOTAL": "2"},
            "the CI variables disagree: GitLab CI_NODE_INDEX=1 CI_NODE_TOTAL=2 is shard 1/2 but "
            "CircleCI CIRCLE_NODE_INDEX=1 CIRCLE_NODE_TOTAL=2 is shard 2/2",
        ),
    ],
)
def test_what_auto_cannot_trust_is_a_usage_error(
    project: pytest.Pytester,
    omk_run: OmkRun,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    message: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = omk_run(*COMMON, "--omk-shard=auto")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str() and "Traceback" not in result.stderr.str()


@pytest.mark.floor("pytest-randomly")
def test_shards_under_pytest_randomly_cut_the_collection_order(
    project: pytest.Pytester, omk_run: OmkRun
) -> None:
    # Each CI job gets its own seed: the blocks must not depend on it.
    whole = selected(omk_run(*COMMON, "--collect-only", "-q"))
    shuffled = selected(omk_run(*COMMON, "--collect-only", "-q", "-p", "randomly", "--randomly-seed=7"))
    assert sorted(shuffled) == sorted(whole) and shuffled != whole  # randomly does reorder here
    for k, seed in ((1, 11), (2, 22), (3, 33)):
        result = omk_run(*COMMON, "-p", "randomly", f"--randomly-seed={seed}", f"--omk-shard={k}/3",
                         f"--omk-report=shard-{k}.json")  # fmt: skip
        assert result.ret == 0, result.stdout.str()
    ran = [[s["nodeid"] for s in load_report(project.path / f"shard-{k}.json")["samples"]] for k in (1, 2, 3)]
    assert sorted(nodeid for block in ran for nodeid in block) == sorted(whole)
    assert [sorted(block) for block in ran] == [sorted(by_hand(omk_run, k, 3)) for k in (1, 2, 3)]
    merged = omk_main(project.path, "merge", "shard-2.json", "shard-1.json", "shard-3.json", "-o", "m.json")
    assert merged.returncode == 0, merged.stderr
    assert sorted(s["nodeid"] for s in load_report(project.path / "m.json")["samples"]) == sorted(whole)


def test_merge_names_the_order_when_only_the_order_differs(project: pytest.Pytester, omk_run: OmkRun) -> None:
    for k in (1, 2):
        omk_run(*COMMON, f"--omk-shard={k}/2", f"--omk-report=shard-{k}.json")
    # A shard written by a run whose items a plugin reordered before the cut: same members.
    path = project.path / "shard-2.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["collection"]["digest"] = "sha256:" + "0" * 64
    path.write_text(json.dumps(document), encoding="utf-8")
    result = omk_main(project.path, "merge", "shard-1.json", "shard-2.json")
    assert result.returncode == 4
    assert "ran the same items in a different order" in result.stderr and "pytest-randomly" in result.stderr
    document["collection"]["members"] = "sha256:" + "1" * 64
    path.write_text(json.dumps(document), encoding="utf-8")
    other = omk_main(project.path, "merge", "shard-1.json", "shard-2.json")
    assert other.returncode == 4 and re.search(r"different sample sets or selections", other.stderr)


ADDING_PLUGIN = """
import pytest


def pytest_collection_modifyitems(items):
    # Reorders and makes an item that was never collected: no stable place to cut it from.
    first = items[0]
    items.append(pytest.Function.from_parent(first.parent, name="test_made_up", callobj=first.obj))
    items.reverse()
"""


def test_an_item_made_after_collection_is_a_usage_error_naming_the_plugin(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    pytester.makepyfile(test_plain="def test_a():\n    pass\n")
    pytester.makeconftest(ADDING_PLUGIN)
    result = omk_run("--omk-shard=1/2", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert (
        "--omk-shard cannot cut a stable order: test_plain.py::test_made_up was added after collection" in err
    )
    assert "conftest.py" in err and "Traceback" not in err
