"""From files to validated samples: parsing, validation and discovery."""

from __future__ import annotations

from pytest_omk.loading.load import LoadedSample, SampleBundle, load_directory, load_file

__all__ = ["LoadedSample", "SampleBundle", "load_directory", "load_file"]
