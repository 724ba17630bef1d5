"""Generated, realistic eval-sample sets: deterministic for a given size and seed.

A sample looks like one a team would write by hand: a review or support prompt of a sentence or
two, a code or policy context of a few lines, 3-5 assertions of mixed types, two or three rubric
dimensions whose weights sum to 1, and metadata (capability, difficulty, construct, provenance).
No URLs (they would be fetched) and no mocks (they need an intercepting executor).

:data:`CANNED_OUTPUT` is an answer that satisfies every assertion generated here, so runs measure
the passing path that dominates real suites.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import yaml

SCHEMA = "omk.eval-sample-set/v2"

CANNED_OUTPUT = (
    "Verdict: the query concatenates user input, so it is open to SQL injection. An attacker can "
    "read or delete any row. Fix: use a parameterized query (a prepared statement), validate the "
    "input, and add a regression test. Risk: high. Owner: the payments team; rollback is a config "
    "flag. Done."
)
"""Satisfies every assertion :func:`make_sample` writes."""

_TOPICS = [
    (
        "SQL injection in the login handler",
        "security",
        'def login(u, p):\n    return db.query("SELECT * FROM users WHERE name=\'" + u + "\'")',
    ),
    (
        "an unbounded retry loop in the payment client",
        "reliability",
        "while True:\n    try:\n        return client.charge(order)\n    except Timeout:\n        continue",
    ),
    (
        "a missing rollback plan in the release notes",
        "release",
        "Release 4.2: migrate orders table, drop legacy column, enable new pricing.",
    ),
    (
        "a refund request outside the 30-day window",
        "support",
        "Policy: refunds within 30 days of delivery; exceptions need a team lead.",
    ),
    (
        "N+1 queries in the order list endpoint",
        "performance",
        "for order in Order.objects.all():\n    print(order.customer.name)",
    ),
    ("secrets committed to the repository", "security", "AWS_SECRET_ACCESS_KEY = 'AKIA...'\nDEBUG = True"),
]
_ASKS = [
    "Review this code and explain the main risk.",
    "Summarize the problem for the on-call engineer and propose a fix.",
    "Write a short verdict for the change request, with the risk level and the owner.",
    "Explain what could go wrong and how to roll it back.",
]
_DIMENSIONS = [
    ("accuracy", "Identifies the actual problem and explains its impact correctly"),
    ("actionability", "Gives a fix the team can apply directly"),
    ("clarity", "Is concise and readable by an on-call engineer"),
    ("safety", "Does not recommend anything that makes the situation worse"),
]
_WEIGHTS = {2: (0.6, 0.4), 3: (0.5, 0.3, 0.2)}


def _assertion_pool(rng: random.Random) -> list[dict[str, Any]]:
    return [
        {"type": "contains", "value": rng.choice(["injection", "parameterized", "rollback", "Risk"])},
        {
            "type": "not_contains",
            "value": rng.choice(["lorem ipsum", "as an AI", "I cannot help"]),
            "weight": 0.5,
        },
        {
            "type": "regex",
            "pattern": rng.choice([r"risk:\s*(low|medium|high)", r"verdict:", r"prepared\s+statement"]),
        },
        {"type": "max_length", "value": rng.choice([1200, 2000, 4000])},
        {"type": "min_length", "value": rng.choice([40, 80, 120])},
        {"type": "contains_any", "values": ["owner", "team lead", "on-call"]},
        {"type": "contains_all", "values": ["fix", "test"]},
        {"type": "word_count_min", "value": rng.choice([10, 20, 30])},
        {"type": "starts_with", "value": "Verdict"},
        {"type": "ends_with", "value": "Done."},
    ]


def make_sample(
    index: int, rng: random.Random, *, rubric: int | None = None, assertions: int | None = None
) -> dict[str, Any]:
    """One sample; ``rubric`` / ``assertions`` fix the number of dimensions / assertions."""
    topic, capability, context = _TOPICS[index % len(_TOPICS)]
    ask = rng.choice(_ASKS)
    count = assertions if assertions is not None else rng.randint(3, 5)
    chosen = rng.sample(_assertion_pool(rng), count)
    dims = rubric if rubric is not None else rng.choice([2, 3])
    sample: dict[str, Any] = {
        "sample_id": f"case-{index:05d}",
        "prompt": f"{ask} The report concerns {topic} (ticket #{1000 + index}).",
        "context": context,
        "assertions": chosen,
        "capability": [capability, rng.choice(["code-review", "triage", "communication"])],
        "difficulty": rng.choice(["easy", "medium", "hard"]),
        "construct": rng.choice(["quality", "capability", "necessity"]),
        "provenance": rng.choice(["human", "llm-generated", "production-trace"]),
    }
    if dims:
        names = rng.sample(_DIMENSIONS, dims)
        sample["rubric"] = {
            name: {"criterion": criterion, "weight": weight}
            for (name, criterion), weight in zip(names, _WEIGHTS[dims], strict=True)
        }
    return sample


def make_samples(
    count: int, *, seed: int = 8, rubric: int | None = None, assertions: int | None = None
) -> list[dict[str, Any]]:
    """``count`` samples (see :func:`make_sample`)."""
    rng = random.Random(seed)
    return [make_sample(i, rng, rubric=rubric, assertions=assertions) for i in range(count)]


class _NoAliasDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Never write anchors/aliases: hand-written files do not have them."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def write_samples(directory: Path, samples: list[dict[str, Any]], *, fmt: str = "json") -> Path:
    """Write ``eval-samples.json`` (or ``.yaml``) into ``directory``; returns its path."""
    document = {"schemaVersion": SCHEMA, "samples": samples}
    if fmt == "json":
        path = directory / "eval-samples.json"
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")
    else:
        path = directory / "eval-samples.yaml"
        text = yaml.dump(document, Dumper=_NoAliasDumper, sort_keys=False, allow_unicode=True, width=100)
        path.write_text(text, encoding="utf-8")
    return path


def write_canned_executor(directory: Path, module: str = "bench_canned") -> str:
    """A Python-callable executor module answering every sample with :data:`CANNED_OUTPUT`.

    Returns the ``--omk-executor`` spec.
    """
    (directory / f"{module}.py").write_text(
        "from __future__ import annotations\n\n"
        f"OUTPUT = {CANNED_OUTPUT!r}\n\n\n"
        "def answer(request):\n"
        '    """Canned answer: a dict in the command-output shape, as a wrapped model would return."""\n'
        '    return {"output": OUTPUT, "costUSD": 0.0, "numTurns": 1}\n',
        encoding="utf-8",
    )
    return f"python:{module}:answer"
