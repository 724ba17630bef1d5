"""Reading a streamed body with a size cap, for every HTTP client of the run.

Provider answers (``execute/http_client.py``) and fetched pages (``resolve/safe_http.py``) are
hostile input: a server may send hundreds of megabytes. Both read through :func:`read_capped`,
which stops at the first chunk past the limit instead of buffering the whole body first; each
caller says which error that is in its own terms.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable


async def read_capped(chunks: AsyncIterable[bytes], limit: int, too_large: Callable[[], Exception]) -> bytes:
    """The concatenated ``chunks``; raises ``too_large()`` as soon as they exceed ``limit`` bytes."""
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise too_large()
    return bytes(body)
