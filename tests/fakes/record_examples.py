"""Re-record the example evals' committed recordings against the scripted fake model server.

The examples must run offline with no account, so their recordings come from this script: a local
OpenAI-compatible stand-in answers with canned, plausible replies (and canned judge verdicts).
Run from the repository root::

    python -m tests.fakes.record_examples            # rewrites examples/*/recordings

To evaluate a real model instead, run the example with ``--omk-record-mode=all`` and a real key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.fake_llm import FakeLLM, RecordedRequest

REPO = Path(__file__).resolve().parents[2]

QUICKSTART_ANSWERS = {
    "annual plan 20 days ago": (
        "Good news: your annual plan was bought 20 days ago, which is inside our 30-day window, so you "
        "qualify for a full refund. Once I submit it, the money goes back to your original payment method "
        "within 5-10 business days. Would you like me to start the refund now?"
    ),
    "Extract the order": '{"order_id": "A-1042", "items": ["USB-C cable", "USB-C cable", "laptop stand"], "total": 54.90}',
    "Classify this support ticket": "billing",
    "Review this function": (
        "This function is vulnerable to SQL injection: `name` is pasted into the SQL text, so an input "
        "such as `' OR '1'='1` returns every user, and worse payloads can modify data.\n\n"
        "Use a parameterized query so the driver sends the value separately from the SQL:\n\n"
        "```python\ndef find_user(db, name):\n"
        '    return db.execute("SELECT * FROM users WHERE name = ?", (name,)).fetchone()\n```'
    ),
    "Summarize these release notes": (
        "Release 4.2 lets you share folders with view-only links and resumes uploads automatically after a "
        "dropped connection. The desktop app also uses 30% less memory, and large CSV previews no longer freeze."
    ),
    "Write a two-line greeting": (
        "Hi Priya, welcome to Acme Cloud! We're glad to have you, and we're here whenever you need a hand.\n"
        "- Acme Support"
    ),
    "end-to-end encrypted shared folders": (
        "Yes. Acme Cloud supports end-to-end encrypted shared folders, so only you and the people you "
        "share with can read the files."
    ),
}

# Judge verdicts, chosen by a phrase of the criterion or by the judge kind (its system line).
RUBRIC_VERDICTS = {
    "Says the purchase qualifies": (5, "Confirms the full refund within the 30-day window and explains the 5-10 day return to the original payment method."),
    "polite and to the point": (4, "Friendly and brief; the closing offer is useful rather than filler."),
    "Identifies the SQL injection": (5, "Names SQL injection, shows a concrete payload and its effect."),
    "corrected version of the function": (4, "Gives a correct parameterized query; does not mention other drivers' placeholder styles."),
}
ASSERTION_VERDICTS = {
    "faithfulness judge": (5, "Every claim (30-day window, full refund, 5-10 business days) is in the policy."),
    "semantic similarity judge": (4, "Same key points as the reference; adds the memory and CSV fixes."),
    "answer relevancy judge": (5, "A two-line greeting to Priya with the requested opening and signature."),
}


def _verdict(score: int, reason: str, *, rubric: bool) -> str:
    body: dict[str, object] = {"score": score, "reason": reason}
    if rubric:
        body = {"reasoning": "Checked the output against the criterion point by point.", **body}
    return json.dumps(body)


def script_quickstart(llm: FakeLLM) -> None:
    """Canned answers for examples/quickstart."""
    for phrase, (score, reason) in RUBRIC_VERDICTS.items():
        llm.add_rule(phrase, _verdict(score, reason, rubric=True), system="impartial judge")
    for system, (score, reason) in ASSERTION_VERDICTS.items():
        llm.add_rule(None, _verdict(score, reason, rubric=False), system=system)

    def plain(request: RecordedRequest) -> bool:
        return not request.system

    for phrase, answer in QUICKSTART_ANSWERS.items():
        llm.add_rule(phrase, answer, predicate=plain)


def record(example: str, scripter: object) -> int:
    """Run one example against the fake with ``--omk-record-mode=all``; return pytest's exit code."""
    directory = REPO / "examples" / example
    with FakeLLM() as llm:
        scripter(llm)  # type: ignore[operator]
        env = {**os.environ, "OPENAI_BASE_URL": llm.openai_base_url, "OPENAI_API_KEY": "sk-fake-recording-key"}
        done = subprocess.run(
            [sys.executable, "-m", "pytest", str(directory), "-q", "--omk-record-mode=all", "-p", "no:cacheprovider"],
            cwd=REPO,
            env=env,
            check=False,
        )
    return done.returncode


def main() -> int:
    return record("quickstart", script_quickstart)


if __name__ == "__main__":
    raise SystemExit(main())
