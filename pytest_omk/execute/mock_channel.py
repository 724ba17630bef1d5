"""The reference's mock channel for command executors, both ways.

Before the command runs, the sample's mocks are written to ``mocks.json`` (``{"mocks", "baseDir",
"strict"}``) in a private temporary folder whose path the command finds in ``OMK_MOCKS_FILE``; a
hook that intercepts tool calls (the reference's, or the command's own) counts hits in
``hits.json`` beside it (``{"hits_total", "misses_total", "perMock"}``), which is read back into
``mockStats`` after the command ends. So an existing omk script executor works unchanged. The
folder is removed afterwards.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pytest_omk.models.results import MockStats
from pytest_omk.models.run import ExecutionRequest


@dataclass(frozen=True)
class MockChannel:
    """The environment for one command run and, afterwards, the hits its hook recorded."""

    folder: Path | None

    @property
    def env(self) -> dict[str, str]:
        """What the command's environment gains: ``OMK_MOCKS_FILE`` when there are mocks."""
        if self.folder is None:
            return {}
        return {"OMK_MOCKS_FILE": str(self.folder / "mocks.json")}

    def stats(self) -> MockStats | None:
        """What the hook recorded (no file: no hit yet), or ``None`` without mocks."""
        if self.folder is None:
            return None
        try:
            raw = json.loads((self.folder / "hits.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return MockStats()
        if not isinstance(raw, dict):
            return MockStats()
        per_mock = raw.get("perMock")
        return MockStats(
            hits=_count(raw.get("hits_total")),
            misses=_count(raw.get("misses_total")),
            perMock={str(k): _count(v) for k, v in per_mock.items()} if isinstance(per_mock, dict) else {},
        )

    @classmethod
    @contextmanager
    def open(cls, request: ExecutionRequest) -> Iterator[MockChannel]:
        """A channel for ``request``: a folder with ``mocks.json`` when the sample has mocks."""
        if not request.mocks:
            yield cls(None)
            return
        folder = Path(tempfile.mkdtemp(prefix="omk-mocks-"))
        try:
            base = str(request.mock_base_dir) if request.mock_base_dir else None
            document = {"mocks": request.mocks, "baseDir": base, "strict": request.mocks_strict}
            (folder / "mocks.json").write_text(
                json.dumps(document, ensure_ascii=False, indent=2), encoding="utf-8"
            )
            yield cls(folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
