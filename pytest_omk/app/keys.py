"""The placeholder API key an app is given when none is set, and the refusal of a live call made
with it.

SDKs refuse to build a client without a key, so an app is given a placeholder in every record
mode when the provider's key variable is empty: a teammate without a key can replay committed
recordings. The placeholder is never sent upstream: a call that has to go live with it (a miss in
a recording mode) is refused with one line naming the variable to set. No pytest here.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_omk.errors import ReplayMissError

REPLAY_KEY = "pytest-omk-replay-only"
"""The API key an app is given when none is set: SDKs refuse to start without one, and the
gateway never sends it anywhere."""
KEY_NAMES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
KEY_VARIABLES = tuple(KEY_NAMES.values())
_KEY_HEADERS = ("authorization", "x-api-key", "api-key")


def placeholder_keys(environ: Mapping[str, str]) -> dict[str, str]:
    """The placeholder for every provider key variable that is not set."""
    return {name: REPLAY_KEY for name in KEY_VARIABLES if not environ.get(name)}


def refuse_placeholder(headers: Mapping[str, str], api: object) -> None:
    """Raise (as a miss: the sample's one-line error) when a live call carries the placeholder."""
    if any(REPLAY_KEY in headers.get(name, "") for name in _KEY_HEADERS):
        variable = KEY_NAMES.get(str(api), "the provider's API key")
        raise ReplayMissError(f"no API key for a live call; set {variable} or record first")
