"""Sample documents for end-to-end runs: built with little noise, written into a pytester dir.

- :func:`sample_set` / :func:`sample` build documents; :func:`write_samples` writes one (dict →
  JSON or YAML by extension, str verbatim); :func:`write_sample_set` both at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

SCHEMA_VERSION = "omk.eval-sample-set/v2"
NO_EXECUTOR = "no executor configured (set --omk-executor or omk_executor)"


def sample(sample_id: str, prompt: str = "say hello", **fields: Any) -> dict[str, Any]:
    """One sample dict."""
    return {"sample_id": sample_id, "prompt": prompt, **fields}


def sample_set(*samples: dict[str, Any], **root: Any) -> dict[str, Any]:
    """A v2 document holding ``samples`` (extra root keys such as ``requires`` as keywords)."""
    return {"schemaVersion": SCHEMA_VERSION, **root, "samples": list(samples)}


def write_samples(pytester: pytest.Pytester, name: str, doc: Mapping[str, Any] | str) -> Path:
    """Write ``doc`` to ``name`` (relative to the pytester dir, parents created) and return the path."""
    path = pytester.path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(doc, str):
        text = doc
    elif path.suffix in (".yaml", ".yml"):
        text = yaml.safe_dump(dict(doc), sort_keys=False, allow_unicode=True)
    else:
        text = json.dumps(doc, indent=2, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    return path


def write_sample_set(
    pytester: pytest.Pytester, *samples: dict[str, Any], name: str = "eval-samples.json", **root: Any
) -> Path:
    """Write a v2 document of ``samples`` (extra root keys as keywords) to ``name``; return the path."""
    return write_samples(pytester, name, sample_set(*samples, **root))


def executor_arg(spec: str) -> str:
    """``--omk-executor=<spec>`` as one argv element."""
    return f"--omk-executor={spec}"


def judged_sample() -> dict[str, Any]:
    """Sample ``graded``: "Say hi", a ``contains "hi"`` check and one rubric dimension (tone)."""
    return sample(
        "graded", "Say hi", assertions=[{"type": "contains", "value": "hi"}],
        rubric={"tone": {"criterion": "Is warm and friendly", "weight": 1}},
    )  # fmt: skip
