"""Wrong answers made from a right one, for ``--omk-mutate``: would the checks notice them.

Each operator turns an output into a plausible bad answer (a sentence dropped, numbers or named
entities swapped, a negation flipped, the text cut, emptied, its JSON broken). Every choice comes
from a random generator seeded with the run's seed, the sample id and the operator's name, so the
same output always gives the same mutants. An operator that does not apply (no number to swap, no
JSON to break) says so instead of returning the output unchanged: such a mutant is not counted.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)\s*")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
# A capitalised word that does not start a sentence: a name, a place, a product.
_ENTITY = re.compile(r"(?<=[a-z,;:]\s)[A-Z][a-zA-Z]+(?:\s[A-Z][a-zA-Z]+)*")
_NEGATIONS: tuple[tuple[str, str], ...] = (
    (r"\bis not\b", "is"),
    (r"\bare not\b", "are"),
    (r"\bcannot\b", "can"),
    (r"\bcan't\b", "can"),
    (r"\bdoes not\b", "does"),
    (r"\bdo not\b", "do"),
    (r"\bdon't\b", "do"),
    (r"\bnever\b", "always"),
    (r"\balways\b", "never"),
    (r"\bnot\b", ""),
    (r"\bno\b", "a"),
    (r"\bis\b", "is not"),
    (r"\bare\b", "are not"),
    (r"\bcan\b", "cannot"),
    (r"\bwill\b", "will not"),
    (r"\btrue\b", "false"),
    (r"\bfalse\b", "true"),
    (r"\byes\b", "no"),
)
STAND_INS = ("Berlin", "Tokyo", "Acme", "Alice Martin", "Lisbon", "Globex", "Oslo", "Bob Chen")
"""Names put in place of a named entity when the output has only one."""


@dataclass(frozen=True)
class Mutant:
    """One mutated output: which operator made it, and the text (``None``: did not apply)."""

    operator: str
    text: str | None

    @property
    def applied(self) -> bool:
        """Whether the operator changed anything (an unapplied mutant is not counted)."""
        return self.text is not None


Operator = Callable[[str, random.Random], str | None]


def drop_sentence(text: str, rng: random.Random) -> str | None:
    """Remove one sentence (needs at least two)."""
    sentences = [m.group(0) for m in _SENTENCE.finditer(text) if m.group(0).strip()]
    if len(sentences) < 2:
        return None
    index = rng.randrange(len(sentences))
    return "".join(s for i, s in enumerate(sentences) if i != index).strip()


def swap_numbers(text: str, rng: random.Random) -> str | None:
    """Change every number to another one of the same form."""
    if not _NUMBER.search(text):
        return None

    def other(match: re.Match[str]) -> str:
        digits = list(match.group(0))
        places = [i for i, ch in enumerate(digits) if ch.isdigit()]
        place = rng.choice(places)
        digits[place] = str((int(digits[place]) + rng.randint(1, 8)) % 10)
        changed = "".join(digits)
        # A leading zero would read as another number form; keep the same count of digits.
        return changed if not (changed[0] == "0" and len(places) > 1) else "9" + changed[1:]

    return _NUMBER.sub(other, text)


def swap_entities(text: str, rng: random.Random) -> str | None:
    """Exchange named entities with each other, or replace the only one with a stand-in."""
    found = list(dict.fromkeys(m.group(0) for m in _ENTITY.finditer(text)))
    if not found:
        return None
    if len(found) == 1:
        replacement = {found[0]: rng.choice([name for name in STAND_INS if name != found[0]])}
    else:
        shuffled = found[1:] + found[:1]  # a rotation: every entity changes
        replacement = dict(zip(found, shuffled, strict=True))
    pattern = re.compile("|".join(re.escape(name) for name in sorted(found, key=len, reverse=True)))
    return pattern.sub(lambda m: replacement[m.group(0)], text)


def flip_negation(text: str, rng: random.Random) -> str | None:
    """Flip the first negation (or affirmation) the text has: ``is not`` -> ``is``, ``is`` -> ``is not``."""
    del rng  # deterministic by construction: the first flippable word, in the table's order
    for pattern, replacement in _NEGATIONS:
        flipped, count = re.subn(pattern, replacement, text, count=1, flags=re.IGNORECASE)
        if count:
            return re.sub(r"[ \t]{2,}", " ", flipped)
    return None


def truncate(text: str, rng: random.Random) -> str | None:
    """Cut the text at a seeded point in its first half (something is left: ``empty`` is apart)."""
    if len(text) < 2:
        return None
    return text[: rng.randint(1, max(1, len(text) // 2))]


def empty(text: str, rng: random.Random) -> str | None:
    """Nothing at all."""
    del rng
    return "" if text else None


def break_json(text: str, rng: random.Random) -> str | None:
    """Make JSON in the output invalid: drop its last closing bracket, or a seeded quote."""
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    try:
        json.loads(text[start:])
    except ValueError:
        return None  # no JSON document here to break (or it is broken already)
    closing = max(text.rfind("}"), text.rfind("]"))
    quotes = [i for i, ch in enumerate(text) if ch == '"']
    if quotes and rng.random() < 0.5:
        cut = rng.choice(quotes)
        return text[:cut] + text[cut + 1 :]
    return text[:closing] + text[closing + 1 :]


OPERATORS: dict[str, Operator] = {
    "drop_sentence": drop_sentence,
    "swap_numbers": swap_numbers,
    "swap_entities": swap_entities,
    "flip_negation": flip_negation,
    "truncate": truncate,
    "empty": empty,
    "break_json": break_json,
}
"""Every operator, in the order mutants are made and reported."""


def mutants(output: str, *, sample_id: str, seed: int = 0) -> list[Mutant]:
    """One mutant per operator; the same inputs always give the same mutants."""
    made: list[Mutant] = []
    for name, operator in OPERATORS.items():
        # A string seed is hashed with SHA-512 by ``random``: stable across processes and runs.
        rng = random.Random(f"{seed}:{sample_id}:{name}")
        text = operator(output, rng)
        made.append(Mutant(name, None if text == output else text))
    return made
