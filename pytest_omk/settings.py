"""Every pytest-omk option in one place: CLI flags, ini keys and the resolved ``Settings``.

Precedence: a CLI flag wins over the ini key of the same name (``--omk-x`` / ``omk_x``), which wins
over the default.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from pytest_omk.compare.variants import Variant, parse_variants
from pytest_omk.errors import ConfigError
from pytest_omk.record_modes import RECORD_MODES, RecordMode, default_mode
from pytest_omk.shard import Shard, parse_shard

__all__ = ["OPTIONS", "RECORD_MODES", "RecordMode", "Settings", "add_options"]


@dataclass(frozen=True)
class _Option:
    flag: str
    help: str
    default: Any = None
    kind: Literal["string", "int", "float", "bool", "paths", "args"] = "string"
    choices: tuple[str, ...] | None = None
    cli: bool = True
    ini: str | None = None
    """The ini key when it is not the flag's name (``--omk-variant`` ↔ ``omk_variants``)."""

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def ini_name(self) -> str:
        if self.ini:
            return self.ini
        return self.dest if self.dest.startswith("omk_") else f"omk_{self.dest}"


OPTIONS: tuple[_Option, ...] = (
    _Option("--omk-samples", "explicit sample file or split directory (repeatable)", kind="paths"),
    _Option("--omk-executor", "model under test: openai, anthropic, agent, echo, python:pkg.mod:attr, or a command"),
    _Option("--omk-model", "model name passed to the executor"),
    _Option("--omk-system", "file whose text is the system prompt (skill-local samples use their SKILL.md)"),
    _Option("--omk-judge", "judge executor (same syntax as --omk-executor; default: detected from env)"),
    _Option("--omk-judge-model", "model name passed to the judge"),
    _Option("--omk-judge-repeat", "judge readings per rubric dimension (mean is used)", 1, "int"),
    _Option("--omk-rubric-threshold", "a rubric dimension passes when its 1-5 score >= X", 3.0, "float"),
    _Option("--omk-min-composite", "a sample also fails when its composite score is below X", None, "float"),
    _Option("--omk-strict", "missing evidence fails instead of skipping", False, "bool"),
    _Option("--omk-report", "write the JSON report to this path"),
    _Option("--omk-html", "write a self-contained HTML report with charts to this path"),
    _Option("--omk-markdown", "write a Markdown summary to this path (also to $GITHUB_STEP_SUMMARY when set)"),
    _Option("--omk-record-mode", "recordings: none (replay only), once, new_episodes, all, rewrite, off "
            "(default: new_episodes; none when CI is set)", None, choices=RECORD_MODES),
    _Option("--omk-recordings", "recordings directory, relative to rootdir (default: in pytest's cache)"),
    _Option("--omk-concurrency", "model calls in flight at once (executor + judge)", 8, "int"),
    _Option("--omk-retries", "retries on 429, 5xx, timeouts and connection errors", 3, "int"),
    _Option("--omk-timeout", "per-call timeout in seconds", 120.0, "float"),
    _Option("--omk-mcp-config", "MCP servers for URL resolution (default: .mcp.json at rootdir)"),
    _Option("--omk-agent-api", "tool-calling API of --omk-executor agent", "openai", choices=("openai", "anthropic")),
    _Option("--omk-agent-max-turns", "agent executor: most assistant turns per sample", 20, "int"),
    _Option("--omk-agent-tool-timeout", "agent executor: timeout of one tool call in seconds", 60.0, "float"),
    _Option("--omk-variant", "NAME=PATH: run every sample once per variant with PATH as system prompt "
            "(repeatable)", kind="paths", ini="omk_variants"),
    _Option("--omk-repeat", "run every sample (per variant) N times", 1, "int"),
    _Option("--omk-min-pass-rate", "with --omk-repeat, a sample passes when this share of its runs passed",
            1.0, "float"),
    _Option("--omk-baseline", "an earlier JSON report to compare this run with"),
    _Option("--omk-fail-on-regression", "fail the run when a layer mean drops by more than X against "
            "--omk-baseline, or a sample that passed there fails", None, "float"),
    _Option("--omk-shard", "run only the K-th of N equal, contiguous blocks of the collected items "
            "(CI matrices; merge the shards' reports with python -m pytest_omk merge)"),
    _Option("omk_url_allow_hosts", "hosts exempt from the private-address block", kind="args", cli=False),
    _Option("omk_executor_capabilities", "what a command executor supports (e.g. mocks)", kind="args", cli=False),
    _Option("omk_status_interval", "seconds between status lines while model calls run, when the output is "
            "not a terminal (0: none)", 5.0, "float", cli=False),
    _Option("omk_junit_properties", "where per-sample JUnit properties go: testcase (default) or suite "
            "(for strict xunit2 validators)", "testcase", choices=("testcase", "suite"), cli=False),
)


def add_options(parser: pytest.Parser) -> None:
    """Register every flag and ini key."""
    group = parser.getgroup("omk", "omk eval samples")
    for opt in OPTIONS:
        ini_type: Any = {"paths": "linelist", "args": "args", "bool": "bool"}.get(opt.kind, "string")
        parser.addini(opt.ini_name, opt.help, type=ini_type, default=None if opt.kind != "args" else [])
        if not opt.cli:
            continue
        kwargs: dict[str, Any] = {"dest": opt.dest, "help": opt.help, "default": None}
        if opt.kind == "bool":
            kwargs["action"] = "store_true"
        elif opt.kind == "paths":
            kwargs["action"] = "append"
            kwargs["metavar"] = "NAME=PATH" if opt.flag == "--omk-variant" else "PATH"
        else:
            kwargs["type"] = {"int": int, "float": float}.get(opt.kind, str)
            if opt.choices:
                kwargs["choices"] = opt.choices
            else:
                kwargs["metavar"] = _metavar(opt)
        group.addoption(opt.flag, **kwargs)


def _metavar(opt: _Option) -> str:
    """``--omk-model NAME`` reads better in ``--help`` than ``--omk-model OMK_MODEL``."""
    if opt.kind == "int":
        return "N"
    if opt.kind == "float":
        return "S" if opt.flag.endswith("timeout") else "X"
    last = opt.flag.rsplit("-", 1)[-1]
    return {"executor": "SPEC", "judge": "SPEC", "model": "NAME", "shard": "K/N"}.get(last, "PATH")


def _raw(config: pytest.Config, opt: _Option) -> Any:
    cli = config.getoption(opt.dest, default=None) if opt.cli else None
    # Identity checks: ``0`` (e.g. ``--omk-retries 0``) equals ``False`` but is a value given.
    if cli is not None and cli is not False and cli != []:
        return cli
    ini_name = opt.ini_name
    ini = config.getini(ini_name)
    if ini in (None, "", []):
        return opt.default if opt.kind != "args" else []
    if opt.kind == "int":
        return int(ini)
    if opt.kind == "float":
        return float(ini)
    if opt.kind == "string" and opt.choices and ini not in opt.choices:
        raise pytest.UsageError(f"{ini_name} = {ini!r}: allowed values are {', '.join(opt.choices)}")
    return ini


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
    rubric_threshold: float = 3.0
    min_composite: float | None = None
    strict: bool = False
    report: str | None = None
    html: str | None = None
    markdown: str | None = None
    record_mode: RecordMode = "new_episodes"
    recordings: str | None = None
    concurrency: int = 8
    retries: int = 3
    timeout: float = 120.0
    mcp_config: str | None = None
    agent_api: str = "openai"
    agent_max_turns: int = 20
    agent_tool_timeout: float = 60.0
    variants: tuple[Variant, ...] = ()
    """Named system prompts; every sample runs once per variant (the first is the reference)."""
    repeat: int = 1
    min_pass_rate: float = 1.0
    baseline: str | None = None
    fail_on_regression: float | None = None
    url_allow_hosts: tuple[str, ...] = ()
    executor_capabilities: tuple[str, ...] = ()
    shard: Shard | None = None
    """``--omk-shard K/N``: this run's block of the collected items."""
    status_interval: float = 5.0
    """Seconds between status lines without a terminal (``omk_status_interval``; 0 turns it off)."""
    junit_properties: str = "testcase"
    """``testcase``: per-sample JUnit properties on each testcase; ``suite``: on the testsuite."""

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        values = {opt.dest.removeprefix("omk_"): _raw(config, opt) for opt in OPTIONS}
        # A path given on the command line is relative to where pytest was started; one from an
        # ini file is relative to the rootdir (the ini file's directory), like --junitxml/junit_*.
        for name in ("report", "html", "markdown", "system", "mcp_config", "baseline"):
            if values[name] and config.getoption(f"omk_{name}", default=None) is None:
                values[name] = str(Path(config.rootpath) / values[name])
        values["samples"] = tuple(values["samples"] or ())
        values["record_mode"] = default_mode(values["record_mode"], os.environ)
        values["url_allow_hosts"] = tuple(values["url_allow_hosts"])
        values["executor_capabilities"] = tuple(values["executor_capabilities"])
        for name, minimum in (("concurrency", 1), ("retries", 0), ("judge_repeat", 1), ("repeat", 1)):
            if values[name] < minimum:
                raise pytest.UsageError(f"--omk-{name.replace('_', '-')} must be >= {minimum}")
        if values["timeout"] <= 0:
            raise pytest.UsageError("--omk-timeout must be > 0")
        if values["agent_max_turns"] < 1:
            raise pytest.UsageError("--omk-agent-max-turns must be >= 1")
        if values["agent_tool_timeout"] <= 0:
            raise pytest.UsageError("--omk-agent-tool-timeout must be > 0")
        values["variants"] = _variants(config, values.pop("variant") or ())
        try:
            values["shard"] = parse_shard(values["shard"]) if values["shard"] else None
        except ConfigError as exc:
            raise pytest.UsageError(f"omk: {exc}") from None
        if not 0.0 <= values["min_pass_rate"] <= 1.0:
            raise pytest.UsageError("--omk-min-pass-rate must be between 0 and 1")
        if values["fail_on_regression"] is not None:
            if values["fail_on_regression"] < 0:
                raise pytest.UsageError("--omk-fail-on-regression must be >= 0")
            if not values["baseline"]:
                raise pytest.UsageError("--omk-fail-on-regression needs --omk-baseline (the report to compare with)")
        return cls(rootdir=Path(config.rootpath), **values)


def _variants(config: pytest.Config, specs: list[str] | tuple[str, ...]) -> tuple[Variant, ...]:
    """Parse ``--omk-variant``: CLI paths are relative to the invocation dir, ini paths to the rootdir."""
    from_cli = bool(config.getoption("omk_variant", default=None))
    base = Path(config.invocation_params.dir) if from_cli else Path(config.rootpath)
    try:
        return parse_variants(specs, base)
    except ConfigError as exc:
        raise pytest.UsageError(f"omk: {exc}") from None
