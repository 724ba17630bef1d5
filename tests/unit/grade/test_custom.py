"""custom assertions: Python check files in-process, JavaScript modules through Node."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.models.results import Reading
from tests.support.grading import read

needs_node = pytest.mark.usefixtures("node")


def write(directory: Path, name: str, source: str) -> str:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return name


def run(
    tmp_path: Path,
    fn: str,
    output: str = "Use SQL parameters",
    *,
    negate: bool = False,
    timeout: float = 30.0,
    **sample_fields: Any,
) -> Reading:
    assertion: dict[str, Any] = {"type": "custom", "fn": fn}
    if negate:
        assertion["not"] = True
    return read(assertion, output, base_dir=tmp_path, custom_timeout=timeout, sample_fields=sample_fields)


# --- Python -----------------------------------------------------------------------------------------


def test_python_check_returning_a_bool(tmp_path: Path) -> None:
    fn = write(tmp_path, "checks/sql.py", "def check(output, context):\n    return 'SQL' in output\n")
    assert run(tmp_path, fn).status == "pass"
    assert run(tmp_path, fn, "nothing").status == "fail"
    assert run(tmp_path, fn, "nothing", negate=True).status == "pass"


def test_python_check_returning_a_dict_with_a_message(tmp_path: Path) -> None:
    fn = write(
        tmp_path,
        "c.py",
        """\
        def check(output, context):
            return {"pass": output.startswith("Use"), "message": "looked at the first word"}
    """,
    )
    passed, failed = run(tmp_path, fn), run(tmp_path, fn, "Avoid SQL")
    assert (passed.status, failed.status) == ("pass", "fail")
    assert failed.message == "custom check 'c.py' failed: looked at the first word"


def test_python_check_receives_sample_and_assertion_as_plain_data(tmp_path: Path) -> None:
    fn = write(
        tmp_path,
        "ctx.py",
        """\
        from __future__ import annotations
        from dataclasses import dataclass

        @dataclass
        class Seen:
            sample_id: str

        def check(output: str, context: dict) -> bool:
            seen = Seen(context["sample"]["sample_id"])
            assertion = context["assertion"]
            return seen.sample_id == "s1" and assertion == {"type": "custom", "fn": "ctx.py", "not": True} \\
                and context["sample"]["context"] == "ctx" and "weight" not in assertion
    """,
    )
    assert run(tmp_path, fn, negate=True, context="ctx").status == "fail"  # the check passed; not inverts it


def test_async_python_check(tmp_path: Path) -> None:
    fn = write(
        tmp_path,
        "a.py",
        "import asyncio\nasync def check(output, context):\n    await asyncio.sleep(0)\n    return True\n",
    )
    assert run(tmp_path, fn).status == "pass"


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("def check(output, context):\n    raise ValueError('boom')\n", "errored: raised ValueError: boom"),
        ("import nonexistent_module_xyz\n", "raised ModuleNotFoundError"),
        ("def other(output, context):\n    return True\n", "must define check(output, context)"),
        ("def check(output, context):\n    return 'yes'\n", "returned 'yes'; expected a bool or"),
        ("def check(output, context):\n    return {'pass': 1}\n", "expected a bool or"),
        ("import sys\ndef check(output, context):\n    sys.exit(3)\n", "raised SystemExit: 3"),
    ],
)
def test_python_check_problems_are_error_readings_that_not_never_inverts(
    tmp_path: Path, source: str, fragment: str
) -> None:
    fn = write(tmp_path, "bad.py", source)
    reading = run(tmp_path, fn, negate=True)
    assert (reading.status, reading.final) == ("fail", True)
    assert fragment in reading.message


def test_python_check_timeout(tmp_path: Path) -> None:
    fn = write(
        tmp_path,
        "slow.py",
        "import time\ndef check(output, context):\n    time.sleep(120)\n    return True\n",
    )
    started = time.monotonic()
    reading = run(tmp_path, fn, timeout=0.3, negate=True)
    # Order of events: the reading came long before the check would have returned by itself.
    assert time.monotonic() - started < 60
    assert (reading.status, reading.final) == ("fail", True)
    assert "timed out after 0.3 s" in reading.message


def test_missing_file_and_unknown_suffix_are_errors(tmp_path: Path) -> None:
    missing = run(tmp_path, "nope.py")
    assert missing.final and "file not found" in missing.message
    fn = write(tmp_path, "check.rb", "puts 1\n")
    unknown = run(tmp_path, fn)
    assert unknown.final and "unsupported file type '.rb'" in unknown.message


# --- JavaScript through Node --------------------------------------------------------------------------


@needs_node
def test_format_page_example_module(tmp_path: Path) -> None:
    fn = write(
        tmp_path,
        "my-assertion.mjs",
        """\
        export default function(output, { sample, assertion }) {
          return { pass: output.includes('SQL'), message: 'checked for SQL keyword' };
        }
    """,
    )
    passed = run(tmp_path, fn)
    assert passed.status == "pass"
    assert passed.message == "custom check 'my-assertion.mjs' passed: checked for SQL keyword"
    assert run(tmp_path, fn, "no keyword here").status == "fail"
    assert run(tmp_path, fn, "no keyword here", negate=True).status == "pass"


@needs_node
def test_named_check_export_async_result_and_context(tmp_path: Path) -> None:
    fn = write(
        tmp_path,
        "named.mjs",
        """\
        console.log('noise the runner must ignore');
        export async function check(output, { sample, assertion }) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          return { pass: sample.sample_id === 's1' && assertion.fn === 'named.mjs' && output === 'héllo 😀' };
        }
    """,
    )
    assert run(tmp_path, fn, "héllo 😀").status == "pass"


@needs_node
def test_commonjs_module(tmp_path: Path) -> None:
    fn = write(tmp_path, "c.cjs", "module.exports = (output) => ({ pass: output.length > 3 });\n")
    assert run(tmp_path, fn).status == "pass"


@needs_node
@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("export default () => { throw new Error('kaput'); };\n", "threw Error: kaput"),
        ("export default async () => { throw new TypeError('late'); };\n", "threw TypeError: late"),
        ("export const other = 1;\n", "must export default or check"),
        ("export default () => true;\n", "returned true; expected {pass: boolean, message?: string}"),
        ("export default () => ({ pass: 'yes' });\n", "expected {pass: boolean"),
        ("export default () => ({ pass: true, big: 10n });\n", "not JSON-serializable"),
        ("export default () => { process.exit(4); };\n", "ended without a result (exit code 4"),
        ("this is not javascript\n", "could not import the module"),
    ],
)
def test_javascript_check_problems_are_error_readings(tmp_path: Path, source: str, fragment: str) -> None:
    fn = write(tmp_path, "bad.mjs", source)
    reading = run(tmp_path, fn, negate=True)
    assert (reading.status, reading.final) == ("fail", True)
    assert fragment in reading.message


@needs_node
def test_javascript_timeout_kills_node(tmp_path: Path) -> None:
    fn = write(tmp_path, "hang.mjs", "export default () => new Promise(() => setInterval(() => {}, 1000));\n")
    reading = run(tmp_path, fn, timeout=1.0)
    assert reading.final
    assert "timed out after 1 s (its process was killed)" in reading.message


def test_javascript_without_node_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fn = write(tmp_path, "x.mjs", "export default () => ({ pass: true });\n")
    monkeypatch.setattr("pytest_omk.grade.custom.shutil.which", lambda name: None)
    reading = run(tmp_path, fn)
    assert reading.final
    assert "needs Node.js" in reading.message and "'node' is not on PATH" in reading.message
