"""Lay-down and re-grasp, in SAPIEN: a block at the front-right edge of the table, turned 0.6 rad, is reached by the
right arm only with a leaned grasp, and the leaned hand finds no IK above the red block. The lower approach fails
the same way and the benchmark's allocation rule refuses the left arm; before, the relay and the nudges followed
(the relay's taker is the refused left arm). Now the right arm lays the block down in the middle of its reach,
takes it again upright, and stacks it."""

from __future__ import annotations

import math
from types import SimpleNamespace

import sapien

from mallvi.contracts.geometry import ARM_SIDES
from mallvi.contracts.skills import FailureKind, SkillResult
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.rules.thinker.thinker import RulesThinker
from mallvi.graph.failure_memory import FailedAttempt
from mallvi.graph.schemas import ObjectRef, SceneMemory, Subtask
from mallvi.sim_bridge.sim_station import sim_reach
from mallvi.sim_bridge.world import SimWorld
from tests.integration.test_recovery_pushes_sim import _call, _seen

GREEN_XY_M = (0.30, -0.20)  # the front-right edge of the right arm's reach
GREEN_YAW_RAD = 0.6
RED_XY_M = (0.12, 0.0)


def test_a_place_the_grasping_hand_cannot_make_is_made_after_laying_the_block_down_and_taking_it_again() -> None:
    with SimWorld.create("stack_blocks_two", 0, render=False) as w:
        w.settle()
        z = float(w.objects["red_block"].entity.get_pose().p[2]) + 0.002
        turned = [math.cos(GREEN_YAW_RAD / 2), 0.0, 0.0, math.sin(GREEN_YAW_RAD / 2)]
        red = w.objects["red_block"].entity
        red.set_pose(sapien.Pose(p=[*RED_XY_M, z], q=red.get_pose().q))
        w.objects["green_block"].entity.set_pose(sapien.Pose(p=[*GREEN_XY_M, z], q=turned))
        w.settle(0.5)
        ctx = SimpleNamespace(table_top_z=w.table_top_z, gripper_holding=None,
                              reach={side: sim_reach(side) for side in ARM_SIDES})
        stack = Subtask(index=0, text="stack the green block on the red block", action="stack",
                        obj=ObjectRef(phrase="the green block", color="green", label="block"),
                        target=ObjectRef(phrase="the red block", color="red", label="block"), relation="on")
        names = ("red_block", "green_block")
        memory: list[FailedAttempt] = []
        tried: list[tuple[str, str]] = []
        for attempt in range(6):
            objs = {n: _seen(w, n) for n in names}
            plan = RulesThinker().think(stack, objs, SceneMemory(objects=list(objs.values())), attempt, None,
                                        ctx, CallLog(), failures=memory)  # type: ignore[arg-type]
            failed = None
            for i, c in enumerate(plan.calls):
                if c.skill == "grasp_actor" and c.arm == "left":  # the benchmark's allocation rule at x > 0
                    r = SkillResult.failure("the benchmark refuses the left arm", FailureKind.WRONG_ARM)
                else:
                    r = _call(w, c, "green_block")
                if not r.ok:
                    failed = FailedAttempt(strategy=plan.strategy or "usual", calls=plan.calls,
                                           object_id="green_block", pose_m=objs["green_block"].position_m,
                                           skill=c.skill, arm=c.arm, failed_call=i,
                                           kind=str(r.kind.value if r.kind else "other"), explanation=r.message[:200])
                    break
            tried.append((plan.strategy or "usual", failed.line() if failed else "ok"))
            if failed is None:
                break
            memory.append(failed)
            for arm in ARM_SIDES:  # the Actor's recovery after a failed skill
                w.skills.open_gripper(arm)
                w.skills.back_to_origin(arm)
            w.settle(0.5)
        assert "place_actor (right arm) failed [unreachable]" in tried[0][1], tried  # the leaned hand
        assert tried[-1][1] == "ok" and tried[-1][0] == "lay down and re-grasp right", tried
        g, red = w.objects["green_block"].entity.get_pose().p, w.objects["red_block"].entity.get_pose().p
        assert math.dist(g[:2], red[:2]) < 0.02 and g[2] > red[2] + 0.04, (g, red)  # on the red block
