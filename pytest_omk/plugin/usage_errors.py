"""Every usage error reaches the user the same way: pytest's one ``ERROR: ...`` line and exit 4.

pytest prints a :class:`pytest.UsageError` as one line only when it leaves a hook of the session
itself; three places would turn it into something else, and this plugin object covers each:

- raised while a file is *collected*, it becomes a collection error with a traceback: the session
  keeps the first one (:meth:`UsageErrors.defer`), the file yields nothing, and the error is raised
  once collection is finished;
- raised on an *xdist worker*, the controller only learns that the worker finished early, and
  xdist's bookkeeping then fails with an INTERNALERROR naming an unrelated test: the worker hands
  the message to the controller in its ``workeroutput``, and the controller raises it again as the
  worker goes down (xdist calls ``pytest_testnodedown`` before that bookkeeping);
- raised on the controller before the workers start (``pytest_configure``) it needs nothing.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

WORKER_OUTPUT_KEY = "omk_usage_error"
"""Where a worker leaves its usage error for the controller (its ``workeroutput``)."""


class UsageErrors:
    """The run's usage errors found after configuration; one plugin object per process."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.found: str | None = None
        """The first usage error found while collecting, raised when collection is finished."""

    def defer(self, message: str) -> None:
        """Keep ``message`` (the first one wins) to raise once collection is finished."""
        if self.found is None:
            self.found = message

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> Generator[None, object, object]:
        """Hand a usage error of the collection phase to the controller (on a worker)."""
        try:
            return (yield)
        except pytest.UsageError as exc:
            self._hand_over(exc)
            raise

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Raise the usage error found while collecting (before any item runs)."""
        if self.found is not None:
            raise pytest.UsageError(self.found)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """Hand a usage error raised before the first item (a missing key ...) to the controller."""
        try:
            return (yield)
        except pytest.UsageError as exc:
            self._hand_over(exc)
            raise

    def _hand_over(self, exc: pytest.UsageError) -> None:
        output: dict[str, Any] | None = getattr(self.config, "workeroutput", None)
        if output is not None and WORKER_OUTPUT_KEY not in output:
            output[WORKER_OUTPUT_KEY] = " ".join(str(arg) for arg in exc.args)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """On the controller: a worker that stopped on a usage error stops the run with it."""
        output = getattr(node, "workeroutput", None)
        message = output.get(WORKER_OUTPUT_KEY) if isinstance(output, dict) else None
        if message:
            raise pytest.UsageError(message)
