"""A small Chrome DevTools Protocol client: headless Chromium driven over one websocket.

Only what the report's browser tests need: open a page, count console errors and network
requests, evaluate JavaScript, click and type with real input events, take screenshots.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
)
START_TIMEOUT = 60.0
"""Generous: seven engineers share two cores, and a cold Chromium start reads a lot from disk."""


def find_chromium() -> str | None:
    """The Chromium binary on PATH (Debian's ``chromium``, or a ``chromium-browser``/Chrome)."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Page:
    """One tab, attached in flat mode: every command and event carries its session id."""

    ws: ClientConnection
    session: str
    events: list[dict[str, Any]] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def send(self, method: str, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        """Send a command and wait for its reply; events seen meanwhile are kept in :attr:`events`."""
        ident = next(self._ids) + 1000
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params, "sessionId": self.session}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.ws.recv(timeout=max(deadline - time.monotonic(), 0.1)))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self.events.append(message)

    def wait_for(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        """The first event ``method`` (already received or arriving within ``timeout``)."""
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event["method"] == method:
                    return event
            message = json.loads(self.ws.recv(timeout=max(deadline - time.monotonic(), 0.1)))
            if "method" in message:
                self.events.append(message)

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression in the page (exceptions raise)."""
        reply = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the first element matching ``selector``."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def type_into(self, selector: str, text: str) -> None:
        """Focus ``selector`` and type ``text`` as keyboard input (fires ``input`` events)."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        self.send("Input.insertText", text=text)

    def screenshot(self, path: Path, width: int = 1280) -> None:
        """A PNG of the whole page at ``width`` CSS pixels."""
        # Lay the page out at ``width`` first: its height depends on it.
        self.send(
            "Emulation.setDeviceMetricsOverride", width=width, height=600, deviceScaleFactor=1, mobile=False
        )
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))

    def console_errors(self) -> list[str]:
        """Every console error, uncaught exception and browser log error seen so far."""
        errors = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.exceptionThrown":
                errors.append(str(params["exceptionDetails"].get("text")))
            elif event["method"] == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(
                    " ".join(str(a.get("value", a.get("description"))) for a in params.get("args", []))
                )
            elif event["method"] == "Log.entryAdded" and params["entry"]["level"] == "error":
                errors.append(str(params["entry"]["text"]))
        return errors

    def requests(self) -> list[str]:
        """The URL of every network request the page made."""
        return [
            e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"
        ]


@contextmanager
def chromium(binary: str, profile: Path) -> Iterator[ClientConnection]:
    """A headless Chromium with a fresh profile; yields the browser-level websocket."""
    process = subprocess.Popen(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": "disabled:"},
    )
    try:
        ws = connect(_browser_url(profile, process), max_size=None, open_timeout=START_TIMEOUT)
        with ws:
            yield ws
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _browser_url(profile: Path, process: subprocess.Popen[bytes]) -> str:
    # Chromium writes the port it picked, and the browser endpoint's path, to this file.
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chromium exited with status {process.returncode} before it listened")
        lines = port_file.read_text().split() if port_file.is_file() else []
        if len(lines) >= 2:
            return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
        time.sleep(0.1)
    raise RuntimeError(f"chromium did not start within {START_TIMEOUT:.0f} s")


def open_page(ws: ClientConnection, url: str) -> Page:
    """A new tab with console, log and network events on, navigated to ``url`` and loaded."""
    ws.send(json.dumps({"id": 1, "method": "Target.createTarget", "params": {"url": "about:blank"}}))
    target = _reply(ws, 1)["targetId"]
    ws.send(
        json.dumps(
            {"id": 2, "method": "Target.attachToTarget", "params": {"targetId": target, "flatten": True}}
        )
    )
    page = Page(ws, _reply(ws, 2)["sessionId"])
    for domain in ("Page", "Runtime", "Log", "Network"):
        page.send(f"{domain}.enable")
    page.send("Page.navigate", url=url)
    page.wait_for("Page.loadEventFired")
    return page


def _reply(ws: ClientConnection, ident: int) -> dict[str, Any]:
    while True:
        message = json.loads(ws.recv(timeout=30))
        if message.get("id") == ident:
            if "error" in message:
                raise RuntimeError(str(message["error"]))
            result: dict[str, Any] = message["result"]
            return result
