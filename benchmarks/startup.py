"""Start-up: what having the plugin installed costs a project's plain test run (no sample files).

Every pytest run in a project with pytest-omk installed loads the plugin, whether or not it
collects a sample file: a unit-test run, an IDE's test discovery, a pre-commit hook. Three
variants of the same one-test project run interleaved, :data:`ROUNDS` times each, medians used:

- pytest alone (the floor);
- with the plugin loaded (``-p pytest_omk.plugin``);
- with the plugin loaded and ``--omk-executor openai`` set, as a project's ini file would set it.

Interpreter start and pytest's own start-up are in every figure; the ratios are what the plugin
adds to the shortest run a user waits for.
"""

from __future__ import annotations

from benchmarks import _support as s

ROUNDS, QUICK_ROUNDS = 9, 5

PLAIN_TEST = "def test_plain():\n    assert True\n"


def run(quick: bool) -> list[s.Row]:
    rounds = QUICK_ROUNDS if quick else ROUNDS
    with s.workdir("startup") as root:
        s.project_file(root)
        (root / "test_plain.py").write_text(PLAIN_TEST, encoding="utf-8")
        variants: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
            "pytest alone": ((), ()),
            "plugin loaded": (("pytest_omk.plugin",), ()),
            "plugin loaded, executor set": (
                ("pytest_omk.plugin",),
                ("--omk-executor", "openai", "--omk-judge", "openai"),
            ),
        }
        runs: dict[str, list[s.RunResult]] = {name: [] for name in variants}
        names = list(variants)
        for index in range(rounds):
            for name in s.rotated(names, index):
                plugins, args = variants[name]
                runs[name].append(s.run_pytest("-q", *args, cwd=root, plugins=plugins, expect={"passed": 1}))
    floor = s.median_run(runs["pytest alone"]).wall
    walls = "; ".join(f"{name} {s.walls(runs[name])} s" for name in names)
    notes = (f"startup: walls of {rounds} interleaved runs — {walls}; medians used",)
    return [
        s.target_row(
            f"a plain one-test run, {name} vs pytest alone",
            s.median_run(runs[name]).wall,
            floor,
            reference_label="pytest alone",
            notes=notes if name == names[-1] else (),
        )
        for name in names[1:]
    ]
