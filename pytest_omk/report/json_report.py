"""The ``--omk-report`` JSON document (schema ``pytest-omk.report/v1``)."""

from __future__ import annotations

import platform
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pytest_omk import __version__
from pytest_omk.judge.templates import template_ids
from pytest_omk.models.report import SampleRecord
from pytest_omk.models.report_document import ReportConfig, ReportSummary

if TYPE_CHECKING:
    from pytest_omk.config.settings import Settings
    from pytest_omk.execute.pricing import Price

REPORT_SCHEMA_VERSION = "pytest-omk.report/v1"


def config_section(settings: Settings) -> dict[str, Any]:
    """The options that shaped the run; never secrets (those live only in the environment)."""
    return {
        "executor": settings.executor,
        "model": settings.model,
        "judge": settings.judge,
        "judgeModel": settings.judge_model,
        "rubricThreshold": settings.rubric_threshold,
        "minComposite": settings.min_composite,
        "strict": settings.strict,
        "recordMode": settings.record_mode,
        "concurrency": settings.concurrency,
        "retries": settings.retries,
        "timeout": settings.timeout,
        "variants": {v.name: v.display(settings.rootdir) for v in settings.variants},
        "repeat": settings.repeat,
        "minPassRate": settings.min_pass_rate,
        "baseline": settings.baseline,
        "failOnRegression": settings.fail_on_regression,
        "judgeTemplates": template_ids(),
        "shard": str(settings.shard) if settings.shard else None,
        "repeatAuto": settings.repeat_auto,
        "changed": settings.changed,
        "budgetUSD": settings.budget_usd,
        "budgetTokens": settings.budget_tokens,
        "mutate": settings.mutate,
        "judgeResponseFormat": settings.judge_response_format,
        "maxTokens": settings.max_tokens,
        "prices": {name: _amounts(price) for name, price in settings.prices.items()},
        "shardBy": settings.shard_by,
    }


def _amounts(price: Price) -> list[float]:
    """A user price as written: input, output, and the cached-input price when given."""
    return [price.input, price.output, *([] if price.cache_read is None else [price.cache_read])]


def build_report(
    rows: list[dict[str, Any]],
    totals: dict[str, Any],
    settings: Settings,
    analysis: dict[str, Any] | None = None,
    answered: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The whole report document; ``analysis`` adds variants, comparisons, baseline and coverage;
    ``answered`` says which executor answered and where it came from (``executor``,
    ``executorSource``, ``executorNote``)."""
    return build_document(rows, totals, {**config_section(settings), **(answered or {})}, analysis)


def build_document(
    rows: list[dict[str, Any]],
    totals: dict[str, Any],
    config: dict[str, Any],
    analysis: dict[str, Any] | None = None,
    *,
    python: str | None = None,
) -> dict[str, Any]:
    """The report from its parts (also used to merge shards' reports: ``python -m pytest_omk merge``)."""
    return {
        "schemaVersion": REPORT_SCHEMA_VERSION,
        "plugin": {"name": "pytest-omk", "version": __version__},
        "createdAt": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": python or platform.python_version(),
        # Through the models, so a key or value the schema would reject fails here, not downstream.
        "config": ReportConfig.model_validate(config).model_dump(mode="json"),
        "summary": ReportSummary.model_validate(totals).model_dump(mode="json"),
        "samples": [SampleRecord.of(row).reported() for row in rows],
        **(analysis or {}),
    }
