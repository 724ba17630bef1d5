"""Regenerate the report screenshots in ``docs/img/`` (run from the repository root).

    python -m tests.browser.screenshots

Runs the quickstart and the A/B example offline from their recordings, writes their HTML reports
and Markdown summaries, and photographs them in headless Chromium: the quickstart's HTML report with
one sample's details open, and the A/B example's Markdown summary rendered as GitHub renders a step
summary (CommonMark with tables; the style here only approximates GitHub's).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from markdown_it import MarkdownIt

from tests.browser.cdp import chromium, find_chromium, open_page

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "docs" / "img"
_GITHUB_LIKE = """body { font: 14px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328;
  max-width: 880px; margin: 24px auto; padding: 16px 32px; border: 1px solid #d1d9e0; border-radius: 6px; }
h2 { border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; } h3 { margin-top: 24px; }
table { border-collapse: collapse; margin: 8px 0 16px; } th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
tr:nth-child(2n) { background: #f6f8fa; } th { font-weight: 600; }"""


def _run_example(name: str, work: Path) -> Path:
    target = work / name
    shutil.copytree(REPO / "examples" / name, target)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "GITHUB_STEP"))}
    args = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:html",
        "--omk-html=report.html",
        "--omk-markdown=summary.md",
    ]
    subprocess.run(args, cwd=target, env=env, stdout=subprocess.DEVNULL, check=False)
    return target


def main() -> None:
    binary = find_chromium()
    if binary is None:
        sys.exit("chromium is not installed (apt-get install chromium)")
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        quickstart, ab = _run_example("quickstart", work), _run_example("ab-compare", work)
        page_md = work / "summary.html"
        body = (
            MarkdownIt("commonmark").enable("table").render((ab / "summary.md").read_text(encoding="utf-8"))
        )
        page_md.write_text(
            f"<!DOCTYPE html><meta charset='utf-8'><style>{_GITHUB_LIKE}</style>{body}", encoding="utf-8"
        )
        with chromium(binary, work / "profile") as ws:
            page = open_page(ws, (quickstart / "report.html").as_uri())
            page.click("#samples tbody tr[data-index='6']")  # the tripwire sample: failed checks and reasons
            page.screenshot(OUT / "html-report-quickstart.png")
            page = open_page(ws, (ab / "report.html").as_uri())
            page.screenshot(OUT / "html-report-ab-compare.png")
            page = open_page(ws, page_md.as_uri())
            page.screenshot(OUT / "markdown-summary-ab-compare.png", width=980)
    print(f"screenshots written to {OUT}")


if __name__ == "__main__":
    main()
