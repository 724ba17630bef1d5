"""The file-name part a recording takes from its call's label (the sample id), made once per label.

A recording is named ``<slug>-<16 hex>.json`` (:mod:`.files`); the slug is the label scrubbed of
the run's secrets and rendered in lower-case ASCII. No pytest here.
"""

from __future__ import annotations

from pytest_omk.recordings.files import slugify
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
