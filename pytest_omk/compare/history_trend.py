"""The trend of a :class:`~pytest_omk.compare.history.History`: runs in order, sample sets, states, slides."""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence

from pytest_omk.compare.history import MISSING, History, RunData, SampleKey
from pytest_omk.compare.history_states import (
    ABSENT,
    MARKS,
    STATE_ORDER,
    sample_state,
    slide,
    window_means,
    windows,
)
from pytest_omk.models.history import (
    LAYERS,
    TREND_SCHEMA_VERSION,
    SampleSet,
    SampleTrend,
    Sliding,
    TrendDocument,
    TrendRun,
)


def key_text(key: tuple[str, str | None]) -> str:
    """A sample key as shown: its node id, and its variant in brackets when it has one."""
    return key[0] if key[1] is None else f"{key[0]} [{key[1]}]"


def sample_sets(runs: Sequence[RunData], keys: Mapping[SampleKey, int]) -> tuple[list[SampleSet], list[int]]:
    """The sample sets in order of first appearance (one per ``collection`` digest), and each run's.

    A set's samples are those of its first run; ``added``/``removed`` compare them with the set
    before it, so that a change of sample set is shown, never silently mixed into one line.
    """
    names = {sid: key_text(key) for key, sid in keys.items()}
    index: dict[str | None, int] = {}
    members: list[set[int]] = []
    sets: list[SampleSet] = []
    of_run: list[int] = []
    for number, run in enumerate(runs, start=1):
        if run.digest not in index:
            index[run.digest] = len(sets) + 1
            current = set(run.ids)
            before = members[-1] if members else current
            sets.append(
                SampleSet(
                    index=len(sets) + 1,
                    digest=run.digest,
                    runs=[],
                    added=sorted(names[s] for s in current - before),
                    removed=sorted(names[s] for s in before - current),
                )
            )
            members.append(current)
        sets[index[run.digest] - 1].runs.append(number)
        of_run.append(index[run.digest])
    return sets, of_run


def sliding(
    runs: Sequence[RunData], keys: Mapping[SampleKey, int], set_of_run: Sequence[int], window: int
) -> list[Sliding]:
    """Per layer with paired samples: its last ``window`` runs against the ``window`` before them."""
    spans = windows(len(runs), window)
    if spans is None:
        return []
    # Keyed by the sample's key in key order: the bootstrap draws do not depend on reading order.
    order = sorted(keys.items(), key=lambda item: (item[0][0], item[0][1] or ""))
    mixed = len({set_of_run[r - 1] for r in spans.recent + spans.previous}) > 1
    found = []
    for layer in LAYERS:
        previous = window_means([runs[r - 1].column(layer) for r in spans.previous])
        recent = window_means([runs[r - 1].column(layer) for r in spans.recent])
        before = {key: previous[sid] for key, sid in order if sid in previous}
        after = {key: recent[sid] for key, sid in order if sid in recent}
        result = slide(before, after)
        if result.pairs == 0:
            continue
        found.append(
            Sliding(
                layer=layer,
                recentRuns=spans.recent,
                previousRuns=spans.previous,
                pairs=result.pairs,
                meanDifference=result.mean_difference,
                interval=list(result.interval) if result.interval else None,
                sliding=result.sliding,
                acrossSampleSets=mixed,
            )
        )
    return found


def ordered(runs: list[RunData]) -> list[RunData]:
    """The runs by ``startedAt`` (then by path, so that equal times still give one order)."""
    return sorted(runs, key=lambda run: (run.started, run.path))


def build_trend(history: History, *, window: int) -> TrendDocument:
    """The trend of ``history``'s runs, ordered by start time (see the modules' docstrings).

    It consumes ``history``: each run's per-sample arrays are released once read (the samples'
    trends hold the same values, and both at once would raise the peak memory by a third).
    """
    runs = ordered(history.runs)
    sets, set_of_run = sample_sets(runs, history.keys)
    slides = sliding(runs, history.keys, set_of_run, window)
    counts = [len(run.ids) for run in runs]
    marks, composites, flaky = _transposed(runs, len(history.keys))
    names = sorted(history.keys, key=lambda key: (key[0], key[1] or ""))
    samples = []
    for key in names:
        sid = history.keys[key]
        samples.append(_sample_trend(key, marks[sid], composites[sid], sid in flaky))
    samples.sort(key=lambda s: STATE_ORDER.index(s.state))
    return TrendDocument(
        schemaVersion=TREND_SCHEMA_VERSION,
        window=window,
        runs=[
            TrendRun(
                index=i,
                path=run.path,
                startedAt=run.started_text,
                sampleSet=set_of_run[i - 1],
                samples=counts[i - 1],
                outcomes=run.outcomes,
                layers=run.layers,
            )
            for i, run in enumerate(runs, start=1)
        ],
        sampleSets=sets,
        samples=samples,
        sliding=slides,
    )


def _transposed(runs: list[RunData], count: int) -> tuple[list[bytearray], list[array[int]], set[int]]:
    """Per sample id: its mark in each run, its composite in each run, and whether repeats flapped."""
    marks = [bytearray(len(runs)) for _ in range(count)]
    composites = [array("h", [MISSING]) * len(runs) for _ in range(count)]
    flaky: set[int] = set()
    for r, run in enumerate(runs):
        for sid, mark, score in zip(run.ids, run.marks, run.scores["composite"], strict=True):
            marks[sid][r] = mark
            composites[sid][r] = score
        flaky |= run.repeated_flaky
        run.release()
    return marks, composites, flaky


_SCORES: dict[int, float] = {hundredths: hundredths / 100 for hundredths in range(100, 501)}
"""Every score a run can hold (1.00 to 5.00 in hundredths) as one shared float; missing is ``None``."""


def _sample_trend(key: SampleKey, marks: bytearray, composite: array[int], flaky: bool) -> SampleTrend:
    state = sample_state(marks, repeated_flaky=flaky)
    present = [r for r, mark in enumerate(marks, start=1) if mark != ABSENT]
    # Built from checked values without validating them again: a thousand runs of a thousand
    # samples are two million list items, which validation would copy (and every score its own
    # float object; the ones here come from one table of the 401 possible scores).
    return SampleTrend.model_construct(
        nodeid=key[0],
        variant=key[1],
        state=state.state,
        since=state.since,
        flips=state.flips,
        outcomes=[MARKS[m] for m in marks],
        composite=[_SCORES.get(s) for s in composite],
        repeatedFlaky=flaky,
        firstRun=present[0] if present else None,
        lastRun=present[-1] if present else None,
    )
