"""pytest nodes: a sample file (or split directory) collects one item per sample.

Collection only reads and validates files; model calls, URL fetches and preflight commands run
later (setup), so ``--collect-only`` stays fast and infrastructure problems never look like
invalid files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from pytest_omk._util.visible import visible
from pytest_omk.errors import OmkError, SampleFailed, SampleFileError
from pytest_omk.loading.display import display_path
from pytest_omk.plugin.compat import FullTraceback, fixture_info

if TYPE_CHECKING:
    from pytest_omk.config.settings import Settings
    from pytest_omk.js.v8 import JsEngine
    from pytest_omk.loading import LoadedSample, SampleBundle
    from pytest_omk.loading.positions import SampleLines
    from pytest_omk.models.run import SamplePlan, SampleRun
    from pytest_omk.plugin.planning import Planner


class SampleHost(Protocol):
    """What collected files and items need from the run (the session implements it).

    Collection talks to the run only through this, so the session may import collection and
    never the other way round.
    """

    settings: Settings
    planner: Planner

    @property
    def js(self) -> JsEngine:
        """The process's V8 engine (regexes are compiled with it at load time)."""

    def file_found(self) -> None:
        """A sample file is being collected (the call loop may start warming up)."""
        ...

    def check_file(self, node: SampleFile, bundle: SampleBundle) -> None:
        """Check a loaded file against the run's configuration."""
        ...

    def adopt(self, item: SampleItem) -> None:
        """Take over an item the file collected."""
        ...

    def usage_error(self, message: str) -> None:
        """A usage error found while collecting: raised once collection is finished."""
        ...

    def grade_item(self, item: SampleItem) -> None:
        """The item's call: grade it and report its checks."""
        ...


sample_host_key = pytest.StashKey[SampleHost]()
shown_key = pytest.StashKey[Callable[[str], str]]()
"""Text as a report may show it: the run's one scrubber and escaper (``Scrubber.terminal``)."""


def _run_sample() -> None:
    """The function every sample item stands for; :meth:`SampleItem.runtest` runs the item instead.

    It takes no fixtures: the item reaches its run through itself, and asks for ``subtests`` only
    when a check did not pass (setting up ``request`` and ``subtests`` for every item was a
    twentieth of a large replay's main thread).
    """
    raise RuntimeError("a pytest-omk sample item is run by SampleItem.runtest, not by calling its function")


class SampleItem(FullTraceback, pytest.Function):
    """One sample: its model calls are awaited in setup (the session's and the features'
    ``pytest_runtest_setup`` hooks), grading and subtests happen in the call phase."""

    loaded: LoadedSample
    bundle: SampleBundle
    omk_run: SampleRun
    """The model-facing result, set in setup (the first run when ``--omk-repeat`` > 1)."""
    omk_runs: list[SampleRun]
    """Every run of the sample (``--omk-repeat``), in repeat-index order."""
    omk_record: dict[str, Any]
    """The sample's JSON-safe record, created in setup and completed by grading."""

    def __init__(
        self, *, loaded: LoadedSample, bundle: SampleBundle, plan: SamplePlan, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded
        self.bundle = bundle
        self.plan = plan
        self._sample_id = loaded.sample.sample_id

    def release(self) -> None:
        """Drop the validated sample and its plan once the item has run (its reruns included).

        What the reports and the summary need is in the record by then; the sample's model and
        its strings were, with the reports, most of what a long run kept per sample. The item
        still reports its id and line.
        """
        for name in ("loaded", "plan", "omk_record"):
            self.__dict__.pop(name, None)

    @property
    def omk(self) -> SampleHost:
        """The run's session."""
        return self.config.stash[sample_host_key]

    @property
    def sample_id(self) -> str:
        """The sample's id."""
        return self._sample_id

    def runtest(self) -> None:
        """Call phase: grade the prefetched run and report one subtest per check."""
        self.omk.grade_item(self)

    @property
    def shown_path(self) -> str:
        """The sample file's path as users see it."""
        parent = self.parent
        return (
            parent.shown_path
            if isinstance(parent, SampleFile)
            else display_path(self.path, self.config.rootpath)
        )

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """The sample file, the sample's line, and its id."""
        parent = self.parent
        line = parent.sample_line(self.sample_id) if isinstance(parent, SampleFile) else None
        return self.path, line, f"sample: {visible(self.sample_id)}"

    def check_lines(self) -> SampleLines | None:
        """Where this sample's checks are in its file (read when first asked, once per file)."""
        parent = self.parent
        return parent.check_lines(self.loaded.index) if isinstance(parent, SampleFile) else None

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        """One line for a failed sample or an infrastructure failure; pytest's own otherwise.

        A failed check points at its own line (``failed.line``), the sample at the sample's.
        """
        failed = excinfo.value
        if isinstance(failed, SampleFailed | OmkError):
            check_line = failed.line if isinstance(failed, SampleFailed) else None
            if self.config.option.tbstyle == "line":
                from pytest_omk.plugin.compat import line_repr

                line = check_line - 1 if check_line is not None else self.reportinfo()[1]
                # ``--tb=line`` and JUnit print this crash line, not ``str()`` of the representation,
                # which the report scrubber sees: it is made safe here.
                shown = self.config.stash.get(shown_key, visible)
                return line_repr(self.path, line, shown(str(failed)))
            if check_line is not None and isinstance(failed, SampleFailed) and failed.check:
                return f"{failed}\n\n{self.shown_path}:{check_line}: {failed.check}"
            return str(failed)
        return super().repr_failure(excinfo)


def release_collected(items: Iterable[pytest.Item]) -> None:
    """After collection, files forget their samples: each item holds its own until it has run."""
    for item in items:
        if isinstance(item, SampleItem):
            item.bundle.samples.clear()


class SampleFile(pytest.File):
    """An eval-samples file; a split directory is represented by its files sharing one bundle."""

    def __init__(self, *, bundle: SampleBundle | None = None, system_file: Path | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self._bundle = bundle
        self.system_file = system_file

    @cached_property
    def shown_path(self) -> str:
        """The file's path as users see it (records, messages): computed once, not per sample."""
        return display_path(self.path, self.config.rootpath)

    def sample_line(self, sample_id: str) -> int | None:
        """The 0-based line where ``sample_id`` is defined in this file (read once per file)."""
        lines = self.__dict__.get("_sample_lines")
        if lines is None:
            from pytest_omk.loading.lines import sample_lines

            try:
                lines = sample_lines(self.path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                lines = {}
            self.__dict__["_sample_lines"] = lines
        return lines.get(sample_id)

    def check_lines(self, index: int) -> SampleLines | None:
        """The lines of the checks of the sample at ``index`` in this file (``None``: unknown)."""
        lines = self.__dict__.get("_check_lines")
        if lines is None:
            from pytest_omk.loading.load import is_yaml_path
            from pytest_omk.loading.positions import FileLines

            try:
                text = self.path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""
            lines = self.__dict__["_check_lines"] = FileLines(text, yaml_format=is_yaml_path(self.path))
        found: SampleLines | None = lines.sample(index)
        return found

    def load(self) -> SampleBundle:
        """The file's samples, loaded and validated once."""
        if self._bundle is None:
            host = self.config.stash[sample_host_key]
            host.file_found()  # before the loader's imports, which the call loop's warm-up overlaps
            from pytest_omk.loading import load_file

            js = host.js
            self._bundle = load_file(self.path, display=self.shown_path, js=js)
        return self._bundle

    def collect(self) -> Iterable[pytest.Item]:
        """One item per sample (per variant); a bad file is one collection error."""
        try:
            bundle = self.load()
        except SampleFileError as exc:
            raise self.CollectError(exc.message) from None
        omk = self.config.stash[sample_host_key]
        try:
            omk.check_file(self, bundle)
            # Built now, not as pytest asks for them: a usage error (an executor that cannot be
            # made, an unreadable prompt file) is the run's, raised once collection is over.
            return list(self._items(omk, bundle))
        except OmkError as exc:
            raise self.CollectError(str(exc)) from None
        except pytest.UsageError as exc:
            omk.usage_error(" ".join(str(arg) for arg in exc.args))
            return []

    def _items(self, omk: SampleHost, bundle: SampleBundle) -> Iterator[SampleItem]:
        fixtureinfo = None
        # With variants each sample is parametrized by them, ``<sample_id>[<NAME>]``, in the order given.
        variants = omk.settings.variants or (None,)
        for loaded in bundle.samples:
            if loaded.source != self.path:
                continue
            # An id is printed as the test's name: escape codes in it could forge terminal lines.
            sample_id = visible(loaded.sample.sample_id)
            for variant in variants:
                plan = omk.planner.plan_for(loaded, bundle, self.system_file, variant)
                item = SampleItem.from_parent(
                    self,
                    name=f"{sample_id}[{variant.name}]" if variant else sample_id,
                    callobj=_run_sample,
                    fixtureinfo=fixtureinfo,
                    loaded=loaded,
                    bundle=bundle,
                    plan=plan,
                )
                # Every item runs the same function, so its fixture closure is computed once per file.
                fixtureinfo = fixture_info(item)
                for marker in omk.planner.markers_for(loaded.sample):
                    item.add_marker(marker)
                omk.adopt(item)
                yield item


class SplitDirectory(pytest.Directory):
    """A split directory given with ``--omk-samples``: validated as one set, one child per file."""

    def collect(self) -> Iterator[SampleFile]:
        """One collector per file of the directory."""
        display = display_path(self.path, self.config.rootpath)
        try:
            host = self.config.stash[sample_host_key]
            host.file_found()
            from pytest_omk.loading import load_directory

            bundle = load_directory(self.path, display=display, js=host.js)
        except SampleFileError as exc:
            raise self.CollectError(exc.message) from None
        for file in bundle.files:
            yield SampleFile.from_parent(self, path=file, bundle=bundle)
