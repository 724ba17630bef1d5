"""The prefetch window: samples started in order, topped up in batches, never more than its size."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_omk.run.prefetch import WINDOW_MIN, PrefetchWindow, refill_mark, window_size


@dataclass(frozen=True)
class Item:
    nodeid: str


class Host:
    """Stands in for the session: started items wait until :meth:`take` hands one to its setup."""

    def __init__(self, skipped: frozenset[str] = frozenset()) -> None:
        self.started: list[str] = []
        self.waiting: list[str] = []
        self.seen: set[str] = set()
        self.skipped = skipped

    def start(self, item: Item) -> bool:
        if item.nodeid in self.skipped:
            return False
        self.started.append(item.nodeid)
        self.waiting.append(item.nodeid)
        return True

    def take(self, nodeid: str) -> None:
        self.seen.add(nodeid)
        if nodeid in self.waiting:
            self.waiting.remove(nodeid)


def window(host: Host, count: int, size: int, refill_at: int) -> tuple[list[Item], PrefetchWindow[Item]]:
    items = [Item(f"i{n}") for n in range(count)]
    made = PrefetchWindow(
        items,
        size,
        refill_at,
        start=host.start,
        waiting=lambda: len(host.waiting),
        seen=host.seen.__contains__,
    )
    return items, made


def test_fills_to_its_size_in_order_and_tops_up_in_one_batch_at_the_mark() -> None:
    host = Host()
    _, made = window(host, 20, size=5, refill_at=2)
    made.fill()
    assert host.started == ["i0", "i1", "i2", "i3", "i4"]
    host.take("i0")
    made.fill()
    host.take("i1")
    made.fill()
    assert len(host.started) == 5  # three still waiting: above the mark, nothing started
    host.take("i2")
    made.fill()
    assert host.started == [f"i{n}" for n in range(8)]  # back to five waiting, in order


def test_never_more_than_size_waiting_and_every_item_started_once() -> None:
    host = Host(skipped=frozenset({"i3", "i7"}))
    items, made = window(host, 30, size=4, refill_at=1)
    made.fill()
    for item in items:
        assert len(host.waiting) <= 4
        host.take(item.nodeid)
        made.fill()
    assert host.started == [i.nodeid for i in items if i.nodeid not in {"i3", "i7"}]


def test_an_item_set_up_before_the_window_reached_it_is_not_started_again() -> None:
    host = Host()
    _, made = window(host, 10, size=3, refill_at=0)
    host.seen.add("i1")  # its setup started its own calls on demand
    made.fill()
    assert host.started == ["i0", "i2", "i3"]


def test_sizes_follow_the_concurrency() -> None:
    assert window_size(1) == WINDOW_MIN
    assert window_size(100) == 800
    assert refill_mark(32) == 64
    assert refill_mark(32) < window_size(32)
