"""The ``gold init --html`` labelling page in headless Chromium: label with the mouse and the keys,
and the YAML the page writes loads with ``--omk-gold``'s reader as the same (hostile) ids."""

from __future__ import annotations

import json
from pathlib import Path

from websockets.sync.client import ClientConnection

from pytest_omk.loading.gold import load_gold
from tests.browser.cdp import Page
from tests.browser.reports import open_report
from tests.support.commands import omk_command

HOSTILE_ID = 'x</section><script>alert(1)</script>\u202e\x1b[31m"\u2028yes \U0001f600'
IDS = ["plain", HOSTILE_ID, "2026-01-01"]


def _report(path: Path) -> None:
    samples = [
        {
            "nodeid": f"f::{i}",
            "file": "f",
            "sample_id": sid,
            "prompt": "<b>bold?</b> \u202eright-to-left",
            "scores": {"judge": 1 + i},
            "execution": {"output": "<img src=x onerror=alert(1)>\x1b[2J"},
        }
        for i, sid in enumerate(IDS)
    ]
    document = {"schemaVersion": "pytest-omk.report/v1", "config": {}, "summary": {}, "samples": samples}
    path.write_text(json.dumps(document), encoding="utf-8")


def _key(page: Page, key: str) -> None:
    if len(key) == 1:  # a printable key carries its text
        page.send("Input.dispatchKeyEvent", type="keyDown", key=key, text=key)
    else:
        page.send("Input.dispatchKeyEvent", type="keyDown", key=key)
    page.send("Input.dispatchKeyEvent", type="keyUp", key=key)


def test_labels_chosen_in_the_page_load_back_as_the_same_ids(
    browser: ClientConnection, tmp_path: Path
) -> None:
    _report(tmp_path / "r.json")
    done = omk_command(tmp_path, "gold", "init", "r.json", "gold", "--html", "label.html")
    assert done.returncode == 0, done.stderr
    page = open_report(browser, tmp_path / "label.html")  # no console error, no request but itself
    assert page.evaluate("document.querySelectorAll('img, b').length") == 0  # the markup stayed text
    assert page.evaluate("document.getElementById('count').textContent") == "0 of 3 labelled"

    page.click("section.item:nth-of-type(1) button.score[data-score='4']")
    page.click("section.item:nth-of-type(1) h2")  # the first is current (a heading: no field focused)
    _key(page, "j")
    _key(page, "2")  # the second sample, by keyboard
    page.type_into("section.item:nth-of-type(2) textarea", 'wrong: "quoted" \u00e9t\u00e9 \U0001f600 ')
    _key(page, "3")  # typed into the reason, not a score
    page.evaluate("document.activeElement.blur()")
    _key(page, "ArrowDown")
    _key(page, "5")
    assert page.evaluate("document.getElementById('count').textContent") == "3 of 3 labelled"

    written = page.evaluate("document.getElementById('yaml').value")
    (tmp_path / "gold" / "annotations.yaml").write_text(written, encoding="utf-8")
    text = (tmp_path / "gold" / "metadata.yaml").read_text(encoding="utf-8")
    (tmp_path / "gold" / "metadata.yaml").write_text(text.replace("YOUR-NAME", "tester"), encoding="utf-8")
    loaded = load_gold(tmp_path / "gold")
    assert [(a.sample_id, a.score) for a in loaded.annotations] == [(IDS[0], 4), (IDS[1], 2), (IDS[2], 5)]
    assert loaded.annotations[1].reason == 'wrong: "quoted" \u00e9t\u00e9 \U0001f600 3'
