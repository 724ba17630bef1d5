"""An embedded V8 (the ``mini-racer`` wheel) that decides what JavaScript decides.

The reference grades ``regex`` with ``new RegExp(pattern, flags || 'i').test(output)`` and compares
text case-insensitively with ``toLowerCase()``. Python's ``re`` and ``str.lower`` differ from both in
many corners (case folding of U+212A or ``ſ``, UTF-16 units without ``u``, class escapes, syntax
accepted by one side only, newer Unicode case pairs), so these are not translated but run in V8.

Strings cross the boundary as JSON text: Python strings may hold lone surrogates, which the
wheel's UTF-8 transport refuses; ``JSON.stringify`` escapes them on the way back.

One :class:`JsEngine` per process is created by the session (lazily: its context starts in about
70 ms) and passed to graders and the loader; compiled expressions are cached inside the context.
Every evaluation has a time limit; its expiry is a :class:`JsTimeout`, never the wheel's exception.
"""

from __future__ import annotations

import atexit
import json
import threading
from dataclasses import dataclass
from typing import Any

from pytest_omk.js.regex_syntax import certainly_compiles

DEFAULT_TIMEOUT = 2.0
"""Seconds one evaluation may run (a catastrophic backtracking pattern is stopped, not waited for)."""
RECENT_LOWERED = 8
"""Non-ASCII texts whose ``toLowerCase()`` is kept (a sample's checks lower the same output in turn)."""

_PRELUDE = r"""
(() => {
  const cache = new Map();
  const rx = (p, f) => {
    const key = f + "/" + p;
    let r = cache.get(key);
    if (r === undefined) {
      if (cache.size > 4096) cache.clear();
      r = new RegExp(p, f);
      cache.set(key, r);
    }
    r.lastIndex = 0;  // a fresh RegExp per test in the reference: g/y start at 0
    return r;
  };
  const ops = {
    compile: ([p, f]) => { try { new RegExp(p, f); return null; } catch (e) { return String(e.message); } },
    search: ([p, f, s]) => {
      let r;
      try { r = rx(p, f); } catch (e) { return { error: String(e.message) }; }
      const m = r.exec(s);
      return m === null ? null : { index: m.index, text: m[0], flags: r.flags };
    },
    lower: ([texts]) => texts.map((t) => t.toLowerCase()),
  };
  globalThis.__omk = (name, args) => JSON.stringify(ops[name](JSON.parse(args)));
})();
"""


class JsTimeout(Exception):
    """An evaluation ran past the engine's time limit; the message names the limit."""


class JsUnavailable(Exception):
    """The embedded V8 could not be started."""


@dataclass(frozen=True)
class Match:
    """Where a regular expression matched, in Python string indices."""

    start: int
    end: int
    flags: str
    """The flags as JavaScript normalizes them (``RegExp.prototype.flags``: sorted)."""


class JsEngine:
    """One V8 context for this process: regex compile/search and string case rules."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout
        self._racer: Any = None
        self._lock = threading.Lock()
        self._recent: dict[str, str] = {}
        # Every sample of a set is validated against the same few patterns; compiling is pure.
        self._compiled: dict[tuple[str, str], str | None] = {}
        self._evaluations = 0

    def _call(self, op: str, *args: Any) -> Any:
        from py_mini_racer import JSTimeoutException

        payload = json.dumps(list(args), ensure_ascii=True)
        with self._lock:
            self._evaluations += 1
            racer = self._start()
            try:
                out = racer.call("__omk", op, payload, timeout_sec=self.timeout)
            except JSTimeoutException:
                # The terminated evaluation reports back later; a trivial one drains it, so that
                # the context stays usable and closes cleanly.
                racer.eval("0")
                raise JsTimeout(
                    f"JavaScript evaluation stopped after the {self.timeout:g} s limit "
                    "(the pattern backtracks catastrophically on this input?)"
                ) from None
        return json.loads(out)

    def _start(self) -> Any:
        if self._racer is None:
            try:
                from py_mini_racer import MiniRacer
            except ImportError as exc:  # pragma: no cover - a declared dependency
                raise JsUnavailable(f"the mini-racer package is not installed ({exc})") from None
            racer = MiniRacer()
            racer.eval(_PRELUDE)
            self._racer = racer
            # The wheel's event-loop thread is not a daemon: an unclosed context after a stopped
            # evaluation keeps the interpreter from exiting. The session closes it; this is the
            # safety net for any other owner.
            atexit.register(self.close)
        return self._racer

    def close(self) -> None:
        """Release the V8 context (a later call starts a new one)."""
        with self._lock:
            if self._racer is not None:
                self._racer.close()
                self._racer = None
                atexit.unregister(self.close)

    def regex_error(self, pattern: str, flags: str) -> str | None:
        """Why ``new RegExp(pattern, flags)`` throws, or ``None`` when it compiles (asked once
        per pattern and flags)."""
        key = (pattern, flags)
        if key not in self._compiled:
            # A plain pattern needs no V8 (nor its start, a tenth of a second): regex_syntax.
            plain = certainly_compiles(pattern, flags)
            self._compiled[key] = None if plain else self._call("compile", pattern, flags)
        return self._compiled[key]

    def search(self, pattern: str, flags: str, text: str) -> Match | None:
        """The first match of ``/pattern/flags`` in ``text`` as ``RegExp.prototype.exec`` finds it
        (so a sticky ``y`` pattern matches only at index 0); ``ValueError`` if it does not compile."""
        found = self._call("search", pattern, flags, text)
        if found is None:
            return None
        if "error" in found:
            raise ValueError(found["error"])
        start = python_index(text, found["index"])
        return Match(start, start + len(found["text"]), found["flags"])

    @property
    def evaluations(self) -> int:
        """How many times V8 was asked something (each a round trip of about 0.1-0.3 ms)."""
        return self._evaluations

    def lower(self, *texts: str) -> list[str]:
        """``toLowerCase()`` of each text, with at most one evaluation.

        ASCII text is lowered by Python: both map exactly ``A``-``Z`` to ``a``-``z`` there, and a
        round trip per check was a tenth of a replay's time. Other text goes to V8 (Unicode
        versions and special casing differ), and the last few answers are kept, since every check
        of a sample lowers the same output.
        """
        lowered = [text.lower() if text.isascii() else self._recent.get(text) for text in texts]
        missing = [text for text, low in zip(texts, lowered, strict=True) if low is None]
        if missing:
            answers: list[str] = self._call("lower", missing)
            found = dict(zip(missing, answers, strict=True))
            with self._lock:
                self._recent.update(found)
                while len(self._recent) > RECENT_LOWERED:
                    del self._recent[next(iter(self._recent))]
            lowered = [found[text] if low is None else low for text, low in zip(texts, lowered, strict=True)]
        return [low for low in lowered if low is not None]


def python_index(text: str, utf16_index: int) -> int:
    """The Python index of the character at UTF-16 offset ``utf16_index`` of ``text``."""
    units = 0
    for index, char in enumerate(text):
        if units >= utf16_index:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(text)
