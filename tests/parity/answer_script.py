"""A command executor for the script-executor parity test: it answers each sample with its case.

Run as ``python answer_script.py ANSWERS.json``. It reads the request on stdin (pytest-omk sends
``sample_id``; the reference sends only ``model``, ``system`` and ``prompt``, and the prompt is the
sample id), prints the case's output and telemetry as protocol JSON, and, when the executor passed
mocks through ``OMK_MOCKS_FILE``, writes the case's mock hits to ``hits.json`` beside that file, as
a tool-call hook would: both runners take ``mockStats`` from there.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    """Answer one request."""
    request = json.load(sys.stdin)
    with open(sys.argv[1], encoding="utf-8") as handle:
        answers = json.load(handle)
    answer = dict(answers[request.get("sample_id") or request["prompt"]])
    hits = answer.pop("hits")
    mocks_file = os.environ.get("OMK_MOCKS_FILE")
    if mocks_file:
        with open(os.path.join(os.path.dirname(mocks_file), "hits.json"), "w", encoding="utf-8") as handle:
            json.dump(hits, handle)
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
