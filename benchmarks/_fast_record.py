"""Write a replay benchmark's recordings directly, with the plugin's own code, instead of live calls.

Recording 20,000 samples through the fake server (about 70,000 HTTP calls) is set-up, not a figure,
and took over half an hour on a loaded 2-core machine. Replay only needs the files a live run would
have written, so this module writes them in-process: each sample is loaded with the plugin's loader,
its executor request is built by ``pipeline.build_request``, its judge requests by the judge's own
planning (``LLMJudge.plan_jobs`` and its request builder), keys and files by
``RecordingStore.put``. What the calls answered is copied from a small live recording of the first
few samples, made through the plugin against the same fake, and :func:`write_recordings` first
checks that for those samples it writes exactly the files the live run wrote (same paths, same
identities), so a drift in the request format fails loudly instead of measuring misses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_omk.execute.openai import chat_completions_url
from pytest_omk.judge.judge import LLMJudge
from pytest_omk.loading.load import load_file
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ResolvedText, SamplePlan
from pytest_omk.recordings.endpoints import call_identity, endpoint_key
from pytest_omk.recordings.files import read_document
from pytest_omk.recordings.store import RecordingStore
from pytest_omk.recordings.tree import RecordingTree
from pytest_omk.run.pipeline import build_request

EXECUTOR_ID = "openai"  # --omk-executor openai, and the judge's executor for --omk-judge openai


class FastRecordError(Exception):
    """The directly written recordings would not be the ones a live run writes."""


def _documents(directory: Path) -> dict[str, Any]:
    """Relative path -> parsed document of every recording under ``directory``."""
    found = {}
    tree = RecordingTree(directory)
    for kind in tree.kinds():
        for path in tree.files(kind):
            found[path.relative_to(directory).as_posix()] = read_document(path)
    return found


def _templates(live_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the fake answered an executor call and a judge call, from the live recording."""
    by_kind: dict[str, dict[str, Any]] = {}
    for document in _documents(live_dir).values():
        by_kind.setdefault(document.kind, document.result)
    if set(by_kind) != {"execute", "judge"}:
        raise FastRecordError(f"the live recording holds kinds {sorted(by_kind)}, not execute and judge")
    return by_kind["execute"], by_kind["judge"]


def _write(
    samples_file: Path,
    target: Path,
    *,
    url: str,
    model: str,
    judge_model: str,
    execute: dict[str, Any],
    judge: dict[str, Any],
) -> int:
    """Record every sample of ``samples_file`` into ``target``; returns the number of calls written."""
    bundle = load_file(samples_file)
    store = RecordingStore(target, "all")
    endpoint = endpoint_key(chat_completions_url(url))  # what the openai executor's key holds
    planner = LLMJudge(calls=None, executor=None, model=judge_model, threshold=0.5)  # type: ignore[arg-type]
    execution = ExecutionResult.model_validate(execute)
    written = 0
    for loaded in bundle.samples:
        plan = SamplePlan(
            sample=loaded.sample,
            base_dir=bundle.base_dir,
            rootdir=bundle.base_dir,
            system=None,
            model=model,
            source=loaded.source,
        )
        resolved = ResolvedText(loaded.sample.prompt, loaded.sample.context)
        request = build_request(plan, resolved)
        store.put(
            "execute",
            call_identity(EXECUTOR_ID, request, endpoint),
            execute,
            label=request.sample_id,
            source=request.source,
        )
        jobs, _ = planner.plan_jobs(plan, resolved, execution)
        for job in jobs:
            judged = planner._request(plan, job)  # the judge's own request builder (private on purpose)
            store.put(
                "judge",
                call_identity(EXECUTOR_ID, judged, endpoint),
                judge,
                label=judged.sample_id,
                source=judged.source,
            )
        written += 1 + len(jobs)
    return written


def write_recordings(
    samples_file: Path,
    target: Path,
    live_dir: Path,
    probe_file: Path,
    *,
    url: str,
    model: str,
    judge_model: str,
) -> int:
    """Write the recordings of ``samples_file`` into ``target``; returns the calls written.

    ``live_dir`` holds a live recording (through the plugin, against the fake at ``url``) of the
    samples in ``probe_file``, whose directory is laid out like the benchmark's project. Those are
    first written again into a scratch directory beside ``target`` and must match the live files.
    """
    execute, judge = _templates(live_dir)
    check = target.parent / f"{target.name}-check"
    kwargs: dict[str, Any] = {
        "url": url,
        "model": model,
        "judge_model": judge_model,
        "execute": execute,
        "judge": judge,
    }
    _write(probe_file, check, **kwargs)
    live, direct = _documents(live_dir), _documents(check)
    if set(live) != set(direct):
        raise FastRecordError(
            f"direct files {sorted(set(direct) ^ set(live))[:4]} differ from the live run's"
        )
    for name, document in live.items():
        # ``file`` (where the sample file is, seen from the recordings) is not part of the key.
        if (document.key, document.identity) != (direct[name].key, direct[name].identity):
            raise FastRecordError(f"{name}: the direct recording's identity differs from the live one")
    return _write(samples_file, target, **kwargs)
