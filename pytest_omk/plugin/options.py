"""Every pytest-omk option in one table: CLI flag, ini key, default and one typed converter each.

Precedence: a CLI flag wins over the ini key of the same name (``--omk-x`` / ``omk_x``), which wins
over the default. A value that does not convert is a usage error (exit code 4) naming the option,
the value and what is allowed, wherever it came from.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from pytest_omk.compare.variants import Variant, parse_variants
from pytest_omk.config.converters import Converter, boolean, choice, integer, number, repeat_count, text
from pytest_omk.config.gold import JUDGE_PROBES
from pytest_omk.config.settings import Settings
from pytest_omk.errors import ConfigError
from pytest_omk.execute.pricing import PRICE_LINE, parse_prices
from pytest_omk.judge.score_schema import JUDGE_RESPONSE_FORMATS
from pytest_omk.plugin.shard_options import add_store_durations, shard_values
from pytest_omk.recordings.modes import RECORD_MODES, choose_mode

ListKind = Literal["paths", "args"]
AUTO_REPEAT_MAX = 10
"""Most runs of a sample under ``--omk-repeat auto`` when ``--omk-repeat-max`` is not given."""


@dataclass(frozen=True)
class Option:
    """One option: its flag, help, default, converter and ini key."""

    flag: str
    help: str
    default: Any = None
    convert: Converter = text
    metavar: str = "PATH"
    cli: bool = True
    ini: str | None = None
    """The ini key when it is not the flag's name (``--omk-variant`` ↔ ``omk_variants``)."""
    listing: ListKind | None = None
    """A repeatable flag (``paths``) or a whitespace-separated ini list (``args``)."""

    @property
    def dest(self) -> str:
        """The attribute on ``config.option``."""
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def ini_name(self) -> str:
        """The ini key (``omk_`` and the flag's name, unless given)."""
        if self.ini:
            return self.ini
        return self.dest if self.dest.startswith("omk_") else f"omk_{self.dest}"


_SPEC, _NAME, _N, _X, _S = "SPEC", "NAME", "N", "X", "S"
OPTIONS: tuple[Option, ...] = (
    Option("--omk-samples", "explicit sample file or split directory (repeatable)", listing="paths"),
    Option("--omk-executor", "model under test: openai, anthropic, agent, echo, python:pkg.mod:attr, or a command",
           metavar=_SPEC),
    Option("--omk-model", "model name passed to the executor", metavar=_NAME),
    Option("--omk-system", "file whose text is the system prompt (skill-local samples use their SKILL.md)"),
    Option("--omk-judge", "judge executor (same syntax as --omk-executor; default: detected from env)", metavar=_SPEC),
    Option("--omk-judge-model", "model name passed to the judge", metavar=_NAME),
    Option("--omk-judge-repeat", "judge readings per rubric dimension (mean is used)", 1, integer(1), _N),
    Option("--omk-judge-failure", "a judge reply still unusable after one re-ask: error (the sample errors) "
           "or skip (missing evidence)", "error", choice("error", "skip", "missing"), "MODE"),
    Option("--omk-judge-response-format", "structured output asked of the judge: json_object, json_schema "
           "(the score's schema) or none; a server answering 400 to it is judged without it", "json_object",
           choice(*JUDGE_RESPONSE_FORMATS), "FORMAT"),
    Option("--omk-judge-probe", "judge each output once more with neutral filler appended (length) and "
           "report each rubric dimension's score shift", None, choice(*JUDGE_PROBES), "PROBE"),
    Option("--omk-max-checks", "most assertions plus rubric dimensions per sample (more is a collection error)",
           200, integer(1), _N),
    Option("--omk-rubric-threshold", "a rubric dimension passes when its 1-5 score >= X", 3.0,
           number(low=1, high=5), _X),
    Option("--omk-min-composite", "a sample also fails when its composite score is below X", None, number(), _X),
    Option("--omk-strict", "missing evidence fails instead of skipping", False, boolean),
    Option("--omk-lint", "warn about assertion values the reference's strict loader (omk) would refuse", False, boolean),
    Option("--omk-report", "write the JSON report to this path"),
    Option("--omk-html", "write a self-contained HTML report with charts to this path"),
    Option("--omk-annotations", "CI annotations at each failed check's line: auto (GitHub's when "
           "GITHUB_ACTIONS=true), github, off", "auto", choice("auto", "github", "off"), "MODE"),
    Option("--omk-code-quality", "write GitLab's code-quality report (JSON) of the failed checks to this path"),
    Option("--omk-markdown", "write a Markdown summary to this path (also to $GITHUB_STEP_SUMMARY when set)"),
    Option("--omk-otel", "export the run as one OpenTelemetry trace over OTLP/HTTP (OTEL_EXPORTER_OTLP_* "
           "variables; needs pytest-omk[otel])", False, boolean),
    Option("--omk-otel-content", "with --omk-otel, also send prompts, outputs, judge reasons and failure "
           "messages", False, boolean),
    Option("--omk-record-mode", "recordings: none (replay only), once, new_episodes, all, rewrite, off "
           "(default: new_episodes; none when CI is set)", None, choice(*RECORD_MODES), "MODE"),
    Option("--omk-status-interval", "seconds between status lines while model calls run, when the output is "
           "not a terminal (0: none)", 5.0, number(low=0), _X, cli=False),
    Option("--omk-junit-properties", "where per-sample JUnit properties go: auto (suite under junit_family "
           "xunit2, testcase under xunit1/legacy), testcase or suite", "auto", choice("auto", "testcase", "suite"),
           "WHERE", cli=False),
    Option("--omk-recordings", "recordings directory, relative to rootdir (default: in pytest's cache)", metavar="PATH"),
    Option("--omk-concurrency", "model calls in flight at once (executor + judge)", 8, integer(1), _N),
    Option("--omk-retries", "retries on 429, 5xx, timeouts and connection errors", 3, integer(0), _N),
    Option("--omk-timeout", "per-call timeout in seconds, from when the call is sent (time queued in the "
           "server counts)", 120.0, number(above=0), _S),
    Option("--omk-max-tokens", "most tokens of each answer, model under test and judge (default: not sent, the "
           "server decides)", None, integer(1), _N),
    Option("--omk-mcp-config", "MCP servers for URL resolution (default: .mcp.json at rootdir)"),
    Option("--omk-agent-api", "tool-calling API of --omk-executor agent", "openai", choice("openai", "anthropic"),
           "API"),
    Option("--omk-agent-max-turns", "agent executor: most assistant turns per sample", 20, integer(1), _N),
    Option("--omk-agent-tool-timeout", "agent executor: timeout of one tool call in seconds", 60.0,
           number(above=0), _S),
    Option("--omk-agent-env", "agent executor: an environment variable its Bash also receives, beyond PATH, "
           "HOME, USER, SHELL, TERM, TZ and the locale (repeatable)", metavar=_NAME, listing="args"),
    Option("--omk-variant", "NAME=PATH: run every sample once per variant with PATH as system prompt "
           "(repeatable)", metavar="NAME=PATH", ini="omk_variants", listing="paths"),
    Option("--omk-repeat", "run every sample (per variant) N times, or auto: until its pass rate is decided "
           "against --omk-min-pass-rate (at most --omk-repeat-max runs)", 1, repeat_count, _N),
    Option("--omk-repeat-max", "with --omk-repeat auto, the most runs of a sample", None, integer(1), _N),
    Option("--omk-min-pass-rate", "with --omk-repeat, a sample passes when this share of its runs passed",
           1.0, number(low=0, high=1), _X),
    Option("--omk-baseline", "an earlier JSON report to compare this run with"),
    Option("--omk-fail-on-regression", "fail the run when a layer mean drops by more than X against "
           "--omk-baseline, or a sample that passed there fails", None, number(low=0), _X),
    Option("--omk-changed", "with --omk-baseline, run only the samples whose inputs changed since that report "
           "and carry the others' results from it", False, boolean),
    Option("--omk-budget-usd", "stop live model and judge calls once their cost would pass X dollars; samples "
           "not started are skipped (reason: omk budget)", None, number(low=0), _X),
    Option("--omk-budget-tokens", "stop live model and judge calls once their tokens would pass N (counts "
           "unpriced calls too)", None, integer(1), _N),
    Option("--omk-allow-incomplete", "a run the budget cut short exits 0 when nothing else failed", False, boolean),
    Option("--omk-mutate", "grade mutated copies of each output with the sample's deterministic checks and "
           "list the samples whose checks catch none", False, boolean),
    Option("--omk-mutate-seed", "seed of --omk-mutate's mutants", 0, integer(0), _N),
    Option("--omk-shard", "run only the K-th of N equal, contiguous blocks of the collected items "
           "(CI matrices; merge the shards' reports with python -m pytest_omk merge), or auto: K and N from the "
           "CI's parallel-job variables (docs/scaling.md)", metavar="K/N"),
    Option("--omk-shard-by", "how --omk-shard cuts the blocks: count (equal numbers of items) or durations "
           "(equal recorded latency, from --omk-durations)", "count", choice("count", "durations"), "HOW"),
    Option("--omk-durations", "a .test_durations file (pytest-split's JSON: node id to seconds) weighing the "
           "samples for --omk-shard-by durations (default: .test_durations in the rootdir)"),
    Option("omk_url_allow_hosts", "hosts exempt from the private-address block", cli=False, listing="args"),
    Option("omk_executor_capabilities", "what a command executor supports (e.g. mocks)", cli=False, listing="args"),
    Option("--omk-app-record", "an app under test (python:, hook, omk_app fixture, command) runs for every "
           "sample and its model calls are recorded (calls), or its whole answers are recorded too, keyed "
           "by --omk-app-digest (answers)", "calls", choice("calls", "answers"), "WHAT"),
    Option("--omk-app-digest", "what the app is, for --omk-app-record answers and --omk-changed: a path or "
           "glob relative to the rootdir, or version:TEXT (repeatable; default for answers: the source file "
           "of the app's module)",
           metavar="PATH", listing="paths"),
    Option("omk_prices", f"prices of models, one per line: {PRICE_LINE} in USD per million tokens (any "
           "endpoint; overrides the list prices)", cli=False, listing="paths"),
    Option("--omk-known-failures", "xfail: a sample that failed in --omk-baseline and fails again is an "
           "expected failure (XFAIL), one that passes now an XPASS; off: every failure fails", "off",
           choice("off", "xfail"), "MODE"),
)  # fmt: skip


def value_flags() -> tuple[str, ...]:
    """The flags that take a value (``--omk-report PATH`` ...), not the switches."""
    return tuple(opt.flag for opt in OPTIONS if opt.cli and opt.convert is not boolean)


def ini_names() -> tuple[str, ...]:
    """Every ini key of the plugin."""
    return tuple(opt.ini_name for opt in OPTIONS)


def _help(opt: Option) -> str:
    """The help line, with the default when there is one (``--help`` shows it)."""
    if opt.default in (None, False):
        return opt.help
    shown = f"{opt.default:g}" if isinstance(opt.default, float) else str(opt.default)
    return f"{opt.help} (default: {shown})"


def add_options(parser: pytest.Parser, options: tuple[Option, ...] = OPTIONS) -> None:
    """Register every flag and ini key (values stay text: the converters read them)."""
    group = parser.getgroup("omk", "omk eval samples")
    for opt in options:
        ini_type: Any = {"paths": "linelist", "args": "args"}.get(opt.listing or "", "string")
        parser.addini(opt.ini_name, _help(opt), type=ini_type, default=[] if opt.listing == "args" else None)
        if not opt.cli:
            continue
        kwargs: dict[str, Any] = {"dest": opt.dest, "help": _help(opt), "default": None}
        if opt.convert is boolean:
            kwargs["action"] = "store_true"
        else:
            kwargs["metavar"] = opt.metavar
            if opt.listing:
                kwargs["action"] = "append"
        group.addoption(opt.flag, **kwargs)
    if options is OPTIONS:  # the main table's call (feature tables such as gold's come on their own)
        add_store_durations(parser)


def option_value(config: pytest.Config, opt: Option) -> Any:
    """The option's converted value: the CLI's, else the ini file's, else the default."""
    cli = config.getoption(opt.dest, default=None) if opt.cli else None
    # Identity checks: ``0`` (e.g. ``--omk-retries 0``) equals ``False`` but is a value given.
    if cli is not None and cli is not False and cli != []:
        where, raw = opt.flag, cli
    else:
        where, raw = f"ini key {opt.ini_name}", config.getini(opt.ini_name)
        if raw in (None, "", []):
            return opt.default if opt.listing != "args" else []
    if opt.listing or cli is True:
        return raw
    try:
        return opt.convert(str(raw))
    except ValueError as exc:
        raise pytest.UsageError(f"omk: {where} must be {exc}, not {raw!r}") from None


def settings_from_config(config: pytest.Config) -> Settings:
    """Read and check every option; a bad value is a :class:`pytest.UsageError`."""
    values = {opt.dest.removeprefix("omk_"): option_value(config, opt) for opt in OPTIONS}
    # A path given on the command line is relative to where pytest was started; one from an
    # ini file is relative to the rootdir (the ini file's directory), like --junitxml/junit_*.
    for name in ("report", "html", "markdown", "code_quality", "system", "mcp_config", "baseline"):
        if values[name] and config.getoption(f"omk_{name}", default=None) is None:
            values[name] = str(Path(config.rootpath) / values[name])
    for name in ("samples", "url_allow_hosts", "executor_capabilities", "app_digest"):
        values[name] = tuple(values[name] or ())
    try:
        values["prices"] = parse_prices(values["prices"] or ())
    except ConfigError as exc:
        raise pytest.UsageError(f"omk: {exc}") from None
    values["agent_env"] = _variable_names(values["agent_env"] or ())
    values["variants"] = _variants(config, values.pop("variant") or ())
    values["record_mode"], values["record_mode_note"] = _record_mode(config)
    values.update(shard_values(config, values))
    if values["fail_on_regression"] is not None and not values["baseline"]:
        raise pytest.UsageError(
            "omk: --omk-fail-on-regression needs --omk-baseline (the report to compare with)"
        )
    if values["known_failures"] != "off" and not values["baseline"]:
        raise pytest.UsageError(
            "omk: --omk-known-failures=xfail needs --omk-baseline (the report whose failures are known)"
        )
    if values["changed"] and not values["baseline"]:
        raise pytest.UsageError(
            "omk: --omk-changed needs --omk-baseline (the report whose results are carried)"
        )
    values.update(_repeats(values.pop("repeat"), values.pop("repeat_max")))
    return Settings(rootdir=Path(config.rootpath), **values)


def _repeats(repeat: int | str, maximum: int | None) -> dict[str, Any]:
    """``--omk-repeat N`` or ``auto`` (with its maximum) as the settings' three values."""
    if repeat != "auto":
        if maximum is not None:
            raise pytest.UsageError("omk: --omk-repeat-max needs --omk-repeat auto")
        return {"repeat": int(repeat), "repeat_auto": False}
    return {"repeat": maximum or AUTO_REPEAT_MAX, "repeat_auto": True}


_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _variable_names(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """``--omk-agent-env``: each value an environment variable's name."""
    for name in names:
        if not _VARIABLE_NAME.fullmatch(name):
            raise pytest.UsageError(
                f"omk: --omk-agent-env (ini omk_agent_env) must be environment variable names "
                f"(letters, digits and _, not starting with a digit), not {name!r}"
            )
    return tuple(names)


def _record_mode(config: pytest.Config) -> tuple[str, str | None]:
    """The record mode (``recordings.modes.choose_mode``) and a note when CI set the ini's aside."""
    cli = config.getoption("omk_record_mode", default=None)
    try:
        choice = choose_mode(cli, config.getini("omk_record_mode") or None, os.environ)
    except ValueError as exc:
        raise pytest.UsageError(f"omk: {exc}") from None
    note = None
    if choice.ignored_ini:
        note = (
            f"omk: CI is set, so ini key omk_record_mode = {choice.ignored_ini} is ignored and every call "
            "replays (--omk-record-mode or OMK_RECORD_MODE records in CI)"
        )
    return choice.mode, note


def _variants(config: pytest.Config, specs: list[str] | tuple[str, ...]) -> tuple[Variant, ...]:
    """Parse ``--omk-variant``: CLI paths are relative to the invocation dir, ini paths to the rootdir."""
    from_cli = bool(config.getoption("omk_variant", default=None))
    base = Path(config.invocation_params.dir) if from_cli else Path(config.rootpath)
    try:
        return parse_variants(specs, base)
    except ConfigError as exc:
        raise pytest.UsageError(f"omk: {exc}") from None
