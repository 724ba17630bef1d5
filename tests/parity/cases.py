"""Seeded generator of grading cases for the differential test against the reference.

Each case is one output, its telemetry and tool trace, and a list of assertions drawn over every
deterministic type (with ``not``, weights and nested ``assert-set``). Outputs and values are fuzzed
over ASCII, JavaScript and non-JavaScript whitespace, CJK, emoji, combining marks and letters whose
case rules differ between Python and JavaScript.
"""

from __future__ import annotations

import json
import random
from typing import Any

ASCII = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?-_/\\()[]{}'\"#@")
WORDS = [
    "hello",
    "World",
    "SQL",
    "injection",
    "prepared",
    "statement",
    "Kelvin",
    "straße",
    "GO",
    "NO-GO",
    "ok",
    "json",
]
JS_SPACE = [
    " ",
    "\t",
    "\n",
    "\r",
    "\u00a0",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\u3000",
    "\u2003",
    "\u000b",
    "\u000c",
]
NON_JS_SPACE = ["\u0085", "\u001c", "\u001f", "\u200b", "\u180e"]
CJK = ["中", "文", "测试", "安全", "，", "。", "Ａ", "ｂ"]
EMOJI = ["😀", "👍🏽", "🇩🇪", "👨‍👩‍👧", "𝔘"]
COMBINING = ["e\u0301", "n\u0303", "a\u030a", "\u0301"]
CASE_SPECIAL = [
    "İ",
    "ı",
    "ß",
    "ẞ",
    "ſ",
    "\u212a",
    "\u212b",
    "Σ",
    "ς",
    "σ",
    "\u2126",
    "ǅ",
    "ﬁ",
    "\ua7dc",
    "\u019b",
    "Ω",
    "K",
]
POOLS = [ASCII, WORDS, JS_SPACE, NON_JS_SPACE, CJK, EMOJI, COMBINING, CASE_SPECIAL]

REGEXES = [
    "k",
    "s",
    "i",
    "ß",
    "ω",
    "^.$",
    "^..$",
    "^[\\W]$",
    "^[\\S]+$",
    "^[\\D]$",
    "^\\u{3}$",
    "a{,3}",
    "^(a)?\\1b$",
    "(?<=l+)o",
    "\\p{L}",
    "\\bhello\\b",
    "^\\s+$",
    "\\s",
    "\\d+",
    "[Α-Ω]",
    "é",
    "😀",
    "中",
    "\\w+",
    "^$",
    ".",
    "^.+$",
    "[^a-z]",
    "(?<x>o)\\k<x>",
    "\\u00e9",
    "\\x41",
    "[\\u{1F600}]",
    "\\cJ",
    "a|b",
    "(?:he|wo)l+",
    "^[\\p{Lu}]",
    "\\P{L}",
    "\\1",
    "\\k<x>",
]
FLAGS: list[str | None] = [None, "", "i", "u", "iu", "g", "y", "m", "s", "gi", "su", "imsu", "v", "d"]
SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "required": ["a"]},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
    {"type": "string", "pattern": "^\\d+$"},
    {"type": "string", "maxLength": 2},
    {"type": "array", "items": {"type": "integer"}, "minItems": 1},
    {"type": "array", "items": [{"type": "string"}], "additionalItems": False},
    {"enum": [1, "1", None]},
    {"$ref": "#/definitions/s", "maxLength": 1, "definitions": {"s": {"type": "string"}}},
    {"type": "object", "patternProperties": {"^\\p{Lu}": {"type": "number"}}},
    {"anyOf": [{"type": "number", "multipleOf": 0.1}, {"const": True}]},
    {"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}},
    {"type": "string", "format": "email"},  # a strict Ajv cannot compile it: refused at load here
    {"type": "object", "example": {}},
]
JSON_OUTPUTS = [
    '{"a": 1}',
    '{"a": 1, "b": 2}',
    '"123"',
    '"٣٣"',
    "[1, 2]",
    '["x"]',
    '["x", 1]',
    "1",
    "0.3",
    "true",
    "null",
    '{"Éa": 1}',
    '"é"',
    '"😀"',
    "[]",
    "{}",
    " [1] ",
    "\u00a0[1]",
    '{"a": 1,}',
    "NaN",
    "```json\n{}\n```",
    "[" * 3000 + "]" * 3000,
]
TOOLS = ["Bash", "Read", "Grep", "Edit", "docs.fetch_doc", "WebFetch", "bash"]


class Fuzz:
    """Random text and values from a seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def text(self, size: int | None = None) -> str:
        rng = self.rng
        n = rng.randint(0, 12) if size is None else size
        pools = rng.sample(POOLS, rng.randint(1, 3))
        parts = [rng.choice(rng.choice(pools)) for _ in range(n)]
        return "".join(p + (" " if rng.random() < 0.3 else "") for p in parts)

    def needle(self, output: str) -> str:
        """A value that is sometimes a (case-changed) piece of the output, never blank."""
        rng = self.rng
        if output.strip() and rng.random() < 0.6:
            start = rng.randrange(len(output))
            piece = output[start : start + rng.randint(1, 6)]
            piece = rng.choice([piece, piece.upper(), piece.lower(), piece.swapcase()])
            if piece.strip():
                return piece
        value = self.text(rng.randint(1, 3))
        return value if value.strip() else "x"

    def number(self, low: float, high: float) -> float:
        value = self.rng.uniform(low, high)
        return self.rng.choice([round(value), round(value, 2), value])


def _leaf(f: Fuzz, output: str, trace: list[dict[str, Any]]) -> dict[str, Any]:
    rng = f.rng
    kind = rng.choice(
        [
            "contains",
            "not_contains",
            "starts_with",
            "ends_with",
            "equals",
            "not_equals",
            "regex",
            "regex",
            "min_length",
            "max_length",
            "word_count_min",
            "word_count_max",
            "contains_all",
            "contains_any",
            "json_valid",
            "json_schema",
            "cost_max",
            "latency_max",
            "turns_min",
            "turns_max",
            "tools_called",
            "tools_not_called",
            "tools_count_min",
            "tools_count_max",
            "tool_output_contains",
            "tool_input_contains",
            "tool_input_not_contains",
            "mock_hit",
            "rouge_n_min",
            "bleu_min",
            "levenshtein_max",
        ]
    )
    a: dict[str, Any] = {"type": kind}
    if kind in ("contains", "not_contains", "equals", "not_equals"):
        a["value"] = (
            output if kind.endswith("equals") and rng.random() < 0.4 and output.strip() else f.needle(output)
        )
    elif kind in ("starts_with", "ends_with"):
        cut = rng.randint(1, 5)
        piece = output[:cut] if kind == "starts_with" else output[-cut:]
        a["value"] = (
            rng.choice([piece, piece.upper()]) if piece.strip() and rng.random() < 0.6 else f.needle(output)
        )
    elif kind == "regex":
        a["pattern"] = rng.choice(REGEXES)
        flags = rng.choice(FLAGS)
        if flags is not None:
            a["flags"] = flags
    elif kind in ("min_length", "max_length", "word_count_min", "word_count_max"):
        a["value"] = f.number(0, 30)
    elif kind in ("contains_all", "contains_any"):
        a["values"] = [f.needle(output) for _ in range(rng.randint(1, 3))]
    elif kind == "json_valid":
        pass
    elif kind == "json_schema":
        a["schema"] = rng.choice(SCHEMAS)
    elif kind == "cost_max":
        a["value"] = f.number(0, 0.1)
    elif kind == "latency_max":
        a["value"] = f.number(0, 3000)
    elif kind in ("turns_min", "turns_max", "tools_count_min", "tools_count_max"):
        a["value"] = f.number(0, 5)
    elif kind in ("tools_called", "tools_not_called"):
        a["values"] = rng.sample(TOOLS[:-1], rng.randint(1, 2))
    elif kind.startswith("tool_"):
        call = (
            rng.choice(trace)
            if trace and rng.random() < 0.7
            else {"tool": rng.choice(TOOLS[:-1]), "input": "x"}
        )
        haystack = json.dumps(call.get("input" if "input" in kind else "output"), ensure_ascii=False)
        a["value"] = f"{call['tool']}:{f.needle(haystack.strip(chr(34)) or 'x')}"
    elif kind == "mock_hit":
        a["value"] = rng.choice(["Read:1", "Bash:1", "Bash:2"])
        if rng.random() < 0.5:
            a["threshold"] = rng.randint(0, 3)
    else:
        a["reference"] = f.needle(output) + " " + f.text(3)
        if kind == "levenshtein_max":
            a["value"] = f.number(0, 20)
        else:
            a["threshold"] = round(rng.random(), 2)
            if kind == "rouge_n_min" and rng.random() < 0.5:
                a["n"] = rng.randint(1, 3)
    return a


def _assertion(f: Fuzz, output: str, trace: list[dict[str, Any]], depth: int = 0) -> dict[str, Any]:
    rng = f.rng
    if depth < 2 and rng.random() < 0.12:
        a: dict[str, Any] = {
            "type": "assert-set",
            "mode": rng.choice(["any", "all"]),
            "children": [_assertion(f, output, trace, depth + 1) for _ in range(rng.randint(1, 3))],
        }
    else:
        a = _leaf(f, output, trace)
    if rng.random() < 0.25:
        a["not"] = True
    if rng.random() < 0.35:
        a["weight"] = rng.choice([0.5, 2, 3, 0.1, 0.125, 7, 1.5, 0.3])
    return a


def _trace(f: Fuzz) -> list[dict[str, Any]]:
    rng = f.rng
    calls = []
    for _ in range(rng.randint(0, 4)):
        calls.append(
            {
                "tool": rng.choice(TOOLS[:-1]),
                "input": rng.choice(
                    [{"command": f.text(3)}, {"file_path": "/src/" + f.text(2)}, f.text(2), None, {"n": 3}]
                ),
                "output": rng.choice([f.text(4), {"ok": True}, None, "", 42]),
                "success": rng.random() < 0.8,
            }
        )
    return calls


def generate(count: int, seed: int = 16) -> list[dict[str, Any]]:
    """``count`` cases, the same ones for the same seed."""
    f = Fuzz(seed)
    cases = []
    for index in range(count):
        rng = f.rng
        output = rng.choice(JSON_OUTPUTS) if rng.random() < 0.15 else f.text()
        trace = _trace(f)
        context = {
            "toolCalls": trace,
            "costUSD": round(rng.uniform(0, 0.1), 4),
            "durationMs": rng.randint(0, 3000),
            "numTurns": rng.randint(0, 5),
            "mockStats": {
                "hits": 0,
                "misses": 0,
                "perMock": {k: rng.randint(0, 2) for k in ("Read:1", "Bash:1", "Bash:2")},
            },
        }
        assertions = [_assertion(f, output, trace) for _ in range(rng.randint(1, 5))]
        cases.append({"id": index, "output": output, "assertions": assertions, "context": context})
    return cases
