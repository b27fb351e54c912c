"""Budgets per client (kernelindex.core.budgets): exact at the boundary, refilled by the clock, one client's spending
leaves another's whole, and memory stays bounded however many clients come."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from kernelindex.core.budgets import MAX_CLIENTS, Account, Budgets, Policy
from kernelindex.core.shared_budgets import SharedBudgets


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_at_the_budget_passes_and_one_point_past_is_refused(clock: Clock) -> None:
    budgets = Budgets(Policy(capacity=1000, rate=10), clock=clock)
    assert budgets.charge("a", 999).granted
    assert budgets.charge("a", 1).granted  # exactly the budget
    refused = budgets.charge("a", 1)
    assert not refused.granted and refused.available == 0 and refused.retry_after == 1
    assert budgets.peek("a").available == 0  # a refused charge takes nothing


def test_a_refused_charge_takes_nothing_and_says_when_it_could_be_paid(clock: Clock) -> None:
    budgets = Budgets(Policy(capacity=1000, rate=10), clock=clock)
    budgets.charge("a", 900)
    refused = budgets.charge("a", 101)  # one point past what is left
    assert not refused.granted and refused.available == 100
    assert refused.retry_after == 1  # 1 point at 10 a second: 0.1 s, rounded up
    assert budgets.charge("a", 100).granted


def test_the_bucket_refills_at_its_rate_up_to_its_size(clock: Clock) -> None:
    budgets = Budgets(Policy(capacity=1000, rate=10), clock=clock)
    budgets.charge("a", 1000)
    clock.now += 5
    assert not budgets.charge("a", 51).granted
    assert budgets.charge("a", 50).granted
    clock.now += 10_000
    assert budgets.peek("a").available == 1000
    assert budgets.charge("a", 1000).granted and not budgets.charge("a", 1).granted


def test_another_client_is_unaffected(clock: Clock) -> None:
    budgets = Budgets(Policy(capacity=1000, rate=10), clock=clock)
    budgets.charge("greedy", 1000)
    assert not budgets.charge("greedy", 1).granted
    assert budgets.charge("polite", 1000).granted


def test_a_full_bucket_is_no_bucket(clock: Clock) -> None:
    budgets = Budgets(Policy(capacity=1000, rate=10), clock=clock)
    budgets.charge("a", 10)
    assert len(budgets) == 1
    clock.now += 1  # full again
    budgets.charge("b", 10)  # a charge drops the least recently used bucket that is full again
    assert len(budgets) == 1


def test_an_account_reports_what_it_was_charged_in_headers_and_throttle_status(clock: Clock) -> None:
    account = Account(Budgets(Policy(capacity=1000, rate=10), clock=clock), "a")
    assert account.charge(300) and account.charge(200) and not account.charge(501)
    assert account.charged == 500
    assert account.throttle_status() == {"maximumAvailable": 1000, "currentlyAvailable": 500, "restoreRate": 10}
    assert account.headers() == [
        (b"ratelimit-policy", b'"cost";q=1000;w=100;qu="cost-points"'),
        (b"ratelimit", b'"cost";r=500;t=50'),
    ]


def test_memory_stays_bounded_after_100000_clients(clock: Clock) -> None:
    """Each of 100,000 addresses spends at once (no bucket is full again): at most `max_clients` buckets are kept, and
    the memory they hold is that of `max_clients` buckets, not of 100,000 (measured with tracemalloc, not timed)."""
    bound = 10_000
    budgets = Budgets(Policy(capacity=1000, rate=0.001), clock=clock, max_clients=bound)
    gc.collect()
    tracemalloc.start()
    try:
        for n in range(100_000):
            budgets.charge(f"ip:10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}", 1)
            if n == bound - 1:
                at_bound, _ = tracemalloc.get_traced_memory()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(budgets) == bound
    assert at_bound < bound * 400  # a few hundred bytes a bucket
    assert after < at_bound * 1.5  # 90,000 more clients: not 10 times as much, about the same
    assert MAX_CLIENTS * 400 < 32 * 1024 * 1024  # the default bound holds some MB, at most


def test_workers_sharing_a_table_spend_one_budget(clock: Clock, tmp_path: Path) -> None:
    """Two workers' views of one file (kernelindex.core.shared_budgets): what one charged, the other sees, exactly."""
    one = SharedBudgets(tmp_path / "budgets", Policy(capacity=1000, rate=10), clock=clock)
    two = SharedBudgets(tmp_path / "budgets", Policy(capacity=1000, rate=10), clock=clock)
    try:
        assert one.charge("ip:a", 600).granted
        assert not two.charge("ip:a", 401).granted  # one point past what is left
        assert two.charge("ip:a", 400).granted  # exactly what is left
        assert not one.charge("ip:a", 1).granted
        assert two.charge("ip:b", 1000).granted  # another client: its own budget
        clock.now += 0.1
        assert one.charge("ip:a", 1).granted and not two.charge("ip:a", 1).granted
        clock.now += 200  # full again: its slot is free
        assert len(one) == 0 and one.peek("ip:a").available == 1000
    finally:
        one.close()
        two.close()


def test_a_shared_table_is_bounded(clock: Clock, tmp_path: Path) -> None:
    table = SharedBudgets(tmp_path / "budgets", Policy(capacity=1000, rate=0.001), clock=clock, slots=64)
    try:
        for n in range(1000):
            assert table.charge(f"ip:{n}", 1).granted
        assert len(table) <= 64
        assert (tmp_path / "budgets").stat().st_size == 64 * 24
    finally:
        table.close()
