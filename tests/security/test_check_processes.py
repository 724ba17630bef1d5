"""Custom ``.js`` checks leave no process behind: answered, timed out or interrupted (issue #15).

A check module may start children through ``child_process``, detached ones (a session of their
own) included. Each spawns ``sleep`` with a length no other process uses, a marker in argv, so the
test can look for leftovers by command line; the Ctrl-C run also finds them by the environment
marker every process of the nested pytest inherits.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

import tests.reliability.test_interrupt as base
from tests.reliability.helpers import (
    marked_processes,
    processes_running,
    pytest_process,
    require_proc,
    wait_until,
)
from tests.support import FakeCommand, executor_arg
from tests.support.grading import read

probe = pytest.mark.probe
SLEEP = "4243.5"
"""The marker: ``sleep 4243.5`` is ours."""


def check_module(directory: Path, *, hang: bool) -> str:
    """A check that starts a detached and an attached ``sleep``, then answers or hangs."""
    # The hanging one lets its children hold stdout, as a careless helper process would.
    stdio = "'inherit'" if hang else "'ignore'"
    answer = "new Promise(() => setInterval(() => {}, 1000))" if hang else "({ pass: true })"
    (directory / "spawner.mjs").write_text(
        textwrap.dedent(f"""\
        import {{ spawn }} from 'node:child_process';
        export default async () => {{
          spawn('sleep', ['{SLEEP}'], {{ detached: true, stdio: {stdio} }}).unref();
          spawn('sleep', ['{SLEEP}'], {{ stdio: {stdio} }});
          await new Promise((done) => setTimeout(done, 200));
          return {answer};
        }};
        """),
        encoding="utf-8",
    )
    return "spawner.mjs"


@pytest.fixture
def node() -> None:
    require_proc()
    if shutil.which("node") is None:
        pytest.skip("needs node")
    assert not processes_running(f"sleep {SLEEP}"), "a leftover of an earlier run is still alive"


@probe("process cleanup")
@pytest.mark.parametrize("hang", [False, True], ids=["answers", "times-out"])
def test_a_js_check_leaves_no_child_process(tmp_path: Path, node: None, hang: bool) -> None:
    fn = check_module(tmp_path, hang=hang)
    reading = read({"type": "custom", "fn": fn}, "out", base_dir=tmp_path, custom_timeout=3.0)
    if hang:
        assert reading.final and "timed out after 3 s" in reading.message
    else:
        assert reading.status == "pass", reading.message
    # SIGKILL is sent before the reading is returned; the kernel may take a moment to end them.
    assert wait_until(lambda: not processes_running(f"sleep {SLEEP}"), timeout=10), processes_running(
        f"sleep {SLEEP}"
    )


@pytest.mark.multiprocess
@probe("interrupt")
def test_ctrl_c_during_a_js_check_leaves_no_child_process(
    tmp_path: Path, node: None, fake_command: FakeCommand
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    fn = check_module(run_dir, hang=True)
    base.write_samples_file(
        run_dir,
        {
            "schemaVersion": "omk.eval-sample-set/v2",
            "samples": [{"sample_id": "spawns", "prompt": "p", "assertions": [{"type": "custom", "fn": fn}]}],
        },
    )
    args = [
        executor_arg(fake_command.script({"*": "out"})),
        "--omk-judge=none",
        "--omk-record-mode=off",
        "-p",
        "no:cacheprovider",
    ]
    with pytest_process(args, cwd=run_dir, logs=run_dir / "logs") as run:
        # Both children run (the check itself waits 30 s, the default custom-check timeout).
        def spawned() -> bool:
            return sum(f"sleep {SLEEP}" == line for line in marked_processes(run.mark).values()) == 2

        assert wait_until(spawned, timeout=60), run.output()
        exited = base.interrupt(run)
        base.assert_clean_stop(run, exited, run_dir / "recs")
    assert not processes_running(f"sleep {SLEEP}")
