"""The run's one TLS context, shared by every HTTP client of the run (no pytest here).

Building a context loads the CA bundle (tens of milliseconds). The warm-up builds it on the call
loop while pytest collects; a client created before the warm-up got that far builds it itself, so
whichever comes first, it is built once and the first wave of calls never waits for a second one.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl


class SharedTls:
    """Builds the TLS context on first use and hands the same one to every later caller."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._context: ssl.SSLContext | None = None
        self.builds = 0
        """How many contexts were built (one per run; a test counts it)."""

    def context(self) -> ssl.SSLContext:
        """The context: what httpx would build for a client (CA bundle, ``SSL_CERT_FILE``/``SSL_CERT_DIR``)."""
        with self._lock:
            if self._context is None:
                # httpx (and ssl) are imported here, on the call loop, not when the plugin loads.
                import httpx

                self._context = httpx.create_ssl_context(verify=True, trust_env=True)
                self.builds += 1
            return self._context
