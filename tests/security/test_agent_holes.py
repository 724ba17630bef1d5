"""The agent's tools and mocks against a hostile model and hostile sample paths (issue #15).

Each test is one hole the hostile review found; each failed before the fix.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.agent.environment import shell_environment
from pytest_omk.agent.file_tools import WRITE_MAX_BYTES
from pytest_omk.agent.isolation import source_directory
from pytest_omk.agent.mocks import MockBook
from pytest_omk.agent.sandbox import Sandbox
from pytest_omk.agent.tools import BuiltinTools, ToolResult
from pytest_omk.errors import ExecutionError
from pytest_omk.execute.base import ExecutionRequest
from pytest_omk.models import Sample
from tests.reliability.helpers import processes_running

probe = pytest.mark.probe


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``tmp_path/samples`` (the sample file's directory) with a file inside; a secret outside."""
    samples = tmp_path / "samples"
    (samples / "fixtures").mkdir(parents=True)
    (samples / "fixtures" / "page.html").write_text("<p>ok</p>", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("TOP-SECRET-OUTSIDE", encoding="utf-8")
    return samples


def tools(root: Path, timeout: float = 10.0) -> BuiltinTools:
    return BuiltinTools(root, timeout=timeout, environ=dict(os.environ), sandbox=Sandbox.detect())


def run(tool: BuiltinTools, name: str, **arguments: Any) -> ToolResult:
    return asyncio.run(tool.run(name, arguments))


def _threads() -> set[int]:
    return {t.ident or 0 for t in threading.enumerate()}


# --- mocks and cwd --------------------------------------------------------------------------------


@probe("path escape")
@pytest.mark.parametrize(
    "path", ["../secret.txt", "{outside}", "~/.bashrc", "/proc/self/environ", "fixtures/../../secret.txt"]
)
def test_a_mock_return_file_outside_the_sample_directory_is_refused(tree: Path, path: str) -> None:
    path = path.format(outside=tree.parent / "secret.txt")
    book = MockBook([{"tool": "Read", "return_file": path}], base_dir=tree)
    outcome = book.intercept("Read", {"file_path": "x"})
    assert outcome.error and "TOP-SECRET" not in outcome.output
    assert "outside the sample's directory" in outcome.output


@probe("path escape")
def test_a_mock_return_file_link_leading_outside_is_refused(tree: Path) -> None:
    (tree / "fixtures" / "link.txt").symlink_to(tree.parent / "secret.txt")
    outcome = MockBook([{"tool": "Read", "return_file": "fixtures/link.txt"}], base_dir=tree).intercept(
        "Read", {}
    )
    assert outcome.error and "TOP-SECRET" not in outcome.output


@probe("non-regular file")
def test_a_mock_return_file_fifo_is_refused_without_blocking(tree: Path) -> None:
    os.mkfifo(tree / "fixtures" / "pipe")
    outcome = MockBook([{"tool": "Read", "return_file": "fixtures/pipe"}], base_dir=tree).intercept(
        "Read", {}
    )
    assert outcome.error and "not a regular file" in outcome.output


@probe("path escape")
@pytest.mark.parametrize("cwd", ["/", "../..", ".."])
def test_a_cwd_outside_the_sample_directory_is_an_execution_error(tree: Path, cwd: str) -> None:
    sample = Sample.model_validate({"sample_id": "s", "prompt": "p", "cwd": cwd})
    request = ExecutionRequest(prompt="p", cwd=(tree / cwd).resolve(), sample=sample, mock_base_dir=tree)
    with pytest.raises(ExecutionError, match="outside the sample file's directory"):
        source_directory(request)


# --- secrets in Bash's environment ------------------------------------------------------------------


@probe("secrets")
def test_a_password_in_a_base_url_never_enters_bash(tmp_path: Path) -> None:
    env = shell_environment(
        {
            "OPENAI_BASE_URL": "http://omkuser:PW-sentinel-123456@proxy.corp:8080/v1",
            "AWS_SECRET_ACCESS_KEY": "aws-sentinel-abcdef",
            "MY_SERVICE_KEY": "svc-sentinel-abcdef",
            "DB_PASSWORD": "db-sentinel-abcdef",
            "PATH": os.environ["PATH"],
        }
    )
    assert env == {"PATH": os.environ["PATH"]}
    # A URL the user lets through still loses its user info.
    allowed = shell_environment(
        {"OPENAI_BASE_URL": "http://omkuser:PW-sentinel-123456@proxy.corp:8080/v1"}, ["OPENAI_BASE_URL"]
    )
    assert allowed == {"OPENAI_BASE_URL": "http://proxy.corp:8080/v1"}


@probe("secrets")
def test_bash_cannot_read_the_test_process_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not Sandbox.detect().available:
        pytest.skip("bubblewrap is not available here: /proc is shared without a sandbox")
    monkeypatch.setenv("OMK_PROBE_API_KEY", "sk-probe-sentinel-0123456789")
    result = run(tools(tmp_path), "Bash", command=f"cat /proc/{os.getpid()}/environ; cat /proc/*/environ")
    assert "sk-probe-sentinel" not in result.output


# --- the sandbox ---------------------------------------------------------------------------------


@pytest.fixture
def bwrap() -> None:
    if not Sandbox.detect().available:
        pytest.skip("bubblewrap is not available here")


@probe("sandbox")
def test_sandboxed_bash_writes_only_its_working_copy(tmp_path: Path, bwrap: None) -> None:
    (tmp_path / "work").mkdir()
    home = Path.home() / f"omk-escape-probe-{os.getpid()}"
    command = f"echo x > {tmp_path}/escaped; echo x > {home}; echo y > inside"
    run(tools(tmp_path / "work"), "Bash", command=command)
    escaped = [p for p in (tmp_path / "escaped", home) if p.exists()]
    for path in escaped:
        path.unlink()
    assert escaped == []
    assert (tmp_path / "work" / "inside").read_text() == "y\n"


@probe("sandbox")
def test_sandboxed_bash_has_no_network(tmp_path: Path, bwrap: None) -> None:
    import socket

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        result = run(tools(tmp_path), "Bash", command=f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED")
    assert "CONNECTED" not in result.output


@probe("process cleanup")
def test_setsid_jobs_of_bash_do_not_outlive_the_call(tmp_path: Path) -> None:
    marker = "31337.5"  # a sleep length no other process uses
    result = run(
        tools(tmp_path), "Bash", command=f"setsid sleep {marker} >/dev/null 2>&1 < /dev/null & echo started"
    )
    assert result.output.strip() == "started"
    left = processes_running(f"sleep {marker}")
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert left == []


# --- file tools ----------------------------------------------------------------------------------


@probe("non-regular file")
def test_read_of_a_fifo_is_refused_and_leaves_no_thread(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    before = _threads()
    result = run(tools(tmp_path, timeout=2), "Read", file_path="pipe")
    assert not result.success and "not a regular file" in result.output
    assert _threads() <= before | {threading.get_ident()}


@probe("size cap")
def test_read_of_a_huge_sparse_file_is_refused_before_reading(tmp_path: Path) -> None:
    with open(tmp_path / "sparse", "wb") as handle:
        handle.truncate(64 * 1024 * 1024)
    result = run(tools(tmp_path), "Read", file_path="sparse")
    assert not result.success and "byte limit" in result.output


@probe("size cap")
def test_write_of_more_than_the_cap_is_refused(tmp_path: Path) -> None:
    result = run(tools(tmp_path), "Write", file_path="big.txt", content="a" * (WRITE_MAX_BYTES + 1))
    assert not result.success and "limit" in result.output and not (tmp_path / "big.txt").exists()


@probe("redos")
def test_a_catastrophic_grep_pattern_is_stopped_and_leaves_no_thread(tmp_path: Path) -> None:
    (tmp_path / "input.txt").write_text("a" * 40 + "!\n", encoding="utf-8")
    before = _threads()
    result = run(tools(tmp_path, timeout=1), "Grep", pattern="(a+)+$")
    assert not result.success and "time limit" in result.output
    # The search ran in a child process, now killed: no thread is left spinning in the regex.
    # asyncio.run's executor shutdown uses a helper thread that ends a moment later (seen once in
    # a full run); a thread stuck in this regex would spin for hours, so a short wait tells them apart.
    allowed = before | {threading.get_ident()}
    deadline = time.monotonic() + 10
    while not _threads() <= allowed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _threads() <= allowed
