"""The record modes (``--omk-record-mode``), vcrpy's vocabulary.

``new_episodes``  replay a recorded call, call live and record on a miss (default)
``none``          replay only: a miss raises :class:`~pytest_omk.errors.ReplayMissError` (for CI)
``all``           always call live and overwrite the recording
``off``           always call live, read and write nothing
"""

from __future__ import annotations

from typing import Literal

RecordMode = Literal["new_episodes", "none", "all", "off"]
RECORD_MODES: tuple[RecordMode, ...] = ("new_episodes", "none", "all", "off")
