"""Collection-time checks of a sample file that need the run's configuration.

The loader validates a file on its own; what depends on the options is checked here, once per file
as it is collected: the check caps (``--omk-max-checks``), the portability lint (``--omk-lint``), and
whether the executor can intercept the tool calls that the samples' mocks declare.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_omk.errors import ConfigError
from pytest_omk.safety import check_caps
from pytest_omk.settings import Settings

if TYPE_CHECKING:
    from pytest_omk.execute.base import Executor
    from pytest_omk.loading import SampleBundle


def check_sample_file(node: pytest.File, bundle: SampleBundle, settings: Settings, executor: Executor | None) -> None:
    """Raise :class:`ConfigError` for what the run cannot do with this file; warn for lint findings."""
    check_caps(node.path.name, bundle, settings.max_checks)
    if settings.lint:
        from pytest_omk.loading.lint import portability_warnings

        for loaded in bundle.samples:
            if loaded.source == node.path:
                for message in portability_warnings(loaded.sample.sample_id, loaded.sample.assertions or []):
                    node.warn(pytest.PytestWarning(f"omk-lint: {message}"))
    if executor is None or executor.supports_mocks:
        return
    with_mocks = [s.sample.sample_id for s in bundle.samples if s.sample.mocks]
    if with_mocks:
        raise ConfigError(
            f"{node.path.name}: samples {', '.join(with_mocks)} declare mocks, but executor "
            f"{executor.id!r} cannot intercept tool calls (a command executor declares it with "
            "the ini option omk_executor_capabilities = mocks)"
        )
