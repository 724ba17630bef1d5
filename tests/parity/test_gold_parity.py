"""Differential test: gold datasets and agreement figures against oh-my-knowledge 0.54.0.

The reference's own ``validateGoldDataset`` and ``computeKrippendorffAlpha`` / ``computeWeightedKappa``
/ ``computePearson`` run in one Node process (``gold_reference.mjs``) on the same inputs as ours:

- every dataset below is accepted by both or refused by both, with the reference's message among
  ours, except the cases in :data:`STRICTER` (refused here on purpose, accepted there: docs/judge.md);
- α, κ and Pearson agree to four decimals on 200 generated sets of pairs of varied size and scale.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.compare.agreement import Pair, interval_alpha, pearson, weighted_kappa
from pytest_omk.loading.gold import GoldIssue, load_gold

SCRIPT = Path(__file__).with_name("gold_reference.mjs")
META = 'metadata:\n  annotator: alice\n  annotatedAt: "2026-12-01"\n  version: "1"\n'
LABELS = "annotations:\n  - {sample_id: a, score: 4, reason: fine}\n  - {sample_id: b, score: 2}\n"

DATASETS: dict[str, dict[str, str]] = {
    "valid": {"metadata.yaml": META, "labels.yaml": LABELS},
    "valid in one file": {"gold.yaml": META + LABELS},
    "valid .yml and a scale": {
        "metadata.yml": META + "  scale: {min: 0, max: 10}\n  notes: two raters\n",
        "a.yml": "annotations:\n  - {sample_id: x, score: 7.5}\n",
    },
    "valid split over files": {
        "metadata.yaml": META,
        "a.yaml": LABELS,
        "b.yaml": "annotations: [{sample_id: c, score: 1}]\n",
    },
    "a yes sample id is a string": {
        "m.yaml": META,
        "l.yaml": "annotations:\n  - {sample_id: yes, score: 3}\n",
    },
    "other files ignored": {"m.yaml": META, "l.yaml": LABELS, "README.md": "# not yaml"},
    "empty directory": {},
    "no yaml": {"notes.txt": "x"},
    "no metadata": {"l.yaml": LABELS},
    "no annotations": {"m.yaml": META},
    "empty annotations": {"m.yaml": META, "l.yaml": "annotations: []\n"},
    "annotator missing": {"m.yaml": 'metadata:\n  annotatedAt: "2026"\n  version: "1"\n', "l.yaml": LABELS},
    "annotator empty": {"m.yaml": META.replace("alice", '""'), "l.yaml": LABELS},
    "annotator a number": {"m.yaml": META.replace("alice", "42"), "l.yaml": LABELS},
    "annotatedAt an unquoted date": {"m.yaml": META.replace('"2026-12-01"', "2026-12-01"), "l.yaml": LABELS},
    "version a number": {"m.yaml": META.replace('"1"', "1"), "l.yaml": LABELS},
    "metadata not an object": {"m.yaml": "metadata: just text\n", "l.yaml": LABELS},
    "metadata twice": {"m.yaml": META, "n.yaml": META, "l.yaml": LABELS},
    "scale reversed": {"m.yaml": META + "  scale: {min: 5, max: 1}\n", "l.yaml": LABELS},
    "scale equal": {"m.yaml": META + "  scale: {min: 3, max: 3}\n", "l.yaml": LABELS},
    "scale text": {"m.yaml": META + '  scale: {min: "1", max: 5}\n', "l.yaml": LABELS},
    "scale not an object": {"m.yaml": META + "  scale: 5\n", "l.yaml": LABELS},
    "annotation not an object": {"m.yaml": META, "l.yaml": "annotations:\n  - just text\n"},
    "sample id missing": {"m.yaml": META, "l.yaml": "annotations:\n  - {score: 3}\n"},
    "sample id empty": {"m.yaml": META, "l.yaml": 'annotations:\n  - {sample_id: "", score: 3}\n'},
    "sample id a number": {"m.yaml": META, "l.yaml": "annotations:\n  - {sample_id: 7, score: 3}\n"},
    "sample id a date": {"m.yaml": META, "l.yaml": "annotations:\n  - {sample_id: 2026-01-01, score: 3}\n"},
    "score missing": {"m.yaml": META, "l.yaml": "annotations:\n  - {sample_id: a}\n"},
    "score text": {"m.yaml": META, "l.yaml": 'annotations:\n  - {sample_id: a, score: "4"}\n'},
    "score boolean": {"m.yaml": META, "l.yaml": "annotations:\n  - {sample_id: a, score: true}\n"},
    "score NaN": {"m.yaml": META, "l.yaml": "annotations:\n  - {sample_id: a, score: .nan}\n"},
    "score infinite": {"m.yaml": META, "l.yaml": "annotations:\n  - {sample_id: a, score: .inf}\n"},
    "score overflowing": {"m.yaml": META, "l.yaml": "annotations:\n  - {sample_id: a, score: 1e400}\n"},
    "score of 5000 digits": {
        "m.yaml": META,
        "l.yaml": f"annotations:\n  - {{sample_id: a, score: {'9' * 5000}}}\n",
    },
    "duplicate id": {"m.yaml": META, "l.yaml": LABELS + "  - {sample_id: a, score: 5}\n"},
    "duplicate id across files": {"m.yaml": META, "a.yaml": LABELS, "b.yaml": LABELS},
    "empty file": {"m.yaml": META, "l.yaml": LABELS, "z.yaml": ""},
    "yaml syntax error": {"m.yaml": META, "l.yaml": "annotations: [\n"},
    "several problems": {
        "m.yaml": META.replace("alice", '""'),
        "l.yaml": "annotations:\n  - 3\n  - {sample_id: a}\n",
    },
}
STRICTER = {
    "unknown annotation key": {
        "m.yaml": META,
        "l.yaml": "annotations:\n  - {sample_id: a, score: 3, reasons: x}\n",
    },
    "unknown metadata key": {"m.yaml": META + "  judge: gpt\n", "l.yaml": LABELS},
    "unknown top-level key": {"m.yaml": META, "l.yaml": LABELS + "extra: 1\n"},
    "score outside the scale": {"m.yaml": META, "l.yaml": "annotations:\n  - {sample_id: a, score: 1e300}\n"},
    "annotations not a list": {"m.yaml": META, "l.yaml": LABELS, "z.yaml": "annotations: {a: 1}\n"},
    "a top-level list": {"m.yaml": META, "l.yaml": LABELS, "z.yaml": "- 1\n"},
    "reason a number": {"m.yaml": META, "l.yaml": "annotations:\n  - {sample_id: a, score: 3, reason: 5}\n"},
}
"""Refused here, accepted by the reference (each on purpose: a typo'd key would be silently ignored,
a score off the scale breaks κ's weights, a non-list of annotations loses labels without a word)."""


def _write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _reference(node: str, package: Path, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    lines = "".join(json.dumps(c) + "\n" for c in cases)
    done = subprocess.run([node, str(SCRIPT), str(package)], input=lines, capture_output=True, text=True,
                          timeout=600, check=True)  # fmt: skip
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == len(cases), done.stderr[-2000:]
    return results


def _ours(directory: Path) -> list[str] | None:
    """``None`` when our loader accepts the dataset, else its issues."""
    try:
        load_gold(directory)
    except GoldIssue as exc:
        return exc.issues
    return None


def _as_ours(reference_issue: str) -> str:
    """The reference's ``message (path:index)`` written as ours: ``path: annotations[index]: message``."""
    found = re.fullmatch(r"(.*) \(([^()]*?)(?::(\d+))?\)", reference_issue)
    assert found, reference_issue
    message, path, index = found.groups()
    return f"{path}: annotations[{index}]: {message}" if index is not None else f"{path}: {message}"


def test_the_same_gold_datasets_are_accepted_and_refused(
    node: str, reference_package: Path, tmp_path: Path
) -> None:
    cases = {name: _write(tmp_path / f"d{i}", files) for i, (name, files) in enumerate(DATASETS.items())}
    answers = _reference(node, reference_package, [{"dir": str(d)} for d in cases.values()])
    for (name, directory), theirs in zip(cases.items(), answers, strict=True):
        ours = _ours(directory)
        assert (ours is None) == theirs["ok"], (name, ours, theirs)
        if ours is None or name == "yaml syntax error":  # the parsers word syntax errors their own way
            continue
        assert ours == [_as_ours(issue) for issue in theirs["issues"]], name


def test_the_stricter_cases_are_refused_here_and_accepted_there(
    node: str, reference_package: Path, tmp_path: Path
) -> None:
    cases = {name: _write(tmp_path / f"s{i}", files) for i, (name, files) in enumerate(STRICTER.items())}
    answers = _reference(node, reference_package, [{"dir": str(d)} for d in cases.values()])
    for (name, directory), theirs in zip(cases.items(), answers, strict=True):
        assert theirs["ok"], (name, theirs)
        assert _ours(directory) is not None, name


def _generated(rng: random.Random) -> tuple[list[tuple[Any, Any]], dict[str, float]]:
    """One set of pairs: 2 to 80 of them on one of four scales, the judge's often a mean of readings."""
    kind = rng.choice(("likert", "ten", "means", "unit"))
    n = rng.randint(2, 80)
    if kind == "likert":
        return [(rng.randint(1, 5), rng.randint(1, 5)) for _ in range(n)], {"min": 1, "max": 5}
    if kind == "ten":
        pairs = []
        for _ in range(n):
            gold = rng.randint(0, 10)
            pairs.append((gold, min(10, max(0, gold + rng.randint(-3, 3)))))
        return pairs, {"min": 0, "max": 10}
    if kind == "means":
        return [(rng.randint(1, 5), rng.choice((1, 1.5, 2.25, 3, 3.5, 4, 4.75, 5))) for _ in range(n)], {
            "min": 1,
            "max": 5,
        }
    return [(round(rng.random(), 3), round(rng.random(), 3)) for _ in range(n)], {"min": 0, "max": 1}


def test_alpha_kappa_and_pearson_equal_the_reference_on_200_generated_sets(
    node: str, reference_package: Path
) -> None:
    rng = random.Random(53)
    sets = [_generated(rng) for _ in range(197)]
    # And the undefined cases: one value throughout, one rater constant.
    sets += [
        ([(3, 3)] * 6, {"min": 1, "max": 5}),
        ([(2, 4)] * 5, {"min": 1, "max": 5}),
        ([(1, 3), (5, 3)], {"min": 1, "max": 5}),
    ]
    answers = _reference(node, reference_package, [{"pairs": p, "scale": s} for p, s in sets])
    for (raw, scale), theirs in zip(sets, answers, strict=True):
        pairs = [Pair(float(a), float(b)) for a, b in raw]
        ours = {
            "alpha": interval_alpha(pairs),
            "kappa": weighted_kappa(pairs, scale["min"], scale["max"]),
            "pearson": pearson(pairs),
        }
        for name, value in ours.items():
            expected = theirs[name]
            if expected is None:
                assert value is None, (name, raw, value)
            else:
                assert value is not None and round(value, 4) == round(expected, 4), (
                    name,
                    raw,
                    value,
                    expected,
                )
    assert sum(answer["alpha"] is not None for answer in answers) >= 190  # most sets are defined ones


@pytest.mark.parametrize("name", ["valid", "valid .yml and a scale"])
def test_an_accepted_dataset_reads_as_the_reference_reads_it(name: str, tmp_path: Path) -> None:
    dataset = load_gold(_write(tmp_path / "d", DATASETS[name]))
    assert dataset.metadata.annotator == "alice"
    assert all(a.sample_id for a in dataset.annotations)
