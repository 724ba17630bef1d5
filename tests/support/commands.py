"""The scriptable fake command executor (``tests/fakes/omk_command.py``) and its judge replies."""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import subprocess
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_omk.__main__ import main as omk_main_entry

FAKE_COMMAND = Path(__file__).resolve().parents[1] / "fakes" / "omk_command.py"


@dataclass
class FakeCommand:
    """Scripts ``tests/fakes/omk_command.py`` for one test."""

    directory: Path
    answers: dict[str, Any] = field(default_factory=dict)

    @property
    def script_path(self) -> Path:
        return self.directory / "answers.json"

    @property
    def log_dir(self) -> Path:
        return self.directory / "requests"

    def script(self, answers: Mapping[str, Any]) -> str:
        """Write the answers and return the ``--omk-executor`` spec running the fake."""
        self.answers = dict(answers)
        self.script_path.write_text(json.dumps(self.answers, ensure_ascii=False), encoding="utf-8")
        return self.spec

    @property
    def spec(self) -> str:
        # -S: no site (the editable install's finder, .pth files); the fake needs only the stdlib,
        # and tests start it once per sample.
        argv = [
            sys.executable,
            "-S",
            str(FAKE_COMMAND),
            "--script",
            str(self.script_path),
            "--log",
            str(self.log_dir),
        ]
        return shlex.join(argv)

    def request(self, sample_id: str) -> dict[str, Any]:
        """What the command received for ``sample_id`` (plus ``process_cwd``)."""
        record: dict[str, Any] = json.loads((self.log_dir / f"{sample_id}.json").read_text(encoding="utf-8"))
        return record

    def called(self) -> list[str]:
        """Sample ids the command was called for."""
        return sorted(p.stem for p in self.log_dir.glob("*.json")) if self.log_dir.is_dir() else []


def judge_reply(score: int, reason: str = "scripted judge reply") -> dict[str, Any]:
    """A fake-command answer whose output is a valid judge reply."""
    return {"output": json.dumps({"score": score, "reason": reason})}


def omk_command(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m pytest_omk <args>`` in ``cwd`` (``merge``, ``render``), its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "pytest_omk", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


HIDDEN_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)
"""Warnings a fresh interpreter's default filters do not print (outside ``__main__``)."""


def omk_main(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """:func:`omk_command` in this process: the same command line, exit status, stdout and stderr,
    without an interpreter start (about half a CPU-second, mostly the package's imports).

    Warnings land on its stderr as a fresh interpreter's default filters would print them; an
    exception escapes into the test (and fails it) where a child would print a traceback. Keep
    :func:`omk_command` where the claim needs a fresh interpreter (imports, the ``-m`` entry itself).
    """
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.chdir(cwd),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("default")
        for category in HIDDEN_BY_DEFAULT:
            warnings.filterwarnings("ignore", category=category)
        try:
            code = omk_main_entry(list(args))
        except SystemExit as exc:  # argparse's own errors (exit 2), as the child would end
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
            if isinstance(exc.code, str):
                err.write(exc.code + "\n")
    for warning in caught:
        err.write(warnings.formatwarning(warning.message, warning.category, warning.filename, warning.lineno))
    argv = [sys.executable, "-m", "pytest_omk", *args]
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())
