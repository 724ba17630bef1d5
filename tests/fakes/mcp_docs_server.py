"""A small stdio MCP server for the MCP resolver tests: ``python -m tests.fakes.mcp_docs_server``.

Its ``fetch_doc`` tool answers JSON ``{"data": {"body": ..., "meta": {...}}}`` built from its
arguments, so tests see exactly which arguments the resolver derived from a URL. Special slugs
exercise the error paths: ``missing`` returns an MCP error result, ``empty`` returns blank text,
``slow`` sleeps past any short call timeout. ``DOCS_API_TOKEN`` from the environment is echoed
(only its length) to prove the configured env reached the process without the value being shown.
``MCP_DOCS_PIDFILE``, when set, receives the server's process id.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("omk-test-docs")


@server.tool()
def fetch_doc(namespace: str, slug: str) -> str:
    """Return the document ``namespace/slug`` as JSON."""
    if slug == "missing":
        raise ValueError(f"no document {namespace}/{slug}")
    if slug == "empty":
        return "   "
    if slug == "slow":
        time.sleep(5)
    token = os.environ.get("DOCS_API_TOKEN", "")
    body = f"Document {slug} in {namespace}.\r\nToken length: {len(token)}."
    return json.dumps({"data": {"body": body, "meta": {"namespace": namespace, "slug": slug}}})


@server.tool()
def fetch_url(url: str) -> str:
    """Return a plain-text page naming ``url``."""
    return f"Plain page for {url}"


if __name__ == "__main__":
    pidfile = os.environ.get("MCP_DOCS_PIDFILE")
    if pidfile:
        Path(pidfile).write_text(str(os.getpid()), encoding="utf-8")
    server.run()
