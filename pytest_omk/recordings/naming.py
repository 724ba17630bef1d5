"""Where a recording lives: its shard directory and the file-name part it takes from its call's
label (the sample id), made once per label; and the scrubbed, capped form its text is stored in.

A recording is named ``<shard>/<slug>-<16 hex>.json`` (:mod:`.files`); the slug is the label
scrubbed of the run's secrets and rendered in lower-case ASCII. No pytest here.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_omk._util.stored_text import cap_strings
from pytest_omk.recordings.files import shard_dir, slugged_name, slugify
from pytest_omk.recordings.scrub import Scrubber


def label_slug(redactor: Scrubber, label: str) -> str:
    """The file-name slug of ``label``: a sample id is user text, so it is scrubbed first."""
    return slugify(redactor.text(label), redactor.secrets)


class LabelNaming:
    """One set of secrets' scrubber, and the file-name slugs of the labels it has scrubbed.

    A sample's calls (the executor's, each judge dimension's, each repeat's) share its label and
    come close together: a few hundred recent slugs spare each call the Unicode normalisation
    and scrubbing of its label.
    """

    SLUGS_KEPT = 512

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self.secrets = secrets
        self.scrubber = Scrubber(secrets)
        self._slugs: dict[str, str] = {}

    def slug(self, label: str) -> str:
        """``label``'s slug, made once while it is among the recent ones."""
        slug = self._slugs.get(label)
        if slug is None:
            if len(self._slugs) >= self.SLUGS_KEPT:
                self._slugs.clear()
            slug = self._slugs[label] = label_slug(self.scrubber, label)
        return slug


class RecordingPaths:
    """The file of each recording under ``directory``, named with the run's ``secrets`` scrubbed."""

    def __init__(self, directory: Path, secrets: tuple[str, ...]) -> None:
        self.directory = directory
        self._secrets = secrets
        self._lock = threading.Lock()
        self._shard_names: dict[tuple[str, str], str] = {}
        self._naming: LabelNaming | None = None

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Scrub these values from names too (known only once a config is read, say)."""
        with self._lock:
            self._secrets = (*self._secrets, *secrets)

    def naming(self) -> LabelNaming:
        """The current secrets' scrubber and slugs."""
        # The secrets change only in add_secrets: the scrubber and its slugs are kept until then
        # (a thread still holding the previous naming fills only that naming's slugs).
        naming = self._naming
        if naming is None or naming.secrets is not self._secrets:
            naming = self._naming = LabelNaming(self._secrets)
        return naming

    def redactor(self) -> Scrubber:
        """The scrubber of the current secrets."""
        return self.naming().scrubber

    def stored(self, value: Mapping[str, Any]) -> Any:
        """``value`` as a recording stores it: the secrets scrubbed, every string cut to the cap of
        :mod:`pytest_omk._util.stored_text`."""
        return cap_strings(self.redactor().data(dict(value)))

    def path_name(self, kind: str, key: str, label: str) -> str:
        """The recording's path, as a string."""
        # Every call reads one: a plain string (see ``Document.path``), its shard directory (256
        # per kind) joined once.
        shard = self._shard_names.get((kind, key[:2]))
        if shard is None:
            shard = self._shard_names[(kind, key[:2])] = str(shard_dir(self.directory, kind, key))
        return f"{shard}{os.sep}{slugged_name(self.naming().slug(label), key)}"

    def path(self, kind: str, key: str, label: str) -> Path:
        """The recording's path."""
        return Path(self.path_name(kind, key, label))
