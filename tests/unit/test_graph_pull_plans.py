"""Which objects the rules Thinker pulls or drags back from the back of the table, by which arm, in which order."""

from __future__ import annotations

from mallvi.graph.backends.rules.pull import pulls
from mallvi.graph.schemas import SceneObject

TABLE_Z = 0.74


def _obj(x: float, y: float, size: tuple[float, float, float]) -> SceneObject:
    return SceneObject(id="red_block", label="block", color="red", position_m=(x, y, TABLE_Z + size[2] / 2),
                       size_m=size)


def _ways(obj: SceneObject) -> list[str]:
    return [p.strategy or "" for p in pulls(obj, TABLE_Z)]


def test_a_bar_lying_across_at_the_back_is_pulled_first_one_lying_along_is_dragged_first() -> None:
    assert _ways(_obj(0.12, 0.23, (0.20, 0.06, 0.06))) == ["pull right", "drag right"]
    # along y its far face lies past the reach of the pull: only the drag by its near end
    assert _ways(_obj(0.12, 0.23, (0.06, 0.20, 0.06))) == ["drag right"]


def test_only_an_arm_the_allocation_rule_lets_grasp_drags_either_arm_may_pull() -> None:
    assert _ways(_obj(0.19, 0.15, (0.20, 0.06, 0.06))) == ["pull right", "drag right"]
    assert _ways(_obj(0.04, 0.20, (0.05, 0.05, 0.05))) == ["pull right", "pull left", "drag right", "drag left"]
    assert _ways(_obj(-0.12, 0.22, (0.20, 0.06, 0.06))) == ["pull left", "drag left"]
    # at x = 0.10 the rule still lets the left arm grasp (refused only past 0.10)
    assert _ways(_obj(0.10, 0.23, (0.06, 0.20, 0.06))) == ["drag right", "drag left"]


def test_nothing_in_front_of_the_back_and_nothing_for_a_bar_standing_up() -> None:
    assert _ways(_obj(0.10, 0.05, (0.20, 0.06, 0.06))) == []
    assert _ways(_obj(0.19, 0.15, (0.06, 0.06, 0.20))) == []  # standing: the leaned hand meets it


def test_a_pull_comes_down_behind_the_far_face_and_draws_towards_the_robot() -> None:
    plan = pulls(_obj(0.10, 0.23, (0.20, 0.06, 0.06)), TABLE_Z)[0]
    skills = [c.skill for c in plan.calls]
    assert skills[:3] == ["close_gripper", "move_to_pose", "move_by_displacement"]
    draws = [float(y) for c in plan.calls if c.skill == "move_by_displacement"
             and isinstance(y := c.args.get("y"), int | float)]
    assert len(draws) == 3 and all(d < 0 for d in draws)
    assert abs(sum(draws) + 0.12) < 1e-9
    target = plan.calls[1].target_pose or []
    assert target[1] < 0.35  # the hand itself stays over the table
