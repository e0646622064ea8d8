"""Contingency levels: parsing, validation and seeded fault draws."""

import pytest

from mallvi.sim_bridge.contingency_profile import (
    ContingencySpecError,
    draw_fault,
    fault_rng,
    parse_contingency,
)


def test_named_levels_have_the_documented_success_rates() -> None:
    for name, success in (("easy", 1.0), ("medium", 0.5), ("hard", 0.2)):
        p = parse_contingency(name)
        assert p.grasp_miss + p.grasp_slip == pytest.approx(1 - success)
        assert p.place_off + p.knock_over == pytest.approx(1 - success)


def test_medium_level_fails_about_half_of_the_grasps() -> None:
    rng = fault_rng("stack_blocks_three", 100000, "medium")
    profile = parse_contingency("medium")
    faults = [draw_fault(rng, profile, "grasp") for _ in range(4000)]
    failed = sum(f is not None for f in faults) / len(faults)
    assert 0.46 < failed < 0.54
    assert {"grasp_miss", "grasp_slip"} <= set(faults)


def test_same_episode_draws_the_same_faults_and_others_differ() -> None:
    profile = parse_contingency("hard")

    def draws(task: str, seed: int) -> list[str | None]:
        rng = fault_rng(task, seed, "hard")
        return [draw_fault(rng, profile, "place") for _ in range(50)]

    assert draws("blocks_ranking_rgb", 7) == draws("blocks_ranking_rgb", 7)
    assert draws("blocks_ranking_rgb", 7) != draws("blocks_ranking_rgb", 8)


def test_custom_level_and_clear_errors() -> None:
    p = parse_contingency("grasp_slip=0.3, place_off=0.1")
    assert (p.grasp_slip, p.place_off, p.grasp_miss) == (0.3, 0.1, 0.0)
    with pytest.raises(ContingencySpecError, match="unknown contingency level 'extreme'"):
        parse_contingency("extreme")
    with pytest.raises(ContingencySpecError, match="unknown fault kind 'teleport'"):
        parse_contingency("teleport=0.5")
    with pytest.raises(ContingencySpecError, match=r"within 0\.\.1"):
        parse_contingency("grasp_slip=1.5")
    with pytest.raises(ContingencySpecError, match="must not exceed 1"):
        parse_contingency("grasp_slip=0.6,grasp_miss=0.6")
