"""A command executor speaking omk's stdin/stdout protocol, scripted per ``sample_id``.

Usage: ``python omk_command.py [--script FILE] [--log DIR]``. The script (a JSON object keyed by
``sample_id``, with ``"*"`` as the fallback) comes from ``--script``, else the ``OMK_FAKE_SCRIPT``
environment variable (a file path or inline JSON text), else ``omk-command.json`` in the working
directory (the sample's cwd). Each answer is:

- a string: printed as plain text (the output);
- an object: printed as a JSON answer (``output``, ``inputTokens``, ``outputTokens``, ``costUSD``,
  ``durationApiMs``, ``numTurns``, ``stopReason``, ``toolCalls``, ``turns``, ``mockStats`` ...),
  after applying these control keys, which are never printed:

  - ``"echo": "prompt" | "system" | "cwd" | "model" | "request"``: the output is that request field
    (``"request"``: the whole request as JSON);
  - ``"text": "..."``: print this text verbatim instead of JSON;
  - ``"exit": N`` and ``"stderr": "..."``: write ``stderr`` and exit with code ``N``.

With ``--log DIR`` (or ``OMK_FAKE_LOG``) every request is written to ``DIR/<sample_id>.json`` as
``{"request": <stdin JSON>, "process_cwd": <os.getcwd()>}`` so tests can check what was sent.
A sample with no answer and no ``"*"`` fails with exit code 2.

Every call of the fake is a new interpreter (tests start hundreds), so it imports only what
``json`` brings anyway: no argparse, pathlib or typing, which more than doubled its start-up.
"""

from __future__ import annotations

import json
import os
import re
import sys

TYPE_CHECKING = False  # typing's own import costs as much as the rest; mypy reads this as True
if TYPE_CHECKING:
    from typing import Any

CONTROL_KEYS = ("echo", "text", "exit", "stderr")
SCRIPT_FILE = "omk-command.json"


def load_script(option: str | None) -> dict[str, Any]:
    """The answers, from ``--script``, ``OMK_FAKE_SCRIPT`` or ``omk-command.json`` in the cwd."""
    source = option or os.environ.get("OMK_FAKE_SCRIPT")
    if source is None:
        text = _read(SCRIPT_FILE) if os.path.isfile(SCRIPT_FILE) else "{}"
    elif source.lstrip().startswith("{"):
        text = source
    else:
        text = _read(source)
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as file:
        return file.read()


def log_request(directory: str | None, request: dict[str, Any]) -> None:
    if not directory:
        return
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", str(request.get("sample_id") or "unknown"))
    os.makedirs(directory, exist_ok=True)
    record = {"request": request, "process_cwd": os.getcwd()}
    with open(os.path.join(directory, f"{name}.json"), "w", encoding="utf-8") as file:
        file.write(json.dumps(record, ensure_ascii=False, indent=2))


def answer(spec: Any, request: dict[str, Any]) -> int:
    """Print the answer for ``spec``; return the exit code."""
    if isinstance(spec, str):
        sys.stdout.write(spec)
        return 0
    if not isinstance(spec, dict):
        sys.stdout.write(json.dumps(spec))
        return 0
    if "exit" in spec:
        sys.stderr.write(str(spec.get("stderr", "")))
        return int(spec["exit"])
    if "text" in spec:
        sys.stdout.write(str(spec["text"]))
        return 0
    reply = {k: v for k, v in spec.items() if k not in CONTROL_KEYS}
    echo = spec.get("echo")
    if echo == "request":
        reply["output"] = json.dumps(request, ensure_ascii=False, sort_keys=True)
    elif echo is not None:
        reply["output"] = str(request.get(echo) or "")
    sys.stdout.write(json.dumps(reply, ensure_ascii=False))
    return 0


def options(argv: list[str]) -> dict[str, str]:
    """``--script FILE`` and ``--log DIR`` (also ``--name=value``); anything else is a usage error."""
    found: dict[str, str] = {}
    words = iter(argv)
    for word in words:
        name, equals, value = word.partition("=")
        if name not in ("--script", "--log"):
            sys.stderr.write(
                f"usage: omk_command.py [--script FILE] [--log DIR]: unknown argument {word!r}\n"
            )
            raise SystemExit(2)
        found[name[2:]] = value if equals else next(words, "")
    return found


def main(argv: list[str] | None = None) -> int:
    args = options(sys.argv[1:] if argv is None else argv)
    request = json.loads(sys.stdin.read() or "{}")
    log_request(args.get("log", os.environ.get("OMK_FAKE_LOG")), request)
    script = load_script(args.get("script"))
    sample_id = request.get("sample_id")
    if sample_id in script:
        spec = script[sample_id]
    elif "*" in script:
        spec = script["*"]
    else:
        sys.stderr.write(f"omk_command: no answer scripted for sample {sample_id!r}")
        return 2
    return answer(spec, request)


if __name__ == "__main__":
    sys.exit(main())
