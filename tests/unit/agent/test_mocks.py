"""Mocks at run time (omk-semantics §6): matching rules, canonical tool names, results,
``return_seq`` order and exhaustion, strict vs pass-through, and the ``mockStats`` keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_omk.agent.mocks import MockBook, conditions_hold, glob_matches, input_subset
from pytest_omk.models.mocks import MockMatch
from pytest_omk.models.tool_names import canonical_tool_name, same_tool
from tests.support.grading import ENGINE


def book(*mocks: dict[str, Any], strict: bool = True, base_dir: Path | None = None) -> MockBook:
    return MockBook(list(mocks), lower=ENGINE.lower, strict=strict, base_dir=base_dir)


def holds(match: dict[str, Any], tool_input: Any) -> bool:
    return conditions_hold(MockMatch.model_validate(match), tool_input, ENGINE.lower)


# --- canonical names (§6.2) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("bash", "Bash"),
        ("SHELL", "Bash"),
        ("exec_command", "Bash"),
        ("command_execution", "Bash"),
        ("file_read", "Read"),
        ("grep", "Grep"),
        ("apply_patch", "Edit"),
        ("file_change", "Edit"),
        ("file_write", "Write"),
        ("viewimage", "ViewImage"),
        ("write_stdin", "WriteStdin"),
        ("websearch", "WebSearch"),
        ("Glob", "Glob"),
        ("glob", "glob"),  # no alias: unchanged, case kept
        ("WebFetch", "WebFetch"),
        ("mcp__omk__save_observation", "omk.save_observation"),
        ("mcp__a__b__tool", "a.b.tool"),
        ("mcp__codex_apps__github__search", "github.search"),
        ("mcp__codex_apps__search", "codex_apps.search"),
        ("mcp__x", "mcp__x"),
    ],
)
def test_canonical_tool_names(name: str, canonical: str) -> None:
    assert canonical_tool_name(name) == canonical


def test_same_tool_is_literal_or_canonical() -> None:
    assert same_tool("Bash", "bash")
    assert same_tool("shell", "Bash")
    assert same_tool("omk.save_observation", "mcp__omk__save_observation")
    assert same_tool("mcp__omk__save_observation", "mcp__omk__save_observation")
    assert not same_tool("Read", "Bash")
    assert not same_tool("glob", "Glob")


# --- matching (§6.1) ----------------------------------------------------------------------------


def test_file_path_expands_home_on_both_sides() -> None:
    home = str(Path.home())
    assert holds({"file_path": "~/notes.md"}, {"file_path": f"{home}/notes.md"})
    assert holds({"file_path": f"{home}/notes.md"}, {"file_path": "~/notes.md"})
    assert holds({"file_path": "~"}, {"file_path": home})
    assert not holds({"file_path": "notes.md"}, {"file_path": "/w/notes.md"})
    assert not holds({"file_path": "notes.md"}, {"file_path": 3})
    assert not holds({"file_path": "notes.md"}, {})


def test_file_path_endswith_needs_a_separator() -> None:
    match = {"file_path_endswith": "src/app.py"}
    assert holds(match, {"file_path": "/work/src/app.py"})
    assert holds(match, {"file_path": "C:\\work\\x\\src/app.py"})
    assert holds(match, {"file_path": "src/app.py"})  # equal
    assert not holds(match, {"file_path": "/work/mysrc/app.py"})
    assert not holds(match, {"file_path": "/work/src/app.pyc"})


def test_url_is_exact() -> None:
    assert holds({"url": "https://a.dev/x"}, {"url": "https://a.dev/x"})
    assert not holds({"url": "https://a.dev/x"}, {"url": "https://a.dev/x/"})


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("https://api.dev/*", "https://api.dev/v1/users?id=3", True),
        ("*", "", True),
        ("git *", "git commit -m 'a\nb'", True),  # * spans newlines
        ("git status", "git status --short", False),  # whole string
        ("a?c", "abc", False),  # ? is literal
        ("a?c", "a?c", True),
        ("[ab]*", "a-x", False),  # brackets are literal
        ("[ab]*", "[ab]-x", True),
        ("a.c", "abc", False),  # regex metacharacters are literal
    ],
)
def test_globs_only_star_is_special(pattern: str, text: str, expected: bool) -> None:
    assert glob_matches(pattern, text) is expected


def test_command_and_url_globs_need_strings() -> None:
    assert holds({"command_glob": "npm *"}, {"command": "npm test"})
    assert not holds({"command_glob": "npm *"}, {"command": ["npm", "test"]})
    assert holds({"url_glob": "https://*.dev/*"}, {"url": "https://a.dev/b"})
    assert not holds({"url_glob": "https://*.dev/*"}, {})


def test_input_is_a_recursive_subset_with_exact_arrays() -> None:
    actual = {"a": 1, "b": {"c": "x", "d": [1, {"e": 2}]}, "f": True}
    assert input_subset({"a": 1}, actual)
    assert input_subset({"b": {"c": "x"}}, actual)
    assert input_subset({"b": {"d": [1, {"e": 2}]}}, actual)
    assert not input_subset({"b": {"d": [1]}}, actual)  # arrays: same length and order
    assert not input_subset({"b": {"d": [1, {}]}}, actual)  # objects inside arrays compare exactly
    assert not input_subset({"g": None}, actual)  # every expected key must exist
    assert input_subset({"a": 1.0}, actual)  # 1 === 1.0
    assert not input_subset({"f": 1}, actual)  # true !== 1
    assert not input_subset({"a": "1"}, actual)
    assert not input_subset({"a": 1}, "not an object")


def test_input_contains_searches_string_values_case_insensitively() -> None:
    tool_input = {"query": "Refund POLICY", "opts": {"tags": ["alpha", "Beta"]}, "n": 42, "KeyOnly": 1}
    assert holds({"input_contains": "refund policy"}, tool_input)
    assert holds({"input_contains": "BETA"}, tool_input)
    assert not holds({"input_contains": "42"}, tool_input)  # numbers are not searched
    assert not holds({"input_contains": "keyonly"}, tool_input)  # nor keys


def test_input_contains_lower_cases_as_javascript_does() -> None:
    # U+A7DC (Unicode 16) lower-cases to U+019B in V8; Python 3.11's str.lower leaves it unchanged.
    assert "\ua7dc".lower() == "\ua7dc"
    assert holds({"input_contains": "\u019b"}, {"command": "echo \ua7dc"})
    assert (
        book({"tool": "Bash", "match": {"input_contains": "\ua7dc"}, "return": "x"})
        .intercept("Bash", {"command": "echo \u019b"})
        .action
        == "hit"
    )


def test_all_conditions_are_anded() -> None:
    match = {"file_path_endswith": "a.md", "input_contains": "draft"}
    assert holds(match, {"file_path": "/w/a.md", "content": "a draft"})
    assert not holds(match, {"file_path": "/w/a.md", "content": "final"})


# --- outcomes (§6.3) ----------------------------------------------------------------------------


def test_first_match_wins_and_tool_names_are_canonicalized() -> None:
    mocks = book(
        {"tool": "shell", "match": {"command_glob": "git *"}, "return": "git says hi"},
        {"tool": "Bash", "return": "any bash"},
        {"tool": "*", "return": "anything else"},
    )
    assert mocks.intercept("Bash", {"command": "git log"}).output == "git says hi"
    assert mocks.intercept("bash", {"command": "ls"}).output == "any bash"
    assert mocks.intercept("Read", {"file_path": "x"}).output == "anything else"
    stats = mocks.stats()
    assert stats is not None
    assert stats.perMock == {"shell:1": 1, "Bash:1": 1, "*:1": 1}
    assert (stats.hits, stats.misses) == (3, 0)


def test_object_returns_are_compact_json_in_key_order() -> None:
    mocks = book({"tool": "WebFetch", "return": {"status": 200, "body": {"ok": True, "tags": ["é"]}}})
    assert (
        mocks.intercept("WebFetch", {"url": "u"}).output == '{"status":200,"body":{"ok":true,"tags":["é"]}}'
    )


def test_return_file_is_relative_to_the_base_dir(tmp_path: Path) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "page.html").write_text("<h1>stub</h1>", encoding="utf-8")
    mocks = book(
        {"tool": "WebFetch", "match": {"url": "a"}, "return_file": "fixtures/page.html"},
        {"tool": "WebFetch", "return_file": "fixtures/missing.html"},
        base_dir=tmp_path,
    )
    assert mocks.intercept("WebFetch", {"url": "a"}).output == "<h1>stub</h1>"
    missing = mocks.intercept("WebFetch", {"url": "b"})
    assert missing.action == "hit" and missing.error
    assert (
        missing.output == f"[omk-mock-error] return_file not found: {tmp_path / 'fixtures' / 'missing.html'}"
    )


def test_return_seq_in_order_then_the_last_element_repeats() -> None:
    mocks = book(
        {"tool": "Bash", "match": {"command_glob": "poll*"}, "return_seq": ["pending", {"state": "done"}]},
        {"tool": "Bash", "return_seq": ["other"]},
    )
    outputs = [mocks.intercept("Bash", {"command": "poll"}).output for _ in range(4)]
    assert outputs == ["pending", '{"state":"done"}', '{"state":"done"}', '{"state":"done"}']
    # Each mock counts its own hits.
    assert mocks.intercept("Bash", {"command": "ls"}).output == "other"
    stats = mocks.stats()
    assert stats is not None
    assert stats.perMock == {"Bash:1": 4, "Bash:2": 1}


def test_strict_miss_is_denied_and_counted() -> None:
    mocks = book({"tool": "Read", "match": {"file_path": "/a"}, "return": "A"})
    outcome = mocks.intercept("bash", {"command": "rm -rf /"})
    assert outcome.action == "deny"
    assert outcome.output == "[omk-mock-strict] unmocked Bash call blocked"
    miss = mocks.intercept("Read", {"file_path": "/b"})
    assert miss.action == "deny"
    stats = mocks.stats()
    assert stats is not None
    assert (stats.hits, stats.misses, stats.perMock) == (0, 2, {})


def test_non_strict_miss_passes_through() -> None:
    mocks = book({"tool": "Read", "match": {"file_path": "/a"}, "return": "A"}, strict=False)
    assert mocks.intercept("Read", {"file_path": "/b"}).action == "run"
    assert mocks.intercept("Read", {"file_path": "/a"}).action == "hit"
    stats = mocks.stats()
    assert stats is not None
    assert (stats.hits, stats.misses) == (1, 1)


def test_no_mocks_means_no_interception_and_no_stats() -> None:
    mocks = book()
    assert mocks.intercept("Bash", {"command": "ls"}).action == "run"
    assert mocks.stats() is None


def test_per_mock_keys_count_literal_tool_strings() -> None:
    # Keys follow the literal tool string (upstream does not normalize them): "bash" and "Bash"
    # are counted separately, in declaration order.
    mocks = book(
        {"tool": "Read", "return": "r"},
        {"tool": "bash", "match": {"command_glob": "a*"}, "return": "a"},
        {"tool": "Bash", "match": {"command_glob": "b*"}, "return": "b"},
        {"tool": "Bash", "return": "c"},
    )
    assert mocks.keys == ["Read:1", "bash:1", "Bash:1", "Bash:2"]
    for command in ("a1", "b1", "b2", "c1"):
        mocks.intercept("Bash", {"command": command})
    stats = mocks.stats()
    assert stats is not None
    assert stats.perMock == {"bash:1": 1, "Bash:1": 2, "Bash:2": 1}
    assert sum(stats.perMock.values()) == stats.hits


def test_declared_tools_leave_out_the_wildcard() -> None:
    mocks = book(
        {"tool": "*", "return": "x"}, {"tool": "WebFetch", "return": "y"}, {"tool": "WebFetch", "return": "z"}
    )
    assert mocks.declared_tools() == ["WebFetch"]
