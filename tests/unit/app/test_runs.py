"""Which sample an app's model call belongs to, and which repetition of a request it is."""

from __future__ import annotations

from pathlib import Path

from pytest_omk.app.runs import AppRuns
from pytest_omk.models.run import ExecutionRequest


def request(sample_id: str, prompt: str, source: str = "eval-samples.json") -> ExecutionRequest:
    return ExecutionRequest(prompt=prompt, sample_id=sample_id, source=Path(source))


def test_a_run_is_found_by_its_token_while_it_is_open() -> None:
    runs = AppRuns()
    first, second = runs.open(request("a", "p")), runs.open(request("b", "q"))
    assert first.token != second.token
    assert runs.named(second.token) is second
    runs.close(second)
    assert runs.named(second.token) is None


def test_a_shared_url_call_goes_to_the_only_open_run_or_to_the_one_whose_prompt_it_carries() -> None:
    runs = AppRuns()
    assert runs.guess({"messages": []}) is None
    alone = runs.open(request("a", "hi"))
    assert runs.guess({"anything": 1}) is alone  # one run open: it is that one's
    other = runs.open(request("b", "How long is a shared link valid?"))
    body = {"messages": [{"role": "user", "content": "Q: How long is a shared link valid?"}]}
    assert runs.guess(body) is other
    assert runs.guess({"messages": [{"content": "unrelated"}]}) is None  # two open, no prompt inside
    runs.open(request("b", "How long is a shared link valid?"))  # a repeat round of the same sample
    assert runs.guess(body) is other  # still that sample


def test_a_short_prompt_is_found_only_as_a_whole_message() -> None:
    runs = AppRuns()
    first, tenth = runs.open(request("s1", "question 1")), runs.open(request("s10", "question 10"))
    assert runs.guess({"messages": [{"role": "user", "content": "question 10"}]}) is tenth
    assert runs.guess({"messages": [{"role": "user", "content": "question 1"}]}) is first
    # Inside a longer text a short prompt proves nothing ("question 1" is in "question 10 ...").
    assert runs.guess({"messages": [{"content": "Answer question 10 briefly"}]}) is None
    runs.open(request("s1", "question 1", source="other.json"))  # the same prompt in two files
    assert runs.guess({"messages": [{"role": "user", "content": "question 1"}]}) is None


def test_repetitions_are_numbered_and_a_failed_call_gives_its_number_back() -> None:
    runs = AppRuns()
    scope = ("eval-samples.json", "a")
    first = runs.take(scope, "req")
    second = runs.take(scope, "req")  # in flight together: another number
    assert (first, second) == (0, 1)
    runs.end(scope, "req", second, answered=False)  # refused (a 429): its retry takes 1 again
    runs.end(scope, "req", first, answered=True)
    assert runs.take(scope, "req") == 1
    assert runs.take(None, "req") == 0  # another scope (the process), another count
    assert runs.take(scope, "other request") == 0
