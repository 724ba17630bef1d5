"""What collection derives from the settings: each sample's plan and its markers.

System-prompt files are read once per run, and one mark object is shared per distinct value
(building marks dominated collecting large files).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_omk.config.settings import Settings
from pytest_omk.errors import SampleFailed

if TYPE_CHECKING:
    from pytest_omk.compare.variants import Variant
    from pytest_omk.loading import LoadedSample, SampleBundle
    from pytest_omk.models import Sample
    from pytest_omk.models.run import SamplePlan


class Planner:
    """Plans and markers of collected samples."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self._system_texts: dict[Path, str] = {}
        self._marks: dict[tuple[Any, ...], pytest.MarkDecorator] = {}
        # Resolving a directory's links walks it with a system call per part: once per file, not
        # once per sample (it was a tenth of a large replay's call thread).
        self._real_dirs: dict[Path, Path] = {}

    def system_text(self, path: Path) -> str:
        """The text of a system-prompt file, read once."""
        if path not in self._system_texts:
            try:
                self._system_texts[path] = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise pytest.UsageError(
                    f"omk: cannot read system prompt file {path}: {exc.strerror}"
                ) from None
        return self._system_texts[path]

    def _real_dir(self, path: Path) -> Path:
        if path not in self._real_dirs:
            self._real_dirs[path] = path.resolve()
        return self._real_dirs[path]

    def _system_for(self, system_file: Path | None) -> str | None:
        if system_file is not None:
            return self.system_text(system_file)
        if self.settings.system:
            candidate = Path(self.config.invocation_params.dir) / self.settings.system
            if not candidate.exists():
                candidate = self.settings.rootdir / self.settings.system
            return self.system_text(candidate)
        return None

    def plan_for(
        self,
        loaded: LoadedSample,
        bundle: SampleBundle,
        system_file: Path | None,
        variant: Variant | None = None,
    ) -> SamplePlan:
        """The fixed inputs of one sample's run; a variant's file replaces every other system prompt."""
        from pytest_omk.models.run import SamplePlan  # with the format's models, on first use

        return SamplePlan(
            sample=loaded.sample,
            base_dir=bundle.base_dir,
            resolved_base=self._real_dir(bundle.base_dir),
            rootdir=self.settings.rootdir,
            system=self.system_text(variant.path)
            if variant
            else self._system_for(system_file or bundle.system_file),
            model=self.settings.model,
            variant=variant.name if variant else None,
            source=loaded.source,
            max_tokens=self.settings.max_tokens,
        )

    def markers_for(self, sample: Sample) -> list[pytest.MarkDecorator]:
        """Markers carrying the sample's metadata (one shared mark object per distinct value)."""
        marks = [self._mark("omk")]
        if sample.difficulty:
            marks.append(self._mark("omk_difficulty", sample.difficulty, level=sample.difficulty))
        for capability in sample.capability or []:
            marks.append(self._mark("omk_capability", capability, name=capability))
        if sample.tripwire:
            # Only the model's failure is expected (SampleFailed): an executor failure, a replay
            # miss, a URL or judge failure is not the model's, and stays an ERROR.
            marks.append(
                self._mark(
                    "xfail",
                    strict=False,
                    raises=SampleFailed,
                    reason="tripwire sample: the model is expected to fail",
                )
            )
        return marks

    def _mark(
        self, marker: str, /, *args: str, **kwargs: str | bool | type[BaseException]
    ) -> pytest.MarkDecorator:
        # Building marks dominates collecting large files; a run has few distinct values.
        key = (marker, args, tuple(sorted(kwargs.items())))
        if key not in self._marks:
            decorator = getattr(pytest.mark, marker)
            self._marks[key] = decorator(*args, **kwargs) if args or kwargs else decorator
        return self._marks[key]
