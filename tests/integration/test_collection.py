"""Collection of sample files (CONTRACT §3), run end to end with ``pytester``."""

from __future__ import annotations

import json

import pytest

from tests.support import (
    NO_EXECUTOR,
    FakeCommand,
    OmkRun,
    executor_arg,
    run_pytest,
    sample,
    sample_set,
    write_sample_set,
    write_samples,
)


def _ids(*ids: str) -> dict[str, object]:
    return sample_set(*(sample(i) for i in ids))


def test_canonical_json_and_yaml_are_collected_with_sample_node_ids(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_samples(pytester, "a/eval-samples.json", _ids("s1", "s2"))
    write_samples(pytester, "b/eval-samples.yaml", _ids("s3"))
    result = omk_run("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "a/eval-samples.json::s1",
            "a/eval-samples.json::s2",
            "b/eval-samples.yaml::s3",
            "3 tests collected*",
        ]
    )
    assert result.ret == pytest.ExitCode.OK


@pytest.mark.parametrize(
    "name",
    [
        "c/eval-samples.yml",
        "d/samples.json",
        "d/samples.yaml",
        "e/x.eval-samples.json",
        "f/eval_samples.json",
    ],
)
def test_other_names_are_not_auto_discovered(pytester: pytest.Pytester, omk_run: OmkRun, name: str) -> None:
    write_samples(pytester, "a/eval-samples.json", _ids("kept"))
    write_samples(pytester, name, _ids("ignored"))
    result = omk_run("--collect-only", "-q")
    result.stdout.fnmatch_lines(["a/eval-samples.json::kept", "1 test collected*"])
    result.stdout.no_fnmatch_line("*ignored*")


def test_both_canonical_names_in_one_directory_is_one_collection_error(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    json_path = write_samples(pytester, "evals/eval-samples.json", _ids("j"))
    yaml_path = write_samples(pytester, "evals/eval-samples.yaml", _ids("y"))
    write_samples(pytester, "other/eval-samples.json", _ids("fine"))
    result = omk_run("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"*{json_path}*{yaml_path}*", "*1 error*"])
    assert result.stdout.str().count("ERROR collecting") == 1
    result.stdout.no_fnmatch_line("*Traceback*")


def test_skill_local_samples_need_a_skill_md(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    pytester.path.joinpath("skills/real").mkdir(parents=True)
    pytester.path.joinpath("skills/real/SKILL.md").write_text("# real skill\n", encoding="utf-8")
    write_samples(pytester, "skills/real/.omk/eval-samples.json", _ids("in-skill"))
    write_samples(pytester, "skills/yamlish/.omk/eval-samples.yaml", _ids("in-yaml-skill"))
    pytester.path.joinpath("skills/yamlish/SKILL.md").write_text("# yaml skill\n", encoding="utf-8")
    write_samples(pytester, "skills/no-skill-md/.omk/eval-samples.json", _ids("orphan"))
    result = omk_run("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "skills/real/.omk/eval-samples.json::in-skill",
            "skills/yamlish/.omk/eval-samples.yaml::in-yaml-skill",
            "2 tests collected*",
        ]
    )
    result.stdout.no_fnmatch_line("*orphan*")


def test_skill_md_becomes_the_system_prompt(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    skill_text = "You are the release-notes skill.\nAlways answer in haiku.\n"
    pytester.path.joinpath("skills/notes").mkdir(parents=True)
    pytester.path.joinpath("skills/notes/SKILL.md").write_text(skill_text, encoding="utf-8")
    write_sample_set(
        pytester,
        sample("sys", assertions=[{"type": "contains", "value": "release-notes skill"}]),
        name="skills/notes/.omk/eval-samples.json",
    )
    write_sample_set(
        pytester,
        sample("nosys", assertions=[{"type": "not_contains", "value": "release-notes"}]),
        name="plain/eval-samples.json",
    )
    # Without a system prompt the echo would be blank (an executor failure): "nosys" answers in text.
    spec = fake_command.script({"*": {"echo": "system"}, "nosys": "no system prompt"})
    result = omk_run(executor_arg(spec))
    result.assert_outcomes(passed=2)
    assert fake_command.request("sys")["request"]["system"] == skill_text
    assert fake_command.request("nosys")["request"]["system"] == ""


def test_ambiguous_skill_local_files_are_an_error(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    pytester.path.joinpath("skills/s").mkdir(parents=True)
    pytester.path.joinpath("skills/s/SKILL.md").write_text("skill", encoding="utf-8")
    write_samples(pytester, "skills/s/.omk/eval-samples.json", _ids("a"))
    write_samples(pytester, "skills/s/.omk/eval-samples.yaml", _ids("b"))
    result = omk_run("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*skills/s/.omk/eval-samples.json*skills/s/.omk/eval-samples.yaml*"])


def test_omk_samples_takes_any_file_name(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_samples(pytester, "evals/my-cases.yml", _ids("m1", "m2"))
    result = omk_run("--omk-executor=echo", "--omk-samples", "evals/my-cases.yml", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["evals/my-cases.yml::m1", "evals/my-cases.yml::m2", "2 tests collected*"])


def test_omk_samples_split_directory_in_name_order_skipping_reports(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_samples(pytester, "split/b-second.json", _ids("b1"))
    write_samples(pytester, "split/a-first.yaml", _ids("a1", "a2"))
    write_samples(pytester, "split/c-third.yml", _ids("c1"))
    # Skipped names: if they were loaded, their invalid content would be a collection error.
    for skipped in ("report.json", "report-2024.json", "health.yaml", "_draft.json"):
        write_samples(pytester, f"split/{skipped}", "{not json at all")
    write_samples(pytester, "split/notes.txt", "not a sample file")
    result = omk_run("--omk-executor=echo", "--omk-samples", "split", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "split/a-first.yaml::a1",
            "split/a-first.yaml::a2",
            "split/b-second.json::b1",
            "split/c-third.yml::c1",
            "4 tests collected*",
        ]
    )


def test_split_directory_duplicate_sample_id_across_files(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_samples(pytester, "split/one.json", _ids("same", "other"))
    write_samples(pytester, "split/two.yaml", _ids("same"))
    result = omk_run("--omk-executor=echo", "--omk-samples", "split", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    text = result.stdout.str()
    assert "same" in text and "one.json" in text and "two.yaml" in text, text
    result.stdout.no_fnmatch_line("*Traceback*")


def test_split_directory_runs(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(
        pytester, sample("a", assertions=[{"type": "contains", "value": "hello"}]), name="split/a.json"
    )
    write_sample_set(
        pytester, sample("b", assertions=[{"type": "contains", "value": "nope"}]), name="split/b.json"
    )
    result = omk_run("--omk-executor=echo", "--omk-samples", "split")
    result.assert_outcomes(passed=1, failed=2)  # b's failed subtest and b itself


def test_without_positional_args_only_omk_samples_are_collected(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_samples(pytester, "eval-samples.json", _ids("auto"))
    write_samples(pytester, "explicit/cases.json", _ids("explicit"))
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    only = omk_run("--omk-executor=echo", "--omk-samples", "explicit/cases.json", "--collect-only", "-q")
    only.stdout.fnmatch_lines(["explicit/cases.json::explicit", "1 test collected*"])
    both = omk_run("--omk-executor=echo", "--omk-samples", "explicit/cases.json", ".", "--collect-only", "-q")
    both.stdout.fnmatch_lines_random(
        ["eval-samples.json::auto", "explicit/cases.json::explicit", "test_plain.py::test_plain"]
    )
    both.stdout.fnmatch_lines(["3 tests collected*"])


def test_omk_samples_path_that_does_not_exist_is_a_usage_error(omk_run: OmkRun) -> None:
    result = omk_run("--omk-executor=echo", "--omk-samples", "missing.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*missing.json*"])


def test_omk_samples_without_executor_is_a_usage_error(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_samples(pytester, "cases.json", _ids("x"))
    result = omk_run("--omk-samples", "cases.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{NO_EXECUTOR}*"])


INVALID_FILES = [
    pytest.param(
        "eval-samples.json",
        sample_set(
            sample(
                "x",
                assertions=[
                    {"type": "contains", "value": "a"},
                    {"type": "contains", "value": "b", "weight": 0},
                ],
            )
        ),
        ["samples[0].assertions[1].weight"],
        id="json-weight",
    ),
    pytest.param(
        "eval-samples.yaml",
        "schemaVersion: omk.eval-sample-set/v2\nsamples:\n  - sample_id: a\n    prompt: p\n"
        "  - sample_id: b\n    prompt: q\n    assertions:\n      - type: contains\n        value: v\n"
        "        weight: -2\n",
        ["samples[1].assertions[0].weight", "line 10"],
        id="yaml-weight-line",
    ),
    pytest.param(
        "eval-samples.yaml",
        "schemaVersion: omk.eval-sample-set/v2\nsamples:\n  - sample_id: a\n    prompt: p\n    promt: typo\n",
        ["samples[0].promt", "line 5"],
        id="yaml-unknown-key",
    ),
    pytest.param("eval-samples.json", [sample("x")], ["$", "legacy"], id="legacy-array"),
    pytest.param(
        "eval-samples.json",
        {"schemaVersion": "omk.eval-sample-set/v1", "samples": [sample("x")]},
        ["schemaVersion"],
        id="v1",
    ),
    pytest.param(
        "eval-samples.json",
        sample_set(sample("x", assertions=[{"type": "regex", "pattern": "(("}])),
        ["samples[0].assertions[0]", "invalid regex"],
        id="invalid-regex",
    ),
    pytest.param(
        "eval-samples.json",
        sample_set(
            sample(
                "x", rubric={"a": {"criterion": "c", "weight": 0.5}, "b": {"criterion": "d", "weight": 0.4}}
            )
        ),
        ["samples[0].rubric"],
        id="rubric-weights",
    ),
    pytest.param(
        "eval-samples.json",
        sample_set(sample("dup"), sample("dup")),
        ["samples[1]", "duplicate sample_id", "dup"],
        id="duplicate-id",
    ),
    pytest.param(
        "eval-samples.json",
        sample_set(sample("x", assertions=[{"type": "json_schema", "schema": {"type": "no-such-type"}}])),
        ["samples[0].assertions[0].schema"],
        id="invalid-json-schema",
    ),
    pytest.param(
        "eval-samples.json",
        sample_set(
            sample(
                "x",
                assertions=[{"type": "assert-set", "mode": "any", "children": [{"type": "faithfulness"}]}],
            )
        ),
        ["samples[0]", "assertions[0]", "children[0]", "faithfulness"],
        id="async-in-assert-set",
    ),
    pytest.param(
        "eval-samples.json",
        sample_set(
            sample(
                "x",
                mocks=[{"tool": "Read", "return": "r"}],
                assertions=[{"type": "mock_hit", "value": "Read:2"}],
            )
        ),
        ["samples[0]", "assertions[0]", "Read:2"],
        id="mock-hit-reference",
    ),
]


@pytest.mark.parametrize(("name", "doc", "expected"), INVALID_FILES)
def test_invalid_file_is_a_located_collection_error(
    pytester: pytest.Pytester, omk_run: OmkRun, name: str, doc: object, expected: list[str]
) -> None:
    text = doc if isinstance(doc, str) else __import__("json").dumps(doc)
    write_samples(pytester, f"bad/{name}", text)
    write_samples(pytester, "good/eval-samples.json", _ids("fine"))
    result = omk_run("--omk-executor=echo")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    out = result.stdout.str()
    block = out.split(f"ERROR collecting bad/{name}", 1)[1].split("short test summary", 1)[0]
    assert block.lstrip("_ \n").startswith(f"bad/{name}"), block
    for fragment in expected:
        assert fragment in block, (fragment, block)
    assert "Traceback" not in out and "Traceback" not in result.stderr.str()
    result.stdout.fnmatch_lines(["*Interrupted: 1 error during collection*"])
    result.assert_outcomes(errors=1)


def test_duplicate_yaml_key_names_the_json_path(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_samples(
        pytester,
        "eval-samples.yaml",
        "schemaVersion: omk.eval-sample-set/v2\nsamples:\n  - sample_id: a\n    prompt: p\n    prompt: q\n",
    )
    result = omk_run("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["eval-samples.yaml*line 5*"])
    result.stdout.fnmatch_lines(["eval-samples.yaml*samples[[]0[]].prompt*"])


def test_collect_only_quiet_lists_node_ids(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_samples(pytester, "eval-samples.yaml", _ids("alpha", "beta", "gamma"))
    result = omk_run("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    lines = [line for line in result.stdout.lines if "::" in line]
    assert lines == ["eval-samples.yaml::alpha", "eval-samples.yaml::beta", "eval-samples.yaml::gamma"]


def test_keyword_selection(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_samples(pytester, "eval-samples.json", _ids("login-ok", "login-bad", "logout"))
    result = omk_run("--omk-executor=echo", "-k", "login and not bad", "-v")
    result.assert_outcomes(passed=1, deselected=2)
    result.stdout.fnmatch_lines(["eval-samples.json::login-ok PASSED*"])


def test_markers_from_metadata(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(
        pytester,
        sample("easy-one", difficulty="easy", capability=["math"]),
        sample("hard-one", difficulty="hard", capability=["math", "proof"]),
        sample("plain"),
    )
    pytester.makepyfile(test_other="def test_other():\n    pass\n")
    every = omk_run("--omk-executor=echo", "-m", "omk", "--strict-markers")
    every.assert_outcomes(passed=3, deselected=1)
    hard = omk_run("--omk-executor=echo", "-m", "omk_difficulty(level='hard')", "-v", "--strict-markers")
    hard.assert_outcomes(passed=1, deselected=3)
    hard.stdout.fnmatch_lines(["eval-samples.json::hard-one PASSED*"])
    proof = omk_run("--omk-executor=echo", "-m", "omk_capability(name='proof')", "-v")
    proof.assert_outcomes(passed=1, deselected=3)
    math = omk_run("--omk-executor=echo", "-m", "omk_capability(name='math')")
    math.assert_outcomes(passed=2, deselected=2)
    listed = omk_run("--markers")
    listed.stdout.fnmatch_lines(
        ["@pytest.mark.omk:*", "@pytest.mark.omk_difficulty(level):*", "@pytest.mark.omk_capability(name):*"]
    )


def test_last_failed_reruns_only_the_failed_sample(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(
        pytester,
        sample("good", "hello", assertions=[{"type": "contains", "value": "hello"}]),
        sample("bad", "hello", assertions=[{"type": "contains", "value": "goodbye"}]),
        sample("also-good", "hello"),
    )
    first = omk_run("--omk-executor=echo")
    first.assert_outcomes(passed=2, failed=2)
    rerun = omk_run("--omk-executor=echo", "--lf", "-v")
    rerun.stdout.fnmatch_lines(["*run-last-failure*", "eval-samples.json::bad FAILED*"])
    rerun.assert_outcomes(failed=2)
    rerun.stdout.no_fnmatch_line("*::good*")
    rerun.stdout.no_fnmatch_line("*::also-good*")


def test_plugin_disabled_collects_nothing(pytester: pytest.Pytester) -> None:
    write_samples(pytester, "eval-samples.json", _ids("x"))
    write_samples(pytester, "eval-samples-dir/eval-samples.yaml", _ids("y"))
    result = run_pytest(pytester, "-p", "no:omk", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.no_fnmatch_line("*::x*")


def test_no_executor_collect_only_is_fine(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_samples(pytester, "eval-samples.json", _ids("x"))
    result = omk_run("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["eval-samples.json::x"])


def _ini_samples_project(pytester: pytest.Pytester) -> None:
    write_samples(pytester, "evals/cases.yaml", _ids("e1", "e2"))
    pytester.makepyfile(**{"tests/test_plain": "def test_plain():\n    pass\n"})
    pytester.makeini("[pytest]\ntestpaths = tests\nomk_samples = evals/cases.yaml\nomk_executor = echo\n")


def test_ini_omk_samples_join_testpaths(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    _ini_samples_project(pytester)
    result = omk_run("--collect-only", "-q")
    result.stdout.fnmatch_lines_random(
        ["evals/cases.yaml::e1", "evals/cases.yaml::e2", "tests/test_plain.py::test_plain"]
    )
    result.stdout.fnmatch_lines(["3 tests collected*"])


def test_a_positional_argument_narrows_a_run_with_ini_omk_samples(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    _ini_samples_project(pytester)
    spec = executor_arg(fake_command.script({"e1": "hi", "e2": "hi"}))
    plain = omk_run(spec, "tests/test_plain.py", "-q")
    plain.assert_outcomes(passed=1)
    assert "e1" not in plain.stdout.str()
    assert fake_command.called() == []  # no sample was collected, so nothing was called
    every = omk_run(spec, "-q")
    every.assert_outcomes(passed=3)
    assert fake_command.called() == ["e1", "e2"]
    # The listed file named directly is still a sample file (any name), and only it runs.
    named = omk_run("evals/cases.yaml", "--collect-only", "-q")
    named.stdout.fnmatch_lines(["evals/cases.yaml::e1", "evals/cases.yaml::e2", "2 tests collected*"])


def test_cli_omk_samples_replace_testpaths_and_join_positional_arguments(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    _ini_samples_project(pytester)
    write_samples(pytester, "other/more.json", _ids("o1"))
    only = omk_run("--omk-samples", "other/more.json", "--collect-only", "-q")
    only.stdout.fnmatch_lines(["other/more.json::o1", "1 test collected*"])
    both = omk_run("--omk-samples", "other/more.json", "tests", "--collect-only", "-q")
    both.stdout.fnmatch_lines_random(["other/more.json::o1", "tests/test_plain.py::test_plain"])
    both.stdout.fnmatch_lines(["2 tests collected*"])


def test_a_sample_file_with_another_name_named_directly_suggests_omk_samples(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_samples(pytester, "evals50.yaml", _ids("s1"))
    result = omk_run("--omk-executor=echo", "evals50.yaml")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["*ERROR collecting evals50.yaml*", "*looks like an omk sample file*--omk-samples evals50.yaml*"]
    )
    # Walking a directory still ignores such files: only a file named on the command line gets the hint.
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    omk_run("--omk-executor=echo").assert_outcomes(passed=1)


def test_items_report_the_line_of_their_sample(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_samples(pytester, "eval-samples.yaml", _ids("s1", "s2"))
    pytester.makeconftest(
        "def pytest_collection_modifyitems(items):\n"
        "    for item in items:\n"
        "        print('LOCATION', item.location)\n"
    )
    result = omk_run("--collect-only", "-q", "-s")
    result.stdout.fnmatch_lines(
        ["LOCATION ('eval-samples.yaml', 2, 'sample: s1')", "LOCATION ('eval-samples.yaml', 4, 'sample: s2')"]
    )


@pytest.mark.multiprocess
def test_plain_regexes_are_checked_without_starting_v8(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    """Starting V8 (its library, asyncio, a context) was a third of collecting a small file; a plain
    pattern is known to compile without it (pytest_omk.js.regex_syntax), and a bad one still errors.
    With no executor configured, the executors' modules are not imported either."""
    pytester.makeconftest(
        """
        import json, sys

        def pytest_sessionfinish(session):
            (session.config.rootpath / "v8.json").write_text(json.dumps("py_mini_racer" in sys.modules))
            loaded = "pytest_omk.run.executors" in sys.modules
            (session.config.rootpath / "executors.json").write_text(json.dumps(loaded))
        """
    )
    regexes = [
        {"type": "regex", "pattern": r"^\d{3}-\d{4}$"},
        {"type": "regex", "pattern": r"\b(yes|no)\b", "flags": "g"},
    ]
    write_sample_set(pytester, sample("plain", assertions=regexes))
    result = omk_run("--collect-only", "-q", subprocess=True)
    assert result.ret == pytest.ExitCode.OK
    assert json.loads((pytester.path / "v8.json").read_text()) is False
    assert json.loads((pytester.path / "executors.json").read_text()) is False
    write_sample_set(pytester, sample("bad", assertions=[{"type": "regex", "pattern": "a{2,1}"}]))
    bad = omk_run("--collect-only", "-q", subprocess=True)
    bad.stdout.fnmatch_lines(
        ["*samples[[]0[]].assertions[[]0[]].pattern*invalid regex (JavaScript refuses it)*"]
    )
    assert json.loads((pytester.path / "v8.json").read_text()) is True
