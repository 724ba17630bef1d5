"""The judge-calibration options (``--omk-gold`` ...): their own table beside the main one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_omk.config.converters import number
from pytest_omk.config.gold import GoldSettings
from pytest_omk.config.settings import Settings
from pytest_omk.plugin.options import Option, add_options, option_value

_X = "X"
GOLD_OPTIONS: tuple[Option, ...] = (
    Option("--omk-gold", "a gold dataset directory in omk's format (metadata.yaml and *.yaml annotations): "
           "after the samples, one calibration item compares its labels with the judge's scores (repeatable)",
           metavar="DIR", listing="paths"),
    Option("--omk-min-agreement", "with --omk-gold, the calibration item fails when the lower bound of "
           "Krippendorff's alpha's 95 percent interval is below X", None, number(low=-1, high=1), _X),
    Option("--omk-min-tpr", "with --omk-gold, fail when the lower bound of the judge's true-positive rate "
           "(gold passes it also passes) is below X", None, number(low=0, high=1), _X),
    Option("--omk-min-tnr", "with --omk-gold, fail when the lower bound of the judge's true-negative rate "
           "(gold fails it also fails) is below X", None, number(low=0, high=1), _X),
    Option("--omk-min-judge-consistency", "with --omk-judge-repeat N >= 2, fail the run when a rubric "
           "dimension's Krippendorff alpha across the judge's replicates is below X", None,
           number(low=-1, high=1), _X),
    Option("--omk-max-judge-bias", "with --omk-judge-probe, fail the run when a rubric dimension's mean score "
           "shift lies beyond +-X (its whole 95 percent interval)", None, number(low=0), _X),
    Option("--omk-gold-export", "with --omk-gold, write the (sample, gold, judge, pass/fail) rows to this CSV "
           "file", metavar="CSV"),
)  # fmt: skip


def add_gold_options(parser: pytest.Parser) -> None:
    """Register the calibration options in the ``omk`` group."""
    add_options(parser, GOLD_OPTIONS)


def gold_ini_names() -> tuple[str, ...]:
    """The calibration options' ini keys."""
    return tuple(opt.ini_name for opt in GOLD_OPTIONS)


def gold_value_flags() -> tuple[str, ...]:
    """The calibration flags that take a value (all of them)."""
    return tuple(opt.flag for opt in GOLD_OPTIONS)


def gold_settings(config: pytest.Config) -> GoldSettings:
    """The calibration options, checked; paths absolute (CLI: invocation dir; ini: rootdir)."""
    values: dict[str, Any] = {
        opt.dest.removeprefix("omk_"): option_value(config, opt) for opt in GOLD_OPTIONS
    }
    cli_dirs = config.getoption("omk_gold", default=None)
    base = Path(config.invocation_params.dir) if cli_dirs else Path(config.rootpath)
    datasets = tuple(str((base / d).resolve()) for d in values.pop("gold") or ())
    export = values.pop("gold_export")
    if export and config.getoption("omk_gold_export", default=None) is None:
        export = str(Path(config.rootpath) / export)
    elif export:
        export = str(Path(config.invocation_params.dir) / export)
    settings = GoldSettings(datasets=datasets, export=export, **values)
    gated = [
        flag for flag in ("--omk-min-agreement", "--omk-min-tpr", "--omk-min-tnr")
        if values.get(flag.removeprefix("--omk-").replace("-", "_")) is not None
    ] + (["--omk-gold-export"] if export else [])  # fmt: skip
    if gated and not datasets:
        raise pytest.UsageError(f"omk: {gated[0]} needs --omk-gold (the gold dataset to compare with)")
    return settings


def register_gold(config: pytest.Config, settings: Settings) -> None:
    """With ``--omk-gold``: load the datasets (a usage error when one is invalid) and register the
    calibration plugin."""
    gold = gold_settings(config)
    if gold.min_judge_consistency is not None and settings.judge_repeat < 2:
        raise pytest.UsageError("omk: --omk-min-judge-consistency needs --omk-judge-repeat 2 or more")
    if gold.max_judge_bias is not None and settings.judge_probe is None:
        raise pytest.UsageError("omk: --omk-max-judge-bias needs --omk-judge-probe length")
    if settings.judge_probe is not None:
        from pytest_omk.plugin.judge_probe import JudgeProbe, judge_probe_key

        probe = JudgeProbe(gold.max_judge_bias)
        config.stash[judge_probe_key] = probe
        config.pluginmanager.register(probe, "omk-judge-probe")
    if settings.judge_repeat >= 2:
        from pytest_omk.plugin.judge_consistency import JudgeConsistency, judge_consistency_key

        consistency = JudgeConsistency(gold.min_judge_consistency)
        config.stash[judge_consistency_key] = consistency
        config.pluginmanager.register(consistency, "omk-judge-consistency")
    if not gold.datasets:
        return
    config.addinivalue_line("markers", "omk_calibration: a judge-calibration item (--omk-gold)")
    from pytest_omk.plugin.gold import GoldPlugin, gold_plugin_key

    judge_ids = [
        m for m in (settings.judge_model, f"{settings.judge}:{settings.judge_model}") if m and "None" not in m
    ]
    plugin = GoldPlugin(
        config, gold, settings.rubric_threshold, judge_ids, tuple(v.name for v in settings.variants)
    )
    config.stash[gold_plugin_key] = plugin
    config.pluginmanager.register(plugin, "omk-gold")
