"""The pytest side of record modes: one start time for the whole run, and ``rewrite``'s clean-up.

``once`` and ``rewrite`` tell this run's recordings from older ones by modification time, so all
processes of a run must share one start: the controller's, handed to xdist workers in their
``workerinput``. After the run (controller only), ``rewrite`` deletes the recordings of every
sample that ran which this run did not use: older repeats and takes, answers to a prompt since
edited. Recordings of samples that did not run (``-k``, ``--lf``, other files) are left alone.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_omk.app.calls import KIND as APP_KIND
from pytest_omk.config.settings import Settings
from pytest_omk.recordings.files import RecordingFileError
from pytest_omk.recordings.modes import Caller, caller_of, relative_source, stale
from pytest_omk.recordings.tree import RecordingTree

if TYPE_CHECKING:
    from pytest_omk.execute.base import Executor

STARTED_KEY = "omk_started_ns"


def run_started_ns(config: pytest.Config) -> int:
    """The run's start (ns since the epoch): the controller's, also inside an xdist worker."""
    workerinput = getattr(config, "workerinput", None)
    if isinstance(workerinput, dict) and isinstance(workerinput.get(STARTED_KEY), int):
        return int(workerinput[STARTED_KEY])
    started = config.stash.get(_started_key, None)
    if started is None:
        started = time.time_ns()
        config.stash[_started_key] = started
    return started


_started_key = pytest.StashKey[int]()


class RecordingsPlugin:
    """Registered by the plugin; shares the start with workers and prunes after ``rewrite``."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.started_ns = run_started_ns(config)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[STARTED_KEY] = self.started_ns

    def prune(
        self, directory: Path, rows: list[dict[str, Any]], rootdir: Path, callers: set[Caller]
    ) -> list[Path]:
        """Delete this run's unused recordings of the samples in ``rows``; return what was removed.

        Only the recordings of ``callers`` (the executor, endpoint and model of the model under
        test and of the judge this run called) are candidates: another model's or another
        server's recordings of the same samples are not this run's to judge (URL fetches are).
        """
        ran: set[tuple[str, str]] = set()
        for row in rows:
            file = relative_source(rootdir / str(row.get("file", "")), directory)
            # Only samples that got an answer used recordings: a skip or an error leaves them be.
            if file is not None and row.get("outcome") in ("passed", "failed", "xfailed", "xpassed"):
                ran.add((file, str(row.get("sample_id", ""))))
        # Through the tree: a link in the recordings directory is never followed to delete elsewhere.
        tree = RecordingTree(directory)
        documents = []
        app_calls: list[tuple[Path, str | None, str, Caller]] = []
        for kind in tree.kinds():
            for path in tree.files(kind):
                with contextlib.suppress(OSError, RecordingFileError):
                    document = tree.read(path)
                    if document.kind == APP_KIND:
                        app_calls.append((path, document.file, document.label, app_caller(document.identity)))
                        continue
                    caller = caller_of(document.kind, document.identity)
                    if caller is None or caller in callers:
                        documents.append((path, document.file, document.label))
        used = self._used_app_callers(app_calls)
        documents += [(path, file, label) for path, file, label, caller in app_calls if caller in used]
        return [path for path in stale(documents, ran, self.started_ns) if tree.remove(path)]

    def _used_app_callers(self, app_calls: list[tuple[Path, str | None, str, Caller]]) -> set[Caller]:
        """The endpoints and models an app called this run (a recording written or replayed since
        the start): only those of its recordings may be pruned, as for the executors."""
        used: set[Caller] = set()
        for path, _, _, caller in app_calls:
            with contextlib.suppress(OSError):
                if path.stat().st_mtime_ns >= self.started_ns:
                    used.add(caller)
        return used


def app_caller(identity: dict[str, Any]) -> Caller:
    """An app's recorded model call as a :data:`Caller`: its endpoint and the model its body names."""
    body, endpoint = identity.get("body"), identity.get("endpoint")
    model = body.get("model") if isinstance(body, dict) else None
    return (
        APP_KIND,
        None,
        endpoint if isinstance(endpoint, str) else None,
        model if isinstance(model, str) else None,
    )


def pruned_line(removed: list[Path], directory: Path) -> str:
    """``omk: rewrite removed 2 recordings this run did not use: execute/5c/a-....json, ...``."""
    if not removed:
        return "omk: rewrite removed no recording (this run used every recording of what it ran)"
    names = [
        path.relative_to(directory).as_posix() if path.is_relative_to(directory) else str(path)
        for path in removed
    ]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    count = f"{len(names)} recording{'' if len(names) == 1 else 's'}"
    return f"omk: rewrite removed {count} this run did not use: {shown}"


def run_callers(model: Executor | None, judge_spec: str | None, settings: Settings) -> set[Caller]:
    """Who this run calls, as recordings name it: the model under test and the judge (what
    ``rewrite`` may prune)."""
    from pytest_omk.execute.calls import executor_endpoint
    from pytest_omk.run.executors import make_executor

    judge = make_executor(judge_spec, timeout=settings.timeout) if judge_spec else None
    pairs = (("execute", model, settings.model), ("judge", judge, settings.judge_model))
    return {(kind, e.id, executor_endpoint(e), m) for kind, e, m in pairs if e is not None}
