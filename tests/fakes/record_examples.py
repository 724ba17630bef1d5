"""Re-record the example evals' committed recordings against the scripted fake model server.

The examples must run offline with no account, so their recordings come from this script: a local
OpenAI-compatible stand-in answers with canned, plausible replies (and canned judge verdicts).
Run from the repository root::

    python -m tests.fakes.record_examples               # rewrites examples/*/recordings
    python -m tests.fakes.record_examples ab-compare    # only that example

To evaluate a real model instead, run the example with ``--omk-record-mode=all`` and a real key.

The recording key includes the endpoint (scheme, host, port and path of the provider URL), and the
stand-in listens on a random loopback port. Readers replay the examples with no ``OPENAI_BASE_URL``,
that is against ``https://api.openai.com``, so after recording (``--omk-record-mode=rewrite``,
which also removes files the run did not use) each file's endpoint is set to the provider's default
and the file re-keyed: the stand-in plays the part of the default endpoint, and nothing else in the
recordings changes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pytest_omk.execute.openai import DEFAULT_BASE_URL, chat_completions_url
from pytest_omk.recordings.endpoints import endpoint_key
from pytest_omk.recordings.files import (
    RESERVED_FIELDS,
    file_name,
    recording_key,
    render,
    shard_dir,
)
from pytest_omk.recordings.tree import RecordingTree
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
    "Says the purchase qualifies": (
        5,
        "Confirms the full refund within the 30-day window and explains the 5-10 day return to the original payment method.",
    ),
    "polite and to the point": (4, "Friendly and brief; the closing offer is useful rather than filler."),
    "Identifies the SQL injection": (5, "Names SQL injection, shows a concrete payload and its effect."),
    "corrected version of the function": (
        4,
        "Gives a correct parameterized query; does not mention other drivers' placeholder styles.",
    ),
}
ASSERTION_VERDICTS = {
    "faithfulness judge": (
        5,
        "Every claim (30-day window, full refund, 5-10 business days) is in the policy.",
    ),
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


# examples/ab-compare: one canned answer per (question phrase, variant). The variants are told
# apart by a phrase of their system prompt, so each answer is recorded under its own prompt.
AB_SYSTEMS = {"concise": "one or two short sentences", "detailed": "Answer completely"}
AB_ANSWERS = {
    "reset my password": {
        "concise": 'Click "Forgot password" on the sign-in page and open the link we email you.',
        "detailed": (
            'On the sign-in page, click "Forgot password" and enter your account email. Open the link we '
            "send to your inbox within 30 minutes and choose a new password. No email after a few minutes? "
            "Check your spam folder, then contact support@acme.example."
        ),
    },
    "annual plan 45 days ago": {
        "concise": "Yes: you get a pro-rated refund of the unused months.",
        "detailed": (
            "The full refund only applies within the 30-day window, so at 45 days you qualify for a pro-rated "
            "refund of the unused months. It goes back to your original payment method within 5-10 business days."
        ),
    },
    "export all my files": {
        "concise": "Go to Settings > Data > Export all, then download the zip when we email you that it is ready.",
        "detailed": (
            "1. Open Settings > Data and click Export all. 2. Choose whether to include shared folders. "
            "3. We prepare a zip archive in the background and email you a download link, usually within an "
            "hour for large accounts. 4. The link stays valid for 7 days. If the export fails, retry it from "
            "the same page or split it by folder."
        ),
    },
    "over my storage quota": {
        "concise": "Your account becomes read-only until you delete files.",
        "detailed": (
            "Over the quota your account becomes read-only: you can still open and download files, but "
            "uploads and sync stop. Delete or empty the trash to get under the limit, or upgrade your plan. "
            "Nothing is deleted automatically."
        ),
    },
    "Classify this ticket": {"concise": "bug", "detailed": "bug"},
    "two-factor authentication": {
        "concise": "Open Settings > Security and turn on two-factor authentication with an authenticator app.",
        "detailed": (
            "Open Settings > Security, click Turn on two-factor authentication and scan the QR code with an "
            "authenticator app. Enter the 6-digit code to confirm, then download your backup codes and keep "
            "them somewhere safe: they are the only way in if you lose your phone."
        ),
    },
    "stopped syncing": {
        "concise": "Check status.acme.example for current incidents.",
        "detailed": (
            "First check status.acme.example for a current incident. If nothing is listed, pause and resume "
            "sync from the tray icon, sign out and back in, and make sure your firewall allows "
            "sync.acme.example. Still stuck? Send us the log from Help > Export logs."
        ),
    },
    "links I share expire": {
        "concise": "Yes, shared links expire after 7 days by default.",
        "detailed": (
            "Yes. Shared links expire after 7 days by default. On Business plans the owner can pick any "
            "expiry from 1 to 30 days, or no expiry, in the link settings."
        ),
    },
}


def script_ab_compare(llm: FakeLLM) -> None:
    """Canned answers for examples/ab-compare, different per variant (matched on the system prompt)."""
    for phrase, answers in AB_ANSWERS.items():
        for variant, answer in answers.items():
            llm.add_rule(phrase, answer, system=AB_SYSTEMS[variant])


SUPPORT_APP_ANSWERS = {
    "annual plan three weeks ago": (
        "Yes: annual plans get a full refund within 30 days of purchase, so you qualify. The money goes "
        "back to your original payment method within 5-10 business days."
    ),
    "monthly plan renewed yesterday": (
        "I'm sorry, but monthly plans are not refunded after the billing date, so this month's charge "
        "stays. You can cancel now so that the plan does not renew again."
    ),
    "storage is over quota": (
        "Your files are safe: while an account is over its storage quota, uploads pause but existing files "
        "stay readable. You can delete some files or upgrade your plan, and uploads resume at once."
    ),
    "shared link stay valid": (
        "A shared link stays valid for 30 days by default, and its owner can set another expiry or revoke "
        "it at any time."
    ),
    "laptop for video editing": (
        "I can only help with Acme Cloud itself, so I will pass it to a human colleague who can point you "
        "in the right direction."
    ),
}


def script_support_app(llm: FakeLLM) -> None:
    """Canned model answers for examples/support-app's app (the app itself runs for real)."""
    for phrase, answer in SUPPORT_APP_ANSWERS.items():
        llm.add_rule(phrase, answer)


# examples/judge-calibration: (question phrase, answer, the judge's verdict on it). The judge is
# right about the good answers and lenient about every bad one: its scores rank the answers much as
# the labels do (alpha near 0.6), yet it passes all three answers the labels fail (TNR 0).
CALIBRATION = [
    ("annual plan 20 days ago", "Yes. Annual plans get a full refund within 30 days of purchase, back to your "
     "original payment method within 5-10 business days.", 5, "Correct window and refund path."),
    ("monthly plan renewed", "Monthly plans are not refunded after the billing date, but you can cancel now so "
     "it does not renew again.", 4, "Correct policy and a useful next step."),
    ("reset my password", "Click Forgot password on the sign-in page and open the link we email you.", 4,
     "Correct and short."),
    ("export all my files", "Go to Settings > Data > Export all and we will email you a zip.", 4,
     "Clear steps."),
    ("storage quota", "Files over the quota are deleted after 7 days, so delete some soon.", 3,
     "Clear and actionable."),
    ("two-factor authentication", "Open Settings > Security, turn on two-factor authentication and scan the "
     "QR code with an authenticator app.", 5, "Complete and correct."),
    ("stopped syncing", "Check status.acme.example for current incidents.", 3, "Only one step; no fallback."),
    ("links I share expire", "Shared links never expire.", 4, "Direct answer."),
]  # fmt: skip


def script_judge_calibration(llm: FakeLLM) -> None:
    """Canned answers and judge verdicts for examples/judge-calibration."""
    for _, answer, score, reason in CALIBRATION:
        llm.add_rule(answer[:40], _verdict(score, reason, rubric=True), system="impartial judge")

    def plain(request: RecordedRequest) -> bool:
        return not request.system

    for phrase, answer, _, _ in CALIBRATION:
        llm.add_rule(phrase, answer, predicate=plain)


EXAMPLES = {
    "quickstart": script_quickstart,
    "ab-compare": script_ab_compare,
    "support-app": script_support_app,
    "judge-calibration": script_judge_calibration,
}


def record(example: str, scripter: object) -> int:
    """Run one example against the fake with ``--omk-record-mode=all``; return pytest's exit code."""
    directory = REPO / "examples" / example
    with FakeLLM() as llm:
        scripter(llm)  # type: ignore[operator]
        env = {
            **os.environ,
            "OPENAI_BASE_URL": llm.openai_base_url,
            "OPENAI_API_KEY": "sk-fake-recording-key",
        }
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                str(directory),
                "-q",
                "--omk-record-mode=rewrite",
                "-p",
                "no:cacheprovider",
            ],
            cwd=REPO,
            env=env,
            check=False,
        )
    rekey_to_default_endpoint(directory / "recordings")
    return done.returncode


def rekey_to_default_endpoint(recordings: Path) -> None:
    """Give every ``openai`` recording under ``recordings`` the default endpoint, and the key to match
    (the executor's calls, and an app's own model calls under ``http/`` alike)."""
    default = endpoint_key(chat_completions_url(DEFAULT_BASE_URL))
    tree = RecordingTree(recordings)
    for kind in tree.kinds():
        for path in list(tree.files(kind)):
            document = json.loads(path.read_text(encoding="utf-8"))
            if "endpoint" not in document or document["endpoint"] == default:
                continue
            document["endpoint"] = default
            identity = {k: v for k, v in document.items() if k not in RESERVED_FIELDS}
            document["key"] = recording_key(document["kind"], identity)
            target = shard_dir(recordings, document["kind"], document["key"]) / file_name(
                document["label"], document["key"]
            )
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(render(document))
            path.unlink()
            if not any(path.parent.iterdir()):
                path.parent.rmdir()


def main(argv: list[str] | None = None) -> int:
    """Record the examples named on the command line (all of them by default)."""
    names = (sys.argv[1:] if argv is None else argv) or list(EXAMPLES)
    unknown = [name for name in names if name not in EXAMPLES]
    if unknown:
        print(f"unknown example(s): {', '.join(unknown)}; known: {', '.join(EXAMPLES)}", file=sys.stderr)
        return 2
    return max(record(name, EXAMPLES[name]) for name in names)


if __name__ == "__main__":
    raise SystemExit(main())
