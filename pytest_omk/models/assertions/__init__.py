"""One strict model per assertion type, joined in a discriminated union on ``type``.

Each class declares exactly the keys its type uses (``extra="forbid"`` rejects the rest), its
scoring layer (``fact`` / ``behavior``; an ``assert-set`` derives its layer from its leaves) and
whether it needs an asynchronous evaluator (the judge or a custom module), which may not be nested
inside an ``assert-set``.

The models live in one module per family (``text``, ``bounds``, ``agent``, ``similarity``,
``judged``), with ``assert-set`` and the union of them all in ``composite``; every public name is
re-exported here.
"""

from pytest_omk.models.assertions._base import (
    MAX_ASSERTION_DEPTH,
    AssertionBase,
    Layer,
)
from pytest_omk.models.assertions.agent import (
    MockHit,
    ToolInputContains,
    ToolInputNotContains,
    ToolOutputContains,
    ToolsCalled,
    ToolsNotCalled,
)
from pytest_omk.models.assertions.bounds import (
    CostMax,
    LatencyMax,
    MaxLength,
    MinLength,
    ToolsCountMax,
    ToolsCountMin,
    TurnsMax,
    TurnsMin,
    WordCountMax,
    WordCountMin,
)
from pytest_omk.models.assertions.composite import (
    ASSERTION_CLASSES,
    Assertion,
    AssertSet,
    assertion_layer,
)
from pytest_omk.models.assertions.judged import (
    AnswerRelevancy,
    ContextRecall,
    Custom,
    Faithfulness,
    JudgeThreshold,
    SemanticSimilarity,
)
from pytest_omk.models.assertions.similarity import (
    BleuMin,
    LevenshteinMax,
    RougeNMin,
)
from pytest_omk.models.assertions.text import (
    Contains,
    ContainsAll,
    ContainsAny,
    EndsWith,
    Equals,
    JsonSchema,
    JsonValid,
    NotContains,
    NotEquals,
    Regex,
    StartsWith,
)

__all__ = [
    "ASSERTION_CLASSES",
    "MAX_ASSERTION_DEPTH",
    "AnswerRelevancy",
    "AssertSet",
    "Assertion",
    "AssertionBase",
    "BleuMin",
    "Contains",
    "ContainsAll",
    "ContainsAny",
    "ContextRecall",
    "CostMax",
    "Custom",
    "EndsWith",
    "Equals",
    "Faithfulness",
    "JsonSchema",
    "JsonValid",
    "JudgeThreshold",
    "LatencyMax",
    "Layer",
    "LevenshteinMax",
    "MaxLength",
    "MinLength",
    "MockHit",
    "NotContains",
    "NotEquals",
    "Regex",
    "RougeNMin",
    "SemanticSimilarity",
    "StartsWith",
    "ToolInputContains",
    "ToolInputNotContains",
    "ToolOutputContains",
    "ToolsCalled",
    "ToolsCountMax",
    "ToolsCountMin",
    "ToolsNotCalled",
    "TurnsMax",
    "TurnsMin",
    "WordCountMax",
    "WordCountMin",
    "assertion_layer",
]
