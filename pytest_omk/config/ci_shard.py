"""``--omk-shard auto``: this job's K and N from the CI system's own parallel-job variables.

Each CI system that runs one job N times side by side tells every copy which one it is. The
systems count differently (GitLab and Azure Pipelines from 1, CircleCI, Buildkite and a Kubernetes
Indexed Job from 0); this module reads them all, turns each into a 1-based :class:`Shard` and
refuses what it cannot trust: no system's variables, one variable of a pair without the other, a
value that is no number or out of range, or two systems naming different shards.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_omk.config.shard import Shard
from pytest_omk.errors import ConfigError


@dataclass(frozen=True)
class CiSystem:
    """One CI system's pair of variables and the number its first job gets."""

    name: str
    index: str
    total: str
    base: int


CI_SYSTEMS: tuple[CiSystem, ...] = (
    CiSystem("GitLab", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1),
    CiSystem("CircleCI", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),
    CiSystem("Buildkite", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0),
    CiSystem("Azure Pipelines", "SYSTEM_JOBPOSITIONINPHASE", "SYSTEM_TOTALJOBSINPHASE", 1),
    CiSystem("Kubernetes Indexed Job", "JOB_COMPLETION_INDEX", "OMK_SHARD_TOTAL", 0),
)


@dataclass(frozen=True)
class CiShard:
    """The shard ``auto`` chose and what it read (``GitLab CI_NODE_INDEX=2 CI_NODE_TOTAL=4``)."""

    shard: Shard
    source: str


def every_variable() -> str:
    """Every pair ``auto`` reads, for the errors that name them."""
    return "; ".join(f"{s.index}/{s.total} ({s.name})" for s in CI_SYSTEMS)


def _number(system: CiSystem, name: str, raw: str) -> int:
    text = raw.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        raise ConfigError(f"--omk-shard auto: {name}={raw[:20]!r} ({system.name}) must be a whole number")
    return int(text)


def _read(system: CiSystem, env: Mapping[str, str]) -> CiShard | None:
    """This system's shard, ``None`` when it set neither variable (or only a total of 1)."""
    index_raw, total_raw = env.get(system.index), env.get(system.total)
    if index_raw is None and total_raw is None:
        return None
    if total_raw is None:
        raise ConfigError(
            f"--omk-shard auto: {system.index} is set but {system.total} is not ({system.name})"
        )
    total = _number(system, system.total, total_raw)
    if index_raw is None:
        # GitLab and CircleCI set the total (1) in every job, parallel or not.
        if total == 1:
            return None
        raise ConfigError(
            f"--omk-shard auto: {system.total}={total} is set but {system.index} is not ({system.name})"
        )
    index = _number(system, system.index, index_raw) - system.base + 1
    if total < 1 or not 1 <= index <= total:
        first = system.base
        raise ConfigError(
            f"--omk-shard auto: {system.index}={index_raw.strip()} with {system.total}={total} is out of "
            f"range ({system.name} counts jobs from {first} to {total - 1 + first})"
        )
    source = f"{system.name} {system.index}={index_raw.strip()} {system.total}={total}"
    return CiShard(Shard(index, total), source)


def shard_from_ci(env: Mapping[str, str]) -> CiShard:
    """The shard the CI's variables in ``env`` name; :class:`ConfigError` when none do or two disagree."""
    found = [shard for system in CI_SYSTEMS if (shard := _read(system, env)) is not None]
    if not found:
        raise ConfigError(
            "--omk-shard auto: no CI parallel-job variables are set; it reads "
            f"{every_variable()} (or give --omk-shard K/N)"
        )
    first = found[0]
    for other in found[1:]:
        if other.shard != first.shard:
            raise ConfigError(
                f"--omk-shard auto: the CI variables disagree: {first.source} is shard {first.shard} but "
                f"{other.source} is shard {other.shard} (give --omk-shard K/N)"
            )
    return CiShard(first.shard, ", ".join(shard.source for shard in found))
