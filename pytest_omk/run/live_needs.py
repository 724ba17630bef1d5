"""Which selected samples will need a live call: asked only when an API key is missing.

A sample's executor call replays when every ``--omk-repeat`` round of its request has a recording.
The request is rebuilt here as the run will build it, from the sample's literal text; a sample
with URLs in its prompt or context sends text only known after resolving them, so it is assumed
to replay (never a false usage error: a real miss then fails that item alone, as before).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from pytest_omk.execute.base import Executor
from pytest_omk.execute.calls import executor_endpoint
from pytest_omk.models.run import ResolvedText, SamplePlan
from pytest_omk.recordings.endpoints import call_identity
from pytest_omk.recordings.store import RecordingStore
from pytest_omk.run.pipeline import build_request


class Planned(Protocol):
    """A selected sample as the pytest layer holds it (its item): its id and its plan."""

    @property
    def nodeid(self) -> str:
        """The item's node id."""
        ...

    @property
    def plan(self) -> SamplePlan:
        """What the sample will ask."""
        ...


@dataclass(frozen=True)
class LiveNeeds:
    """``labels`` (node ids) to ask about, and ``recorded(label)``: whether that item replays."""

    labels: list[str]
    recorded: Callable[[str], bool]


def recorded_here(
    store: RecordingStore, executor: Executor, items: Sequence[Planned], repeat: int
) -> LiveNeeds:
    """The :class:`LiveNeeds` of ``executor``'s calls for ``items`` against ``store``."""
    by_id = {item.nodeid: item for item in items}
    endpoint = executor_endpoint(executor)

    def recorded(nodeid: str) -> bool:
        plan = by_id[nodeid].plan
        sample = plan.sample
        if "://" in sample.prompt or "://" in (sample.context or ""):
            return True
        text = ResolvedText(sample.prompt, sample.context)
        for index in range(repeat):
            request = build_request(replace(plan, repeat=index), text)
            identity = call_identity(executor.id, request, endpoint)
            if store.get(request.purpose, identity, label=request.sample_id) is None:
                return False
        return True

    return LiveNeeds(list(by_id), recorded)


def judged(items: Sequence[Planned]) -> list[str]:
    """Node ids of the items whose grading asks the judge (a rubric, or an LLM-scored assertion)."""
    from pytest_omk.judge.judge import JUDGED_ASSERTIONS

    def asks(item: Planned) -> bool:
        sample = item.plan.sample
        return bool(sample.rubric) or any(isinstance(a, JUDGED_ASSERTIONS) for a in sample.assertions or [])

    return [item.nodeid for item in items if asks(item)]
