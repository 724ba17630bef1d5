"""The recordings store: record modes, key, file format, corruption, secrets and concurrent writers."""

from __future__ import annotations

import asyncio
import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from pytest_omk._util.stored_text import cap_text
from pytest_omk.errors import ReplayMissError
from pytest_omk.models import Sample
from pytest_omk.models.results import ExecutionResult, ToolCall
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.files import (
    FORMAT,
    canonical_json,
    read_document,
    recording_key,
    slugify,
)
from pytest_omk.recordings.store import RecordingStore
from pytest_omk.recordings.tree import STALE_TEMP_SECONDS

REPO = Path(__file__).resolve().parents[3]
SENTINEL = "sk-sentinel-7f3a9c2e5b1d"

# ---------------------------------------------------------------------------------------------
# Helpers


def request(**changes: Any) -> ExecutionRequest:
    fields: dict[str, Any] = {"prompt": "Say hello to Ada.", "model": "gpt-4o", "sample_id": "greet"}
    fields.update(changes)
    return ExecutionRequest(**fields)


def rich_result(output: str = "Hello, Ada!") -> ExecutionResult:
    return ExecutionResult.model_validate(
        {
            "output": output,
            "inputTokens": 12,
            "outputTokens": 5,
            "costUSD": 0.000123,
            "latencyMs": 812.5,
            "durationApiMs": 640.0,
            "numTurns": 2,
            "stopReason": "end_turn",
            "toolCalls": [
                {"tool": "Bash", "input": {"command": "ls -la"}, "output": "a\nb", "success": True},
                {
                    "tool": "Read",
                    "input": {"path": "x.md"},
                    "output": None,
                    "success": False,
                    "status": "failure",
                },
            ],
            "turns": [
                {"role": "user", "content": "Say hello"},
                {
                    "role": "assistant",
                    "content": "Hello",
                    "durationMs": 10.5,
                    "toolCalls": [{"tool": "Bash", "input": {"command": "ls"}}],
                },
            ],
            "mockStats": {"hits": 2, "misses": 1, "perMock": {"Bash:ls": 2}},
            "retries": 1,
        }
    )


class Live:
    """A live call that counts its invocations and returns a fixed result (or raises)."""

    def __init__(self, result: ExecutionResult | None = None, error: Exception | None = None) -> None:
        self.result = result or rich_result()
        self.error = error
        self.calls = 0

    async def __call__(self) -> ExecutionResult:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return self.result


def call(
    store: RecordingStore,
    req: ExecutionRequest,
    live: Callable[[], Awaitable[ExecutionResult]],
    executor: str = "openai",
) -> ExecutionResult:
    return asyncio.run(store.call(executor, req, live))


def recording_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.json") if not p.name.startswith("."))


def all_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file())


@pytest.fixture
def rec_dir(tmp_path: Path) -> Path:
    return tmp_path / "recordings"


@pytest.fixture
def warnings_seen() -> list[str]:
    return []


def store(
    rec_dir: Path, mode: Any = "new_episodes", warn: list[str] | None = None, **kw: Any
) -> RecordingStore:
    return RecordingStore(rec_dir, mode, warn=None if warn is None else warn.append, **kw)


# ---------------------------------------------------------------------------------------------
# Modes


def test_new_episodes_records_a_miss_then_replays_it(rec_dir: Path) -> None:
    live = Live()
    first = call(store(rec_dir), request(), live)
    second = call(store(rec_dir), request(), live)
    assert live.calls == 1
    assert first.replayed is False
    assert second.replayed is True
    assert len(recording_files(rec_dir)) == 1


def test_a_replay_keeps_telemetry_and_tool_trace_exactly(rec_dir: Path) -> None:
    live = Live()
    original = call(store(rec_dir), request(), live)
    replayed = call(store(rec_dir, "none"), request(), Live(error=AssertionError("must not run")))
    assert replayed.model_dump(exclude={"replayed"}) == original.model_dump(exclude={"replayed"})
    assert replayed.latencyMs == 812.5 and replayed.costUSD == 0.000123
    assert replayed.toolCalls is not None and replayed.toolCalls[1].effective_status == "failure"
    assert replayed.mockStats is not None and replayed.mockStats.perMock == {"Bash:ls": 2}
    assert replayed.turns is not None and replayed.turns[1].toolCalls is not None


def test_none_mode_never_writes_and_raises_on_a_miss(rec_dir: Path) -> None:
    live = Live()
    with pytest.raises(ReplayMissError):
        call(store(rec_dir, "none"), request(), live)
    assert live.calls == 0
    assert not rec_dir.exists()


def test_all_mode_calls_live_every_time_and_overwrites(rec_dir: Path) -> None:
    call(store(rec_dir), request(), Live(rich_result("old answer")))
    live = Live(rich_result("new answer"))
    result = call(store(rec_dir, "all"), request(), live)
    assert live.calls == 1 and result.replayed is False
    [path] = recording_files(rec_dir)
    assert read_document(path).result["output"] == "new answer"


def test_all_mode_leaves_an_identical_recording_untouched(rec_dir: Path) -> None:
    call(store(rec_dir), request(), Live())
    [path] = recording_files(rec_dir)
    before = path.read_bytes()
    os.utime(path, (1_000_000, 1_000_000))
    call(store(rec_dir, "all"), request(), Live())
    assert path.read_bytes() == before
    assert path.stat().st_mtime == 1_000_000


@pytest.mark.parametrize(("directory", "mode"), [("dir", "off"), (None, "new_episodes"), (None, "none")])
def test_a_disabled_store_calls_live_and_writes_nothing(
    tmp_path: Path, directory: str | None, mode: Any
) -> None:
    target = tmp_path / "dir"
    recordings = RecordingStore(target if directory else None, mode)
    live = Live()
    call(recordings, request(), live)
    call(recordings, request(), live)
    assert live.calls == 2
    assert not target.exists()
    assert recordings.get("execute", {"x": 1}) is None


@pytest.mark.parametrize(("directory", "mode"), [("dir", "off"), (None, "new_episodes"), ("dir", "none")])
def test_a_call_that_records_nothing_neither_dumps_nor_hops_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, directory: str | None, mode: Any
) -> None:
    """The lean path: with nothing to write, the result is never serialized and no thread is used."""

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("called on a path that records nothing")

    target = tmp_path / "dir"
    if mode == "none":
        call(store(target), request(), Live())  # record it first, then replay without writing
    monkeypatch.setattr("pytest_omk.recordings.store.asyncio.to_thread", forbidden)
    monkeypatch.setattr(ExecutionResult, "model_dump", forbidden)
    live = Live()
    result = call(RecordingStore(target if directory else None, mode), request(), live)
    assert result.output == "Hello, Ada!"
    assert live.calls == (0 if mode == "none" else 1)


def test_a_failed_live_call_is_never_recorded(rec_dir: Path) -> None:
    live = Live(error=RuntimeError("provider down"))
    with pytest.raises(RuntimeError, match="provider down"):
        call(store(rec_dir), request(), live)
    assert recording_files(rec_dir) == []


def test_an_unknown_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"'replay'.*none, once, new_episodes, all, rewrite, off"):
        RecordingStore(Path("x"), "replay")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Key


def key_of(req: ExecutionRequest, executor: str = "openai") -> str:
    return recording_key(req.purpose, {"executor": executor, "request": req.identity()})


@pytest.mark.parametrize(
    "change",
    [
        {"model": "gpt-4o-mini"},
        {"prompt": "Say hello to Grace."},
        {"system": "You are terse."},
        {"repeat": 1},
        {"template": "judge-v2:abc123"},
        {"purpose": "judge"},
        {"mocks": [{"tool": "Bash", "return": "ok"}]},
        {"allowed_tools": ["Read"]},
        {"cwd_key": "skills/x"},
    ],
)
def test_the_key_changes_with_what_changes_the_answer(change: dict[str, Any]) -> None:
    assert key_of(request(**change)) != key_of(request())


def test_the_key_changes_with_the_executor() -> None:
    assert key_of(request(), "anthropic") != key_of(request(), "openai")


def test_the_key_ignores_the_sample_object_the_absolute_cwd_and_the_sample_id(tmp_path: Path) -> None:
    sample = Sample.model_validate({"sample_id": "greet", "prompt": "Say hello to Ada."})
    variants = [
        request(sample=sample),
        request(cwd=tmp_path, cwd_key=""),
        request(sample_id="renamed"),
        request(allowed_tools=None),
    ]
    assert {key_of(v) for v in variants} == {key_of(request())}
    # Timeouts and retries are pipeline settings, not request fields: they cannot reach the key.
    assert not {"timeout", "retries"} & set(request().identity())


def test_the_key_is_sha256_of_canonical_json_with_the_format_version() -> None:
    identity = {"executor": "openai", "request": request().identity()}
    expected = hashlib.sha256(
        canonical_json({"format": FORMAT, "kind": "execute", **identity}).encode()
    ).hexdigest()
    assert recording_key("execute", identity) == expected
    assert canonical_json({"b": 1, "a": [1, "é"]}) == '{"a":[1,"\\u00e9"],"b":1}'


def test_a_renamed_sample_still_replays_by_key(rec_dir: Path) -> None:
    call(store(rec_dir), request(sample_id="old-name"), Live())
    live = Live()
    result = call(store(rec_dir, "none"), request(sample_id="new-name"), live)
    assert result.replayed and live.calls == 0


# ---------------------------------------------------------------------------------------------
# File format and layout


def test_one_readable_file_per_call_with_the_request_first(rec_dir: Path) -> None:
    call(store(rec_dir), request(system="Be kind."), Live())
    [path] = recording_files(rec_dir)
    key = key_of(request(system="Be kind."))
    assert path == rec_dir / "execute" / key[:2] / f"greet-{key[:16]}.json"
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n") and '\n  "request": {\n    "purpose": "execute"' in text
    data = json.loads(text)
    assert list(data) == ["format", "key", "kind", "label", "executor", "request", "result", "recordedAt"]
    assert data["format"] == "pytest-omk.recording/v1"
    assert (data["key"], data["kind"], data["label"], data["executor"]) == (key, "execute", "greet", "openai")
    assert data["request"]["system"] == "Be kind."
    assert "replayed" not in data["result"]
    assert data["recordedAt"].endswith("+00:00")


def test_judge_calls_are_stored_under_their_own_kind(rec_dir: Path) -> None:
    call(store(rec_dir), request(purpose="judge", template="rubric-v1:0f0f", json_mode=True), Live())
    [path] = recording_files(rec_dir)
    assert path.relative_to(rec_dir).parts[0] == "judge"


@pytest.mark.parametrize(
    "sample_id",
    [
        "../../etc/passwd",
        "",
        "   ",
        ".hidden",
        "CON",
        'a/b\\c:d*?<>|"',
        "Ünïcödé 日本語 ✓",
        "x" * 500,
        "\x00\n\t",
    ],
)
def test_any_sample_id_gives_a_safe_file_name_inside_the_directory(rec_dir: Path, sample_id: str) -> None:
    req = request(sample_id=sample_id)
    call(store(rec_dir), req, Live())
    [path] = recording_files(rec_dir)
    assert path.resolve().is_relative_to(rec_dir.resolve())
    assert len(path.name) <= 60 + 1 + 16 + len(".json")
    assert not path.name.startswith(".")
    assert read_document(path).label == sample_id
    assert call(store(rec_dir, "none"), req, Live()).replayed


def test_slugify_keeps_readable_words() -> None:
    assert slugify("Greets the User (EN)") == "greets-the-user-en"
    assert slugify("café/naïve") == "cafe-naive"
    assert slugify("日本") == "call"


def test_the_generic_layer_stores_any_kind_of_json_payload(rec_dir: Path) -> None:
    recordings = store(rec_dir)
    identity = {"url": "https://example.org/a", "resolver": "http"}
    assert recordings.get("fetch", identity, label="sample-1") is None
    recordings.put("fetch", identity, {"text": "page", "status": 200}, label="sample-1")
    assert store(rec_dir, "none").get("fetch", identity, label="sample-1") == {"text": "page", "status": 200}
    [path] = recording_files(rec_dir)
    assert path.relative_to(rec_dir).parts[0] == "fetch"
    assert json.loads(path.read_text())["url"] == "https://example.org/a"


def test_call_raw_applies_the_modes_to_generic_payloads(rec_dir: Path) -> None:
    calls = []

    async def fetch() -> dict[str, Any]:
        calls.append(1)
        return {"text": "page"}

    identity = {"url": "https://example.org"}
    assert asyncio.run(store(rec_dir).call_raw("fetch", identity, fetch)) == ({"text": "page"}, False)
    assert asyncio.run(store(rec_dir, "none").call_raw("fetch", identity, fetch)) == ({"text": "page"}, True)
    with pytest.raises(ReplayMissError, match="No fetch recording exists"):
        asyncio.run(store(rec_dir / "empty", "none").call_raw("fetch", identity, fetch))
    assert len(calls) == 1


@pytest.mark.parametrize("bad", ["Fetch", "../x", "", "a b"])
def test_a_kind_must_be_a_plain_word(rec_dir: Path, bad: str) -> None:
    with pytest.raises(ValueError, match="recording kind"):
        store(rec_dir).put(bad, {"x": 1}, {})


def test_an_identity_may_not_shadow_document_fields(rec_dir: Path) -> None:
    with pytest.raises(ValueError, match=r"\['result'\] are reserved"):
        store(rec_dir).put("fetch", {"result": 1}, {})


def test_an_unwritable_directory_warns_instead_of_failing(tmp_path: Path, warnings_seen: list[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = call(store(blocker, warn=warnings_seen), request(), Live())
    assert result.output == "Hello, Ada!"
    assert len(warnings_seen) == 1 and "could not write recording" in warnings_seen[0]


# ---------------------------------------------------------------------------------------------
# Explaining a miss


def test_a_miss_names_the_sample_the_directory_and_the_differing_model(rec_dir: Path) -> None:
    call(store(rec_dir), request(), Live())
    with pytest.raises(ReplayMissError) as info:
        call(store(rec_dir, "none"), request(model="gpt-4o-mini"), Live())
    message = str(info.value)
    assert "'greet'" in message and str(rec_dir) in message
    [path] = recording_files(rec_dir)
    assert path.relative_to(rec_dir).as_posix() in message
    assert "model: 'gpt-4o-mini' (this run) vs 'gpt-4o' (recorded)" in message
    assert "prompt" not in message.split("differs in:")[1]
    assert "--omk-record-mode=new_episodes" in message


def test_a_miss_picks_the_nearest_recording_and_describes_a_long_field(rec_dir: Path) -> None:
    long_prompt = "Summarise the following report.\n" + "word " * 50
    call(store(rec_dir), request(sample_id="far", prompt="other", model="claude", system="s"), Live())
    call(store(rec_dir), request(sample_id="near", prompt=long_prompt), Live())
    with pytest.raises(ReplayMissError) as info:
        call(store(rec_dir, "none"), request(prompt=long_prompt + "!"), Live())
    message = str(info.value)
    assert "(sample 'near')" in message and "(sample 'far')" not in message
    assert "prompt differs from character 282" in message
    assert "model:" not in message
    # The text around the change, quoted, so the edit is visible without opening the file.
    assert "…'ord word word word word !' (this run) vs …'ord word word word word ' (recorded)" in message


def test_a_miss_where_only_the_endpoint_differs_names_the_recorded_one(rec_dir: Path) -> None:
    recorded = "http://localhost:8080/v1/chat/completions"
    asyncio.run(store(rec_dir).call("openai", request(), Live(), endpoint=recorded))
    with pytest.raises(ReplayMissError) as info:
        asyncio.run(
            store(rec_dir, "none").call(
                "openai", request(), Live(), endpoint="http://127.0.0.1:8080/v1/chat/completions"
            )
        )
    message = str(info.value)
    assert f"Only the endpoint differs: the recordings were made against {recorded!r}" in message
    assert "OPENAI_BASE_URL" in message and "--omk-record-mode=new_episodes (or =all" not in message


def test_a_miss_is_explained_from_the_samples_own_recordings_first(rec_dir: Path) -> None:
    # Another sample's recording shares more fields, but the sample's own is what the user changed;
    # and only a sample without recordings of its own is compared with the whole directory.
    call(store(rec_dir), request(sample_id="a", prompt="first", model="m1", system="s1"), Live())
    call(store(rec_dir), request(sample_id="b", prompt="second", model="m2", system="s2"), Live())
    with pytest.raises(ReplayMissError) as own:
        call(store(rec_dir, "none"), request(sample_id="a", prompt="second", model="m2", system="s1"), Live())
    assert "(sample 'a')" in str(own.value) and "model: 'm2' (this run) vs 'm1' (recorded)" in str(own.value)
    with pytest.raises(ReplayMissError) as renamed:
        call(store(rec_dir, "none"), request(sample_id="c", prompt="second", model="m2", system="s1"), Live())
    assert "(sample 'b')" in str(renamed.value) and "system: 's1' (this run) vs 's2' (recorded)" in str(
        renamed.value
    )


def test_a_miss_without_recordings_for_the_executor_says_so(rec_dir: Path) -> None:
    call(store(rec_dir), request(), Live(), executor="openai")
    with pytest.raises(
        ReplayMissError,
        match=r"No recording exists for executor 'anthropic' \(recordings exist for 'openai'\)",
    ):
        call(store(rec_dir, "none"), request(), Live(), executor="anthropic")


def test_a_miss_in_an_empty_directory_says_no_recording_exists(rec_dir: Path) -> None:
    with pytest.raises(ReplayMissError, match=r"No recording exists for executor 'openai'\.") as info:
        call(store(rec_dir, "none"), request(), Live())
    assert "No recording for sample 'greet' (execute call to executor 'openai')" in str(info.value)


# ---------------------------------------------------------------------------------------------
# Corrupt files and leftovers

CORRUPTIONS = {
    "truncated": b'{"format": "pytest-omk.recording/v1", "key": "ab',
    "binary": b"\xff\xfe\x00garbage",
    "empty": b"",
    "not-an-object": b"[1, 2, 3]",
    "other-format": b'{"format": "pytest-omk.recording/v9", "key": "x", "kind": "execute", "result": {}}',
    "bad-result": None,  # filled in from a real recording below
}


def corrupt(path: Path, how: str) -> None:
    if how == "bad-result":
        data = json.loads(path.read_text())
        data["result"]["toolCalls"] = "not a list"
        path.write_text(json.dumps(data))
    elif how == "wrong-key":
        data = json.loads(path.read_text())
        data["key"] = "0" * 64
        path.write_text(json.dumps(data))
    else:
        content = CORRUPTIONS[how]
        assert content is not None
        path.write_bytes(content)


@pytest.mark.parametrize("how", [*CORRUPTIONS, "wrong-key"])
def test_a_corrupt_recording_is_re_recorded_with_a_warning_in_new_episodes(
    rec_dir: Path, warnings_seen: list[str], how: str
) -> None:
    call(store(rec_dir), request(), Live())
    [path] = recording_files(rec_dir)
    corrupt(path, how)
    live = Live()
    result = call(store(rec_dir, warn=warnings_seen), request(), live)
    assert live.calls == 1 and result.replayed is False
    assert len(warnings_seen) == 1 and str(path) in warnings_seen[0]
    assert read_document(path).result["output"] == "Hello, Ada!"


@pytest.mark.parametrize("how", [*CORRUPTIONS, "wrong-key"])
def test_a_corrupt_recording_is_an_error_naming_the_file_in_none_mode(rec_dir: Path, how: str) -> None:
    call(store(rec_dir), request(), Live())
    [path] = recording_files(rec_dir)
    corrupt(path, how)
    with pytest.raises(ReplayMissError, match="unusable") as info:
        call(store(rec_dir, "none"), request(), Live())
    assert str(path) in str(info.value)


def test_a_corrupt_recording_is_overwritten_with_a_warning_in_all_mode(
    rec_dir: Path, warnings_seen: list[str]
) -> None:
    call(store(rec_dir), request(), Live())
    [path] = recording_files(rec_dir)
    corrupt(path, "truncated")
    call(store(rec_dir, "all", warn=warnings_seen), request(), Live())
    assert len(warnings_seen) == 1 and str(path) in warnings_seen[0]
    assert read_document(path).result["output"] == "Hello, Ada!"


def test_a_corrupt_neighbour_does_not_hide_the_nearest_miss_explanation(rec_dir: Path) -> None:
    call(store(rec_dir), request(sample_id="a"), Live())
    call(store(rec_dir), request(sample_id="b", prompt="other"), Live())
    corrupt(next(p for p in recording_files(rec_dir) if p.name.startswith("b-")), "truncated")
    with pytest.raises(ReplayMissError, match="model: 'x'"):
        call(store(rec_dir, "none"), request(model="x"), Live())


def test_leftover_temp_files_are_ignored_and_stale_ones_swept(rec_dir: Path) -> None:
    call(store(rec_dir), request(), Live())
    [path] = recording_files(rec_dir)
    stale = path.parent / f".{path.stem}.abc123.tmp"
    fresh = path.parent / f".{path.stem}.def456.tmp"
    for leftover in (stale, fresh):
        leftover.write_bytes(b'{"format": "pytest-omk.rec')
    old = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(stale, (old, old))

    assert call(store(rec_dir, "none"), request(), Live()).replayed
    with pytest.raises(ReplayMissError, match=r"differs in:\n  - model"):
        call(store(rec_dir, "none"), request(model="y"), Live())

    # The next write into that directory removes what a killed writer left, not a live writer's file.
    store(rec_dir).put("execute", identity_in_shard(path.parent.name), {"output": "x"})
    assert not stale.exists() and fresh.exists()


# ---------------------------------------------------------------------------------------------
# Secrets


def test_secrets_never_reach_any_file_byte(rec_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMK_TEST_API_KEY", SENTINEL)
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to be treated as a secret
    given = "given-secret-value-42"
    req = request(
        prompt=f"Use the key {SENTINEL} and {given}.",
        sample_id=f"id-{SENTINEL}",
        system="abc is fine",
        mocks=[{"tool": "Http", "headers": {"Authorization": f"Bearer {SENTINEL}"}}],
    )
    result = rich_result(f"Your key is {SENTINEL}").model_copy(
        update={
            "toolCalls": [
                ToolCall(
                    tool="Http",
                    input={"headers": {"X-Api-Key": SENTINEL, "Cookie": "session=1", "Accept": "text/plain"}},
                )
            ]
        }
    )
    recordings = store(rec_dir, secrets=[given])
    call(recordings, req, Live(result))

    files = all_files(rec_dir)
    assert files
    for path in files:
        raw = path.read_bytes()
        assert SENTINEL.encode() not in raw and given.encode() not in raw
        assert SENTINEL not in path.as_posix()
    data = json.loads(recording_files(rec_dir)[0].read_text())
    assert data["request"]["prompt"] == "Use the key [REDACTED] and [REDACTED]."
    assert data["result"]["output"] == "Your key is [REDACTED]"
    assert data["result"]["toolCalls"][0]["input"] == {"headers": {"Accept": "text/plain"}}
    assert data["request"]["mocks"] == [{"tool": "Http", "headers": {}}]
    assert data["request"]["system"] == "abc is fine"

    # The key hashes the unscrubbed request, so the same request still replays.
    assert call(store(rec_dir, "none", secrets=[given]), req, Live()).replayed
    # And a miss message does not echo the secret either.
    with pytest.raises(ReplayMissError) as info:
        call(
            store(rec_dir, "none", secrets=[given]), request(prompt=f"{SENTINEL}", sample_id=SENTINEL), Live()
        )
    assert SENTINEL not in str(info.value)


def test_a_labels_file_name_is_made_once_for_all_its_calls(
    rec_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A sample's executor call, judge calls and repeats share its label (the sample id): its slug
    # (Unicode normalisation and scrubbing) is made once, and every recording still carries it.
    from pytest_omk.recordings import files, naming

    slugs: list[str] = []
    real = files.slugify

    def counted(label: str, secrets: Iterable[str] = ()) -> str:
        slugs.append(label)
        return real(label, secrets)

    monkeypatch.setattr(naming, "slugify", counted)
    recordings = store(rec_dir)
    for prompt in ("one", "two", "three"):
        call(recordings, request(prompt=prompt, sample_id="Grüße an Ada"), Live())
    assert slugs == ["Grüße an Ada"]
    assert [p.name.rpartition("-")[0] for p in recording_files(rec_dir)] == ["grue-an-ada"] * 3


def test_a_secret_added_later_is_redacted_from_names_made_after(rec_dir: Path) -> None:
    token = "mcp-token-4f9e2a71c3"
    recordings = store(rec_dir)
    call(recordings, request(prompt="before", sample_id=f"uses {token}"), Live())
    recordings.add_secrets([token])
    call(recordings, request(prompt="after", sample_id=f"uses {token}"), Live())
    names = sorted(p.name for p in recording_files(rec_dir))
    assert sum(token in name for name in names) == 1  # the first was named before the token was known
    assert sum("redacted" in name for name in names) == 1


# ---------------------------------------------------------------------------------------------
# Concurrent and interrupted writers

SAME_IDENTITY = {"executor": "openai", "request": {"prompt": "same"}}


def _write_many(directory: str, writer: int, count: int) -> None:
    recordings = RecordingStore(Path(directory), "all")
    for i in range(count):
        recordings.put("execute", SAME_IDENTITY, {"output": f"{writer}-{i}-" + "x" * 50_000}, label="same")


def assert_one_complete_file(rec_dir: Path) -> dict[str, Any]:
    files = all_files(rec_dir)
    assert len(files) == 1, files
    document = read_document(files[0])
    assert document.result["output"].endswith("x" * 50_000)
    return document.result


def test_eight_threads_writing_one_key_leave_one_complete_file(rec_dir: Path) -> None:
    barrier = threading.Barrier(8)

    def work(writer: int) -> None:
        barrier.wait()
        _write_many(str(rec_dir), writer, 20)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert assert_one_complete_file(rec_dir)["output"].split("-")[1] == "19"


def test_two_processes_writing_one_key_leave_one_complete_file(rec_dir: Path) -> None:
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_write_many, args=(str(rec_dir), n, 40)) for n in range(2)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0
    assert_one_complete_file(rec_dir)


KILLED_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from pytest_omk.recordings.store import RecordingStore

    store = RecordingStore(Path(sys.argv[1]), "new_episodes")
    for i in range(100_000):
        store.put("execute", {"executor": "x", "request": {"i": i}}, {"output": "y" * 4_000_000}, label=f"s{i}")
        print(i, flush=True)
    """
)


def identity_in_shard(shard: str) -> dict[str, Any]:
    """An identity whose recording lands in the two-hex directory ``shard``."""
    return next(
        identity
        for n in range(100_000)
        if recording_key("execute", identity := {"executor": "x", "request": {"i": f"probe-{n}"}})[:2]
        == shard
    )


def test_a_killed_writer_leaves_only_complete_files(rec_dir: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(rec_dir)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert process.stdout is not None
    written = -1
    while written < 5:
        line = process.stdout.readline()
        assert line, "the writer exited early"
        written = int(line)
    # Kill it while a temp file is being written, which is the moment a torn file could appear.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(rec_dir.glob("execute/*/.*.tmp")):
        pass
    process.kill()  # SIGKILL on POSIX: no cleanup handlers run
    process.wait(timeout=30)
    process.stdout.close()

    recordings = RecordingStore(rec_dir, "new_episodes")
    for path in recording_files(rec_dir):
        # Whole files only (each output is stored up to the cap on stored text).
        assert read_document(path).result["output"] == cap_text("y" * 4_000_000)
    for i in range(written + 1):
        assert recordings.get("execute", {"executor": "x", "request": {"i": i}}, label=f"s{i}") is not None

    leftovers = list(rec_dir.glob("execute/*/.*.tmp"))
    for leftover in leftovers:
        old = time.time() - STALE_TEMP_SECONDS - 60
        os.utime(leftover, (old, old))
        recordings.put("execute", identity_in_shard(leftover.parent.name), {"output": "ok"}, label="after")
        assert not leftover.exists()
    after = {"executor": "x", "request": {"i": "after"}}
    recordings.put("execute", after, {"output": "ok"}, label="after")
    assert recordings.get("execute", after, label="after") == {"output": "ok"}
