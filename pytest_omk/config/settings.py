"""The resolved options of one run: a plain, frozen value (no pytest).

The pytest layer builds it from the command line and the ini file (:mod:`pytest_omk.plugin.options`);
every other part of the plugin receives this value, never the pytest config.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_omk.compare.variants import Variant
from pytest_omk.config.shard import Shard
from pytest_omk.execute.pricing import Price
from pytest_omk.recordings.modes import RecordMode


@dataclass(frozen=True)
class Settings:
    """The resolved options of one pytest run."""

    rootdir: Path
    samples: tuple[str, ...] = ()
    executor: str | None = None
    model: str | None = None
    system: str | None = None
    judge: str | None = None
    judge_model: str | None = None
    judge_repeat: int = 1
    judge_failure: str = "error"
    judge_probe: str | None = None
    """``--omk-judge-probe``: ``length`` judges each output again with neutral filler appended."""
    judge_response_format: str = "json_object"
    """``json_object``, ``json_schema`` (the score's schema) or ``none``: what the judge asks for."""
    max_checks: int = 200
    rubric_threshold: float = 3.0
    min_composite: float | None = None
    strict: bool = False
    lint: bool = False
    report: str | None = None
    html: str | None = None
    markdown: str | None = None
    annotations: str = "auto"
    """``--omk-annotations``: ``auto`` (GitHub's under GitHub Actions), ``github`` or ``off``."""
    code_quality: str | None = None
    """``--omk-code-quality``: where GitLab's code-quality report is written."""
    otel: bool = False
    """``--omk-otel``: export the run as one OpenTelemetry trace (docs/telemetry.md)."""
    otel_content: bool = False
    """``--omk-otel-content``: the trace carries prompts, outputs and reasons too."""
    record_mode: RecordMode = "new_episodes"
    record_mode_note: str | None = None
    """Why the mode is not the ini file's (``CI`` set it aside), shown in the run's header."""
    recordings: str | None = None
    concurrency: int = 8
    retries: int = 3
    timeout: float = 120.0
    max_tokens: int | None = None
    """``--omk-max-tokens``: the most tokens of each answer (``None``: not sent)."""
    mcp_config: str | None = None
    agent_api: str = "openai"
    agent_max_turns: int = 20
    agent_tool_timeout: float = 60.0
    agent_env: tuple[str, ...] = ()
    """``--omk-agent-env``: variables the agent's ``Bash`` receives beyond its allow-list."""
    variants: tuple[Variant, ...] = ()
    """Named system prompts; every sample runs once per variant (the first is the reference)."""
    repeat: int = 1
    """Runs of each sample; with ``repeat_auto`` the most runs (``--omk-repeat-max``)."""
    repeat_auto: bool = False
    """``--omk-repeat auto``: stop repeating a sample once its pass rate is decided."""
    min_pass_rate: float = 1.0
    baseline: str | None = None
    fail_on_regression: float | None = None
    known_failures: str = "off"
    """``--omk-known-failures``: ``xfail`` reports a sample that failed in the baseline and fails
    again as an expected failure; ``off``: every failure fails the run."""
    changed: bool = False
    """``--omk-changed``: run only samples whose input digest differs from the baseline's."""
    budget_usd: float | None = None
    budget_tokens: int | None = None
    allow_incomplete: bool = False
    mutate: bool = False
    mutate_seed: int = 0
    url_allow_hosts: tuple[str, ...] = ()
    executor_capabilities: tuple[str, ...] = ()
    app_record: str = "calls"
    """``calls``: an app under test runs for every sample, its model calls recorded; ``answers``:
    its whole answers are recorded too, keyed by the app's digest (``--omk-app-record``)."""
    app_digest: tuple[str, ...] = ()
    """What the app is for whole-answer recording: paths, globs and ``version:TEXT`` lines."""
    prices: Mapping[str, Price] = field(default_factory=dict)
    """ini ``omk_prices``: the user's prices by model name (lower case)."""
    shard: Shard | None = None
    """``--omk-shard K/N``: this run's block of the collected items."""
    shard_source: str | None = None
    """``--omk-shard auto``: the CI variables it read (``GitLab CI_NODE_INDEX=2 CI_NODE_TOTAL=4``)."""
    shard_by: str = "count"
    """``--omk-shard-by``: blocks of equal ``count`` or equal recorded ``durations``."""
    durations: str | None = None
    """``--omk-durations``: the ``.test_durations`` file read for ``--omk-shard-by durations``."""
    store_durations: str | None = None
    """``--omk-store-durations``: where this run writes its samples' recorded latency (``None``: not)."""
    status_interval: float = 5.0
    """Seconds between status lines without a terminal (``omk_status_interval``; 0 turns it off)."""
    junit_properties: str = "auto"
    """``testcase``: per-sample JUnit properties on each testcase; ``suite``: on the testsuite;
    ``auto``: where the JUnit family's schema allows them (see :func:`junit_layout`)."""
