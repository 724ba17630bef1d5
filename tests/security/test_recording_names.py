"""No secret, nor a spelling of one, reaches a recording's file name or path (issue #15).

A recording is named ``<slug of the sample id>-<16 hex of the key>.json`` under ``<kind>/<2 hex>/``.
The sample id is scrubbed before it is slugged, but slugging folds case, drops what is not ASCII
(NFKD) and folds separators, so an id the scrubber does not match can still spell a secret once
slugged (a zero-width space inside the key, the key in capitals or in full-width letters). The
directory parts come from the key's hash only. The sentinel values are configured secrets (an API
key, a base-URL password); a name must not hold even their random tail.
"""

from __future__ import annotations

import base64
import secrets

import pytest

from pytest_omk.recordings.files import file_name
from tests.fakes.fake_llm import FakeLLM
from tests.reliability.helpers import audit_recordings
from tests.support import load_report, report_samples, run_pytest, write_samples

probe = pytest.mark.probe


def _full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@pytest.mark.multiprocess
@probe("secrets")
def test_no_spelling_of_a_secret_reaches_a_recording_path(
    pytester: pytest.Pytester, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    key, password = f"sk-openai-{secrets.token_hex(8)}", f"pw-{secrets.token_hex(8)}"
    monkeypatch.setenv(
        "OPENAI_BASE_URL", fake_llm.openai_base_url.replace("http://", f"http://omkuser:{password}@")
    )
    monkeypatch.setenv("OPENAI_API_KEY", key)
    fake_llm.script(default="An answer.")
    spellings = {
        "verbatim": f"id-{key}",
        "zero-width space": f"id-{key[:6]}\u200b{key[6:]}",
        "capitals": f"id-{key.upper()}",
        "full width": f"id-{_full_width(key)}",
        "password": f"id-{password}",
        "password in capitals": f"id-{password.upper()}",
        "basic auth": f"id-{base64.b64encode(f'omkuser:{password}'.encode()).decode()}",
    }
    write_samples(
        pytester,
        "eval-samples.json",
        {
            "schemaVersion": "omk.eval-sample-set/v2",
            "samples": [
                {"sample_id": sample_id, "prompt": f"Question {name} with {key} inside."}
                for name, sample_id in spellings.items()
            ],
        },
    )
    result = run_pytest(
        pytester,
        "--omk-executor=openai",
        "--omk-model=gpt-4o-mini",
        "--omk-judge=none",
        "--omk-record-mode=new_episodes",
        "--omk-recordings=recs",
        "--omk-report=r.json",
        subprocess=True,
    )
    samples = report_samples(load_report(pytester.path / "r.json"))
    assert {v["outcome"] for v in samples.values()} == {"passed"}, result.stdout.str()
    audit = audit_recordings(pytester.path / "recs")
    assert not audit.problems and len(audit.documents) == len(spellings)
    # The random tails: what a name must not hold, in any case.
    tails = {"API key": key[-16:], "base-URL password": password[-16:]}
    paths = [p.relative_to(pytester.path).as_posix().lower() for p in (pytester.path / "recs").rglob("*")]
    leaks = [f"{name} in {path}" for path in paths for name, tail in tails.items() if tail in path]
    assert not leaks, leaks


@probe("secrets")
@pytest.mark.parametrize(
    "spelled", ["ID-SK-ABCDEF0123456789", "id-s\u200bk-abcdef0123456789", "id-ｓｋ-ａｂｃｄｅｆ0123456789"]
)
def test_a_slug_never_spells_a_secret(spelled: str) -> None:
    name = file_name(spelled, "ab" * 32, ["sk-abcdef0123456789"])
    assert name == f"id-redacted-{'ab' * 8}.json"
