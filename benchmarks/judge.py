"""Judge: N samples × 3 rubric dimensions plus the executor call, 250 ms a call, concurrency 32.

A sample's judge calls can start only once its executor call has answered, so no schedule beats
two latencies for any sample; the ideal is max(total calls × latency ÷ concurrency, 2 × latency).
The judge (``--omk-judge openai``) and the model under test share the loopback fake, which
answers judge prompts with a valid score.
"""

from __future__ import annotations

from benchmarks import _support as s
from benchmarks.samples import CANNED_OUTPUT, make_samples, write_samples

FULL, QUICK = 100, 40
DIMENSIONS = 3
LATENCY = 0.25
CONCURRENCY = 32
REPEATS = 3


def ideal_seconds(samples: int, calls_per_sample: int, latency: float, concurrency: int) -> float:
    """Throughput bound or critical path (executor, then judge), whichever is longer."""
    return max(samples * calls_per_sample * latency / concurrency, 2 * latency)


def run(quick: bool) -> list[s.Row]:
    count = QUICK if quick else FULL
    calls = count * (1 + DIMENSIONS)
    with s.workdir("judge") as root:
        s.project_file(root)
        write_samples(root, make_samples(count, rubric=DIMENSIONS))
        with s.fake_llm(root, s.fake_script(latency=LATENCY, reply=CANNED_OUTPUT)) as url:
            runs = []
            for _ in range(REPEATS):
                result = s.run_pytest(
                    *s.live_args(CONCURRENCY, judge=True),
                    cwd=root,
                    env=s.openai_env(url),
                    expect={"passed": count},
                )
                s.check_calls(result, live=calls)
                runs.append(result)
    result = min(runs, key=s.session_seconds)
    seconds = s.session_seconds(result)
    ideal = ideal_seconds(count, 1 + DIMENSIONS, LATENCY, CONCURRENCY)
    return [
        s.target_row(
            f"{count} samples × (1 + {DIMENSIONS} judge) calls, concurrency {CONCURRENCY}",
            seconds,
            ideal,
            reference_label="ideal",
            limit=1.3,
            figure=f"{s.fmt(seconds)} (wall {s.fmt(result.wall)})",
            notes=[
                f"judge: best of {REPEATS}; {calls} calls × {LATENCY * 1000:.0f} ms; ideal = max({calls} × {LATENCY:g} s ÷ "
                f"{CONCURRENCY}, 2 × {LATENCY:g} s); peak RSS {result.peak_rss_mb:.0f} MB"
            ],
        )
    ]
