"""The contracts at the bottom of mallvi match their implementations above them."""

from __future__ import annotations

import inspect

from mallvi.contracts.guard import MotionGuard
from mallvi.robot_drivers.safety.guard import SafetyConfig, SafetyGuard


def _protocol_methods(proto: type) -> list[str]:
    return sorted(n for n, v in vars(proto).items() if inspect.isfunction(v) and not n.startswith("_"))


def test_the_safety_guard_offers_every_check_of_the_guard_contract_with_the_same_parameters() -> None:
    guard = SafetyGuard(SafetyConfig(table_top_z_m=0.75))
    assert isinstance(guard, MotionGuard)
    for name in _protocol_methods(MotionGuard):
        expected = list(inspect.signature(getattr(MotionGuard, name)).parameters)
        actual = list(inspect.signature(getattr(SafetyGuard, name)).parameters)
        assert actual == expected, f"SafetyGuard.{name}{actual} differs from the contract's {expected}"


def test_a_guard_refusal_through_the_contract_is_a_reason_not_an_exception() -> None:
    guard: MotionGuard = SafetyGuard(SafetyConfig(table_top_z_m=0.75))
    assert guard.check_gripper("left", 0.5) is None
    reason = guard.check_gripper("left", 1.5)
    assert reason is not None and "0..1" in reason
    assert guard.check_values("target", [0.1, float("nan")]) is not None
