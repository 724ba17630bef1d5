"""The plugin's collection-phase hooks: the collector paused, recordings not walked, shards cut,
and, at the end of a large run of samples, its survivors frozen (see :mod:`pytest_omk.gc_policy`).

One plugin object per run (``omk-collection``), made by ``OmkSession``, which reads the collection
order it keeps for the records.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path

import pytest

from pytest_omk.gc_policy import collector_paused, freeze_survivors
from pytest_omk.safety import sandbox_notice
from pytest_omk.settings import Settings


class CollectionHooks:
    """What collection does for the plugin; ``order`` is each collected item's index by node id.

    ``is_sample`` tells a sample item from another test (the session knows the items it adopted).
    """

    def __init__(self, config: pytest.Config, settings: Settings, is_sample: Callable[[pytest.Item], bool]) -> None:
        self.config = config
        self.settings = settings
        self._is_sample = is_sample
        self.order: dict[str, int] = {}
        self.samples = 0
        """How many sample items were collected (a large run freezes what it keeps at its end)."""
        self._recordings_root = (settings.rootdir / settings.recordings).resolve() if settings.recordings else None

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(self, session: pytest.Session) -> Generator[None, object, object]:
        with collector_paused():  # see pytest_omk.gc_policy
            return (yield)

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        # A recordings directory inside the project holds one file per call (tens of thousands
        # in a large suite): walking it would slow collection for nothing, and a recorded
        # fixture named like a sample file must not become a test.
        if self._recordings_root is not None and collection_path == self._recordings_root:
            return True
        return None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        # Last, so that the shard is cut from what -k, -m and --lf left: blocks stay even.
        if self.settings.shard is not None:
            selected, deselected = self.settings.shard.split(items)
            if deselected:
                config.hook.pytest_deselected(items=deselected)
                items[:] = selected

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # Records are ordered by collection order, which every xdist worker shares, so reports
        # come out in the same order with and without -n.
        self.order = {item.nodeid: index for index, item in enumerate(session.items)}
        # Not by the "omk" keyword: every node's name is a keyword too (a directory named omk).
        self.samples = sum(1 for item in session.items if self._is_sample(item))
        sandbox_notice(self.config, session, self.settings.executor)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        # After pytest's own collection at unconfigure, which has run the finalizers of the run's
        # garbage with its unraisable-exception hook in place.
        freeze_survivors(self.samples)
