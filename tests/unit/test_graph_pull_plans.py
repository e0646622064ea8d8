"""Which objects the rules Thinker pulls or drags back from the back of the table, by which arm, in which order."""

from __future__ import annotations

from mallvi.graph.backends.rules.thinker.pull import _approach, pulls
from mallvi.graph.backends.rules.thinker.strategies import EE_ABOVE_GRASP_CENTRE_M
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


def test_nothing_in_front_of_the_back_and_a_bar_standing_up_is_toppled_not_pulled() -> None:
    assert _ways(_obj(0.10, 0.05, (0.20, 0.06, 0.06))) == []
    assert _ways(_obj(0.10, 0.05, (0.06, 0.06, 0.20))) == []
    # standing: the leaned hand would meet it at its foot; it hooks its top edge instead, where that was reached
    assert _ways(_obj(0.19, 0.15, (0.06, 0.06, 0.20))) == ["topple right"]
    assert _ways(_obj(-0.19, 0.20, (0.06, 0.06, 0.20))) == ["topple left"]
    assert _ways(_obj(0.02, 0.20, (0.06, 0.06, 0.20))) == []  # in the middle neither arm's hook had IK
    assert _ways(_obj(0.19, 0.25, (0.06, 0.06, 0.20))) == []  # the hook would lie past 0.27 m


def test_a_topple_hooks_the_far_top_edge_and_draws_it_towards_the_robot() -> None:
    bar = _obj(0.18, 0.20, (0.06, 0.06, 0.20))
    plan = pulls(bar, TABLE_Z)[0]
    assert [c.skill for c in plan.calls][:3] == ["close_gripper", "move_to_pose", "move_by_displacement"]
    draws = [c.args for c in plan.calls[3:] if c.skill == "move_by_displacement" and "y" in c.args]
    assert draws and sum(float(d["y"]) for d in draws) <= -0.10  # far enough to tip a 0.20 m bar past its edge
    # after coming down, the grasp centre lies behind the far face and below the top
    target = plan.calls[1].target_pose or []
    ay, az = _approach()
    gy = target[1] + EE_ABOVE_GRASP_CENTRE_M * ay
    gz = target[2] + EE_ABOVE_GRASP_CENTRE_M * az + float(plan.calls[2].args["z"])
    assert 0.23 < gy < 0.25
    assert TABLE_Z + 0.15 < gz < TABLE_Z + 0.20


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
