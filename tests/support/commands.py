"""The scriptable fake command executor (``tests/fakes/omk_command.py``) and its judge replies."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
        argv = [
            sys.executable,
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
