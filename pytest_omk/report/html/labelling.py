"""The labelling page of ``gold init --html``: label a report's samples without a spreadsheet.

One self-contained page under the HTML report's rules: a Content-Security-Policy that allows only
its own inline style and script (by hash) and no request at all, every text from the report
(prompts, outputs, sample ids: hostile) escaped with the report's one escaper. It shows each
sample's prompt, output and rubric dimensions, never the judge's scores or reasons (the labels
stay blind), and builds the ``annotations.yaml`` text as you label: score buttons, keys 1-5 for
the current sample, j/k (or the arrow keys) to move.

Sample ids travel in a ``data-id`` attribute as ASCII JSON (so any id, control characters
included, comes back exactly), and the script writes each id and reason as a YAML double-quoted
scalar with every non-ASCII character escaped: the text it produces loads with ``--omk-gold``'s
reader as the same ids.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from importlib import resources

from pytest_omk.models.report import SampleRecord
from pytest_omk.report.html.escape import text

OUTPUT_CHARS = 20_000
"""Most characters of an output shown (a longer one is cut, with a note)."""


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _hash(source: str) -> str:
    return (
        "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"
    )


def _item(index: int, record: SampleRecord) -> str:
    output = record.execution.output if record.execution is not None else ""
    cut = (
        f"<p class=note>(output cut at {OUTPUT_CHARS:,} characters)</p>" if len(output) > OUTPUT_CHARS else ""
    )
    dimensions = "".join(f"<li>{text(name)}</li>" for name in record.rubric)
    buttons = "".join(
        f'<button type="button" class="score" data-score="{s}">{s}</button>' for s in range(1, 6)
    )
    return (
        f'<section class="item" data-id="{text(json.dumps(record.sample_id))}">'
        f"<h2>{index + 1}. {text(record.sample_id)}</h2>"
        f"<h3>Prompt</h3><pre>{text(record.prompt or '')}</pre>"
        f"<h3>Output</h3><pre>{text(output[:OUTPUT_CHARS])}</pre>{cut}"
        f"<h3>Rubric dimensions</h3><ul>{dimensions or '<li>(none)</li>'}</ul>"
        f'<div class="scores">{buttons}</div>'
        f'<label>Reason (optional) <textarea rows="2"></textarea></label></section>'
    )


def render_labelling(records: Sequence[SampleRecord]) -> str:
    """The whole page for ``records`` (in the order given)."""
    style, script = _asset("labelling.css"), _asset("labelling.js")
    policy = f"default-src 'none'; style-src {_hash(style)}; script-src {_hash(script)}"
    items = "".join(_item(i, r) for i, r in enumerate(records))
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>Label {len(records)} samples</title><style>{style}</style></head><body>",
            "<header><h1>Gold labels</h1><p>Score each answer 1 (bad) to 5 (excellent) on its own merits. "
            "Keys: 1-5 score the current sample, j/k or the arrow keys move. Save the text below as "
            "annotations.yaml in the dataset directory.</p><p id=count></p></header>",
            f"<main>{items}</main>",
            '<aside><h2>annotations.yaml</h2><textarea id="yaml" rows="12" readonly></textarea></aside>',
            f"<script>{script}</script></body></html>\n",
        ]
    )
