"""How the controller keeps each sample's record until the run ends, in a fraction of its size.

A record arrives as JSON values (nested dicts and lists: about 8 KB per sample in CPython for a
sample with a few checks, most of it the containers themselves, not the text). The run keeps, per
sample, a small view with only what the terminal section, the run totals and the comparisons read
(scores, outcome inputs, costs, metadata, the judge's missing readings) and, when a report file is
written, the whole record packed as compact UTF-8 JSON compressed with zlib (about 2 KB of JSON,
0.9 KB packed: at 10,000 samples the compression saves 9 MB for about 0.2 s, see
:data:`PACK_WINDOW_BITS`), which the report writers unpack. Neither holds a pytest object.
"""

from __future__ import annotations

import json
import sys
import zlib
from dataclasses import dataclass
from typing import Any

_EXECUTION_FIELDS = ("costUSD", "latencyMs", "replayed", "stopReason")
"""What the summary reads of an execution: the cost column and total, the latency and replayed
cells, and whether the answer was cut short."""
_READING_FIELDS = ("type", "status", "cause")
"""What the summary reads of a missing reading: why the judge gave none (``judgeMissingReasons``)."""
_REPEATED = frozenset({"file", "variant", "executor", "model", "metadata"})
"""Fields whose text most samples of a run repeat (the file, the model, the metadata's labels):
kept as one shared string each (:func:`sys.intern`) instead of one copy per sample."""
_REPORT_ONLY = frozenset({"prompt", "urls", "execution", "assertions", "rubric"})
"""Top-level fields the view leaves out or reduces: their text is read only by the report writers."""


@dataclass(frozen=True, slots=True)
class KeptRecord:
    """One sample's record as the run keeps it: ``view`` for the summary, ``packed`` for the reports
    (``None`` when the run writes no report)."""

    packed: bytes | None
    view: dict[str, Any]

    @classmethod
    def of(cls, record: dict[str, Any], *, whole: bool = True) -> KeptRecord:
        """Keep ``record`` (the wire form on the item's teardown report); the whole of it only when
        ``whole``: packing took a twentieth of a large replay, for records nothing would read."""
        return cls(packed=pack(record) if whole else None, view=summary_view(record))

    def record(self) -> dict[str, Any]:
        """The whole record again, as it arrived (only a record kept whole has it)."""
        if self.packed is None:
            raise ValueError(f"the record of {self.view.get('nodeid')!r} was kept for the summary only")
        return unpack(self.packed)


PACK_LEVEL = 1
"""zlib's fastest level: on records, level 6 packs 2 % smaller for several times the time."""
PACK_WINDOW_BITS = 12
"""A 4 KB window instead of zlib's default 32 KB, with :data:`PACK_MEMORY_LEVEL`: setting up
zlib's default state (about 256 KB, cleared on every call) cost three quarters of packing a 2 KB
record (66 µs of 90); this state packs it in a fifth of the time and 0.3 % larger. The stream's
header names its window, so :func:`unpack` needs no parameter."""
PACK_MEMORY_LEVEL = 4


def pack(record: dict[str, Any]) -> bytes:
    """Compact JSON in UTF-8, compressed; a lone surrogate from a provider's JSON string survives
    the round trip."""
    text = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
    packer = zlib.compressobj(PACK_LEVEL, zlib.DEFLATED, PACK_WINDOW_BITS, PACK_MEMORY_LEVEL)
    return packer.compress(text.encode("utf-8", "surrogatepass")) + packer.flush()


def unpack(data: bytes) -> dict[str, Any]:
    """The record :func:`pack` was given."""
    record: dict[str, Any] = json.loads(zlib.decompress(data).decode("utf-8", "surrogatepass"))
    return record


def summary_view(record: dict[str, Any]) -> dict[str, Any]:
    """The fields the run's summary, terminal section and comparisons read; no output or message text.

    Only missing readings are kept (with their type and cause): the totals count why the judge gave
    none, and nothing at the end of the run reads a passed or failed reading's text.
    """
    view = {
        key: _shared(value) if key in _REPEATED else value
        for key, value in record.items()
        if key not in _REPORT_ONLY
    }
    execution = record.get("execution")
    view["execution"] = None if execution is None else {key: execution.get(key) for key in _EXECUTION_FIELDS}
    if execution is not None and execution.get("previousOutput") is not None:
        # The few samples a re-recording changed: the summary lists them (see report.answer_diff).
        view["execution"]["previousOutput"] = execution["previousOutput"]
    view["assertions"] = [
        _missing(entry) for entry in record.get("assertions") or [] if entry.get("status") == "missing"
    ]
    view["rubric"] = {
        name: _missing(entry)
        for name, entry in (record.get("rubric") or {}).items()
        if entry.get("status") == "missing"
    }
    return view


def _missing(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: entry.get(key) for key in _READING_FIELDS if key in entry}


def _shared(value: Any) -> Any:
    """``value`` with its strings interned, in nested lists and dicts too."""
    if isinstance(value, str):
        return sys.intern(value)
    if isinstance(value, list):
        return [_shared(item) for item in value]
    if isinstance(value, dict):
        return {
            sys.intern(key) if isinstance(key, str) else key: _shared(item) for key, item in value.items()
        }
    return value
