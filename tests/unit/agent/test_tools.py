"""The agent's built-in tools, path confinement, Bash timeouts, and the temporary working copy."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.agent.file_tools import ToolError, confine
from pytest_omk.agent.isolation import source_directory, working_copy
from pytest_omk.agent.tools import MAX_OUTPUT_CHARS, BuiltinTools, ToolResult, truncate
from pytest_omk.errors import ExecutionError
from pytest_omk.models import Sample
from pytest_omk.models.run import ExecutionRequest


@pytest.fixture
def root(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / "src" / "pkg").mkdir(parents=True)
    (work / "src" / "pkg" / "app.py").write_text(
        "import os\n\ndef main():\n    return 'Hello'\n", encoding="utf-8"
    )
    (work / "src" / "util.py").write_text("HELLO = 1\nhello = 2\n", encoding="utf-8")
    (work / "README.md").write_text("# Title\nhello there\n", encoding="utf-8")
    (work / "blob.bin").write_bytes(b"\0\1hello")
    (tmp_path / "secret.txt").write_text("outside", encoding="utf-8")
    return Path(os.path.realpath(work))


def run(tools: BuiltinTools, name: str, **arguments: Any) -> ToolResult:
    return asyncio.run(tools.run(name, arguments))


@pytest.fixture
def tools(root: Path) -> BuiltinTools:
    return BuiltinTools(
        root, timeout=5, environ={"PATH": os.environ["PATH"], "OPENAI_API_KEY": "sk-secret-1234"}
    )


# --- confinement --------------------------------------------------------------------------------


def test_relative_and_absolute_paths_inside_are_accepted(root: Path) -> None:
    assert confine(root, "src/util.py") == root / "src" / "util.py"
    assert confine(root, str(root / "README.md")) == root / "README.md"
    assert confine(root, ".") == root
    assert confine(root, "src/../README.md") == root / "README.md"
    assert confine(root, "new/dir/file.txt") == root / "new" / "dir" / "file.txt"


@pytest.mark.parametrize("path", ["../secret.txt", "src/../../secret.txt", "/etc/passwd", "~/x", "  "])
def test_paths_outside_are_rejected(root: Path, path: str) -> None:
    with pytest.raises(ToolError):
        confine(root, path)


def test_symlinks_are_resolved_before_the_check(root: Path) -> None:
    (root / "escape").symlink_to(root.parent / "secret.txt")
    (root / "escape_dir").symlink_to(root.parent)
    (root / "inside").symlink_to(root / "README.md")
    with pytest.raises(ToolError, match="outside the working directory"):
        confine(root, "escape")
    with pytest.raises(ToolError):
        confine(root, "escape_dir/secret.txt")
    assert confine(root, "inside") == root / "README.md"


def test_file_tools_refuse_outside_paths(tools: BuiltinTools, root: Path) -> None:
    for name, args in [
        ("Read", {"file_path": "../secret.txt"}),
        ("Write", {"file_path": "../new.txt", "content": "x"}),
        ("Edit", {"file_path": "/etc/hosts", "old_string": "a", "new_string": "b"}),
        ("Glob", {"pattern": "*", "path": ".."}),
        ("Glob", {"pattern": "../*"}),
        ("Grep", {"pattern": "outside", "path": root.parent.as_posix()}),
    ]:
        result = run(tools, name, **args)
        assert not result.success and result.status == "failure", (name, args)
    assert not (root.parent / "new.txt").exists()


# --- Read / Write / Edit ------------------------------------------------------------------------


def test_read_numbers_lines_and_pages(tools: BuiltinTools) -> None:
    assert run(tools, "Read", file_path="README.md").output == "     1\t# Title\n     2\thello there"
    page = run(tools, "Read", file_path="src/pkg/app.py", offset=2, limit=2)
    assert page.output == "     2\t\n     3\tdef main():\n[1 more lines; read on with offset]"
    assert not run(tools, "Read", file_path="missing.txt").success
    assert "is a directory" in run(tools, "Read", file_path="src").output
    assert not run(tools, "Read", file_path="README.md", offset=0).success
    assert not run(tools, "Read", file_path=3).success


def test_write_creates_parents(tools: BuiltinTools, root: Path) -> None:
    result = run(tools, "Write", file_path="out/deep/new.txt", content="héllo\n")
    assert result.success and result.output == "Wrote 7 bytes to out/deep/new.txt"
    assert (root / "out" / "deep" / "new.txt").read_text(encoding="utf-8") == "héllo\n"


def test_edit_requires_a_unique_match_unless_replace_all(tools: BuiltinTools, root: Path) -> None:
    path = root / "src" / "util.py"
    ambiguous = run(tools, "Edit", file_path="src/util.py", old_string="= ", new_string=":= ")
    assert not ambiguous.success and "occurs 2 times" in ambiguous.output
    assert path.read_text(encoding="utf-8") == "HELLO = 1\nhello = 2\n"
    unique = run(tools, "Edit", file_path="src/util.py", old_string="hello = 2", new_string="hello = 3")
    assert unique.success and unique.output == "Replaced 1 occurrence(s) in src/util.py"
    every = run(tools, "Edit", file_path="src/util.py", old_string=" = ", new_string="=", replace_all=True)
    assert every.output == "Replaced 2 occurrence(s) in src/util.py"
    assert path.read_text(encoding="utf-8") == "HELLO=1\nhello=3\n"
    assert "not found" in run(tools, "Edit", file_path="src/util.py", old_string="zzz", new_string="y").output
    assert not run(tools, "Edit", file_path="src/util.py", old_string="x", new_string="x").success
    assert not run(tools, "Edit", file_path="nope.py", old_string="x", new_string="y").success


# --- Glob / Grep --------------------------------------------------------------------------------


def test_glob(tools: BuiltinTools) -> None:
    assert run(tools, "Glob", pattern="**/*.py").output == "src/util.py\nsrc/pkg/app.py"
    assert run(tools, "Glob", pattern="*.md").output == "README.md"
    assert run(tools, "Glob", pattern="*.py", path="src/pkg").output == "src/pkg/app.py"
    assert run(tools, "Glob", pattern="*.rs").output == "No files found"


def test_grep(tools: BuiltinTools) -> None:
    assert run(tools, "Grep", pattern=r"^hello").output == "README.md:2:hello there\nsrc/util.py:2:hello = 2"
    assert run(tools, "Grep", pattern="hello", ignore_case=True, files_only=True).output == (
        "README.md\nsrc/util.py\nsrc/pkg/app.py"
    )
    assert run(tools, "Grep", pattern="Hello", glob="*.py").output == "src/pkg/app.py:4:    return 'Hello'"
    assert run(tools, "Grep", pattern="nothing-like-this").output == "No matches found"
    bad = run(tools, "Grep", pattern="(unclosed")
    assert not bad.success and "invalid regular expression" in bad.output


def test_unknown_tool_and_bad_arguments(tools: BuiltinTools) -> None:
    assert not run(tools, "Fly").success
    assert not asyncio.run(tools.run("Read", "README.md")).success


# --- Bash ---------------------------------------------------------------------------------------


def test_bash_runs_in_the_root_and_reports_exit_codes(tools: BuiltinTools, root: Path) -> None:
    result = run(tools, "Bash", command="pwd; echo err >&2; wc -l < README.md")
    assert result.success
    assert result.output == f"{root}\nerr\n2\n"
    failed = run(tools, "Bash", command="echo partial; exit 3")
    assert not failed.success and failed.output == "partial\n\n[exit code 3]"


def test_bash_does_not_see_credentials(tools: BuiltinTools) -> None:
    assert run(tools, "Bash", command="echo ${OPENAI_API_KEY:-unset}").output == "unset\n"


def test_bash_receives_the_names_allowed_beyond_its_list(tmp_path: Path) -> None:
    environ = {"PATH": os.environ["PATH"], "JAVA_HOME": "/opt/jdk", "OTHER": "x"}
    allowed = BuiltinTools(tmp_path, timeout=10, environ=environ, env_names=("JAVA_HOME",))
    assert (
        run(allowed, "Bash", command="echo ${JAVA_HOME:-unset} ${OTHER:-unset}").output == "/opt/jdk unset\n"
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child that nobody reaped yet is a zombie: dead for our purposes.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def _wait_dead(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_bash_timeout_kills_the_whole_process_group(root: Path) -> None:
    tools = BuiltinTools(root, timeout=0.5)
    started = time.monotonic()
    result = run(tools, "Bash", command="sleep 120 & echo $! > child.pid; echo started; wait")
    assert time.monotonic() - started < 60  # order of events: long before the sleep would end
    assert not result.success and result.status == "failure"
    assert result.output == "started\n\n[omk-agent] Bash timed out after 0.5 s; its process group was killed"
    assert _wait_dead(int((root / "child.pid").read_text()))


def test_background_jobs_do_not_outlive_the_command(root: Path) -> None:
    tools = BuiltinTools(root, timeout=5)
    started = time.monotonic()
    result = run(tools, "Bash", command="sleep 120 & echo $! > bg.pid; echo done")
    assert result.success and result.output == "done\n"
    assert time.monotonic() - started < 60  # did not wait for the background job to end
    assert _wait_dead(int((root / "bg.pid").read_text()))


def test_output_is_truncated_with_a_note(root: Path) -> None:
    tools = BuiltinTools(root, timeout=5)
    result = run(tools, "Bash", command=f"head -c {MAX_OUTPUT_CHARS + 500} /dev/zero | tr '\\0' a")
    assert result.output.startswith("a" * MAX_OUTPUT_CHARS)
    assert result.output.endswith("\n[output truncated: 500 more characters]")
    assert truncate("abc", 2) == "ab\n[output truncated: 1 more characters]"


# --- the working copy ---------------------------------------------------------------------------


def test_working_copy_is_a_fresh_copy_removed_afterwards(root: Path) -> None:
    (root / "abs_link").symlink_to(root / "README.md")
    (root / "rel_link").symlink_to("src/util.py")

    async def body() -> Path:
        async with working_copy(root) as copy:
            assert copy != root and copy.name == "work"
            assert (copy / "src" / "pkg" / "app.py").read_text(encoding="utf-8").startswith("import os")
            # An absolute link into the original now points into the copy; relative links stay.
            assert os.readlink(copy / "abs_link") == str(copy / "README.md")
            assert os.readlink(copy / "rel_link") == "src/util.py"
            (copy / "README.md").write_text("changed", encoding="utf-8")
            (copy / "ro").mkdir()
            (copy / "ro" / "f").write_text("x", encoding="utf-8")
            (copy / "ro").chmod(0o500)
            return copy.parent

    holder = asyncio.run(body())
    assert not holder.exists()
    assert (root / "README.md").read_text(encoding="utf-8") == "# Title\nhello there\n"


def test_working_copy_is_removed_after_an_error(tmp_path: Path) -> None:
    seen: list[Path] = []

    async def body() -> None:
        async with working_copy(None) as copy:
            seen.append(copy)
            assert list(copy.iterdir()) == []
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        asyncio.run(body())
    assert not seen[0].parent.exists()


def test_missing_working_directory_is_an_execution_error(tmp_path: Path) -> None:
    async def body() -> None:
        async with working_copy(tmp_path / "nope"):
            pass

    with pytest.raises(ExecutionError, match="does not exist"):
        asyncio.run(body())


def test_only_a_declared_cwd_is_copied(tmp_path: Path) -> None:
    with_cwd = Sample.model_validate({"sample_id": "a", "prompt": "p", "cwd": "./ws"})
    without = Sample.model_validate({"sample_id": "b", "prompt": "p"})
    assert source_directory(ExecutionRequest(prompt="p", cwd=tmp_path, sample=with_cwd)) == tmp_path
    assert source_directory(ExecutionRequest(prompt="p", cwd=tmp_path, sample=without)) is None
    assert source_directory(ExecutionRequest(prompt="p", cwd=tmp_path)) == tmp_path
    assert source_directory(ExecutionRequest(prompt="p")) is None
