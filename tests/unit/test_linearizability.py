"""The compare-and-swap register checker on hand-made histories, linearizable and not."""

from __future__ import annotations

import random

import pytest

from reliability.linearizability import Kind, Op, check_register


def read(process: str, invoke: int, complete: int | None, value: str | None) -> Op:
    return Op(process, Kind.READ, invoke, complete, value)


def cas(process: str, invoke: int, complete: int | None, expected: str, new: str, ok: bool | None) -> Op:
    return Op(process, Kind.CAS, invoke, complete, new, expected, ok)


def test_sequential_history_is_linearizable() -> None:
    ops = [read("a", 0, 1, "x"), cas("a", 2, 3, "x", "y", True), read("b", 4, 5, "y")]
    assert check_register(ops, "x").linearizable


def test_overlapping_operations_may_take_effect_in_either_order() -> None:
    # b's read overlaps a's swap, so it may see the old or the new value.
    for seen in ("x", "y"):
        ops = [cas("a", 0, 10, "x", "y", True), read("b", 2, 8, seen)]
        assert check_register(ops, "x").linearizable, seen


def test_read_of_an_overwritten_value_after_the_write_finished_is_rejected() -> None:
    ops = [cas("a", 0, 1, "x", "y", True), read("b", 2, 3, "x")]
    verdict = check_register(ops, "x")
    assert not verdict.linearizable
    assert "read -> x" in verdict.explanation


def test_two_swaps_from_the_same_value_both_acknowledged_is_a_lost_update() -> None:
    ops = [cas("a", 0, 10, "x", "y", True), cas("b", 0, 10, "x", "z", True)]
    assert not check_register(ops, "x").linearizable


def test_refused_swap_whose_expectation_held_throughout_is_rejected() -> None:
    ops = [cas("a", 0, 1, "x", "y", False)]
    assert not check_register(ops, "x").linearizable


def test_refused_swap_is_fine_when_a_concurrent_swap_moved_the_register_first() -> None:
    ops = [cas("a", 0, 10, "x", "y", True), cas("b", 1, 9, "x", "z", False)]
    assert check_register(ops, "x").linearizable


def test_read_of_a_value_nobody_wrote_is_rejected() -> None:
    assert not check_register([read("a", 0, 1, "ghost")], "x").linearizable


def test_unknown_outcome_may_have_happened() -> None:
    # a's swap never answered; b later reads its value: it happened.
    ops = [cas("a", 0, None, "x", "y", None), read("b", 5, 6, "y")]
    assert check_register(ops, "x").linearizable


def test_unknown_outcome_may_not_have_happened() -> None:
    ops = [cas("a", 0, None, "x", "y", None), read("b", 5, 6, "x"), cas("b", 7, 8, "x", "z", True)]
    assert check_register(ops, "x").linearizable


def test_unknown_outcome_cannot_take_effect_before_it_was_called() -> None:
    ops = [read("b", 0, 1, "y"), cas("a", 5, None, "x", "y", None)]
    assert not check_register(ops, "x").linearizable


def test_unknown_outcome_takes_effect_at_most_once() -> None:
    # y written once by a's unknown swap; the register cannot return to x and then to y again.
    ops = [
        cas("a", 0, None, "x", "y", None),
        read("b", 1, 2, "y"),
        cas("b", 3, 4, "y", "x", True),
        read("c", 5, 6, "y"),
    ]
    assert not check_register(ops, "x").linearizable


def test_reordered_acknowledged_swaps_are_rejected() -> None:
    # b's swap from y finished before a's swap to y was even called.
    ops = [cas("b", 0, 1, "y", "z", True), cas("a", 2, 3, "x", "y", True)]
    assert not check_register(ops, "x").linearizable


def test_unknown_reads_constrain_nothing() -> None:
    ops = [read("a", 0, None, "ghost"), cas("b", 1, 2, "x", "y", True)]
    assert check_register(ops, "x").linearizable


def _random_linearizable_history(rng: random.Random, processes: int, steps: int) -> list[Op]:
    """Clients on a real register: each operation takes effect at a random instant inside its own
    interval, and is answered as the register stood then; linearizable by construction."""
    planned: list[tuple[int, int, int, str, Kind]] = []  # (effect, start, end, process, kind)
    free_at = [0] * processes
    for _ in range(steps):
        process = rng.randrange(processes)
        start = free_at[process] + rng.randrange(0, 30)
        effect = start + rng.randrange(0, 20)
        end = effect + rng.randrange(0, 20)
        free_at[process] = end + 1
        planned.append((effect, start, end, f"p{process}", Kind.CAS if rng.random() < 0.6 else Kind.READ))
    planned.sort()
    value, written, ops = "v0", 0, []
    for _effect, start, end, proc, kind in planned:
        if kind is Kind.READ:
            ops.append(read(proc, start, end, value))
            continue
        written += 1
        expected = value if rng.random() < 0.7 else f"v{rng.randrange(written)}"
        ok = expected == value
        ops.append(cas(proc, start, end, expected, f"v{written}", ok))
        value = f"v{written}" if ok else value
    return ops


@pytest.mark.parametrize("seed", range(20))
def test_simulated_linearizable_histories_are_accepted(seed: int) -> None:
    ops = _random_linearizable_history(random.Random(seed), processes=4, steps=300)
    assert check_register(ops, "v0").linearizable


@pytest.mark.parametrize("seed", range(10))
def test_a_corrupted_simulated_history_is_rejected(seed: int) -> None:
    """Flip one acknowledged swap to "refused" while keeping what followed: the register then
    answered later operations with a value nobody wrote."""
    rng = random.Random(seed)
    ops = _random_linearizable_history(rng, processes=4, steps=300)
    swaps = [i for i, o in enumerate(ops) if o.kind is Kind.CAS and o.ok]
    victim = ops[swaps[len(swaps) // 2]]
    ops[swaps[len(swaps) // 2]] = cas(
        victim.process, victim.invoke_ns, victim.complete_ns, victim.expected or "", victim.value or "", False
    )
    assert not check_register(ops, "v0").linearizable


def test_large_concurrent_history_is_checked_quickly() -> None:
    ops = _random_linearizable_history(random.Random(7), processes=8, steps=20_000)
    verdict = check_register(ops, "v0")
    assert verdict.linearizable
    assert verdict.configurations < 40 * len(ops)
