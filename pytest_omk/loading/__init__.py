"""From files to validated samples: parsing, validation and discovery.

The names are imported on first use (PEP 562): ``pytest_omk.loading.display`` is needed when the
plugin loads, and importing this package must not build the format's models then, or every
pytest run with the plugin installed (sample files or not) would pay for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_omk.loading.load import LoadedSample, SampleBundle, load_directory, load_file

__all__ = ["LoadedSample", "SampleBundle", "load_directory", "load_file"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from pytest_omk.loading import load

        return getattr(load, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
