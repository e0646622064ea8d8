"""Pushes that keep a block within reach, in SAPIEN: after a miss left a block at the front edge of the right arm's
reach, the next attempt pushes it back towards the middle before grasping it (before, the grasp was tried where it
lay, and the next miss pushed it out of every arm's reach), and the push and the carry that follows succeed."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import sapien

from mallvi.contracts.geometry import ARM_SIDES
from mallvi.contracts.skills import FailureKind, SkillResult
from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.rules.thinker.thinker import RulesThinker
from mallvi.graph.failure_memory import FailedAttempt
from mallvi.graph.schemas import ObjectRef, SceneMemory, SceneObject, SkillCall, Subtask
from mallvi.sim_bridge.sim_station import sim_reach
from mallvi.sim_bridge.world import SimWorld

RED_XY_M = (0.08, 0.0)  # the block to stack on, within the right arm's reach
EDGE_XY_M = (0.20, -0.14)  # inside the right arm's reach, one or two misses towards the front from leaving it


def _call(w: SimWorld, c: SkillCall, name: str | None) -> SkillResult:
    s = w.skills
    a: dict[str, Any] = {k: v for k, v in c.args.items() if v is not None}
    if c.skill == "grasp_actor":
        return s.grasp_actor(name or "", c.arm, **a)
    if c.skill == "place_actor":
        return s.place_actor(name or "", c.arm, c.target_pose or [], **a)
    if c.skill == "move_by_displacement":
        return s.move_by_displacement(c.arm, **a)
    if c.skill == "move_to_pose":
        return s.move_to_pose(c.arm, c.target_pose or [])
    if c.skill == "open_gripper":
        return s.open_gripper(c.arm)
    if c.skill == "close_gripper":
        return s.close_gripper(c.arm)
    return s.back_to_origin(c.arm)


def _seen(w: SimWorld, name: str) -> SceneObject:
    p = w.objects[name].entity.get_pose().p  # a block's frame lies at its bottom centre
    return SceneObject(id=name, label="block", color=name.split("_")[0],
                       position_m=[float(p[0]), float(p[1]), float(p[2]) + 0.025], size_m=[0.05, 0.05, 0.05])


def test_a_block_a_miss_left_at_the_edge_of_reach_is_pushed_back_then_carried() -> None:
    with SimWorld.create("stack_blocks_two", 0, render=False) as w:
        w.settle()
        green = w.objects["green_block"].entity
        for name, (x, y) in (("red_block", RED_XY_M), ("green_block", EDGE_XY_M)):
            e = w.objects[name].entity
            p = e.get_pose()
            e.set_pose(sapien.Pose(p=[x, y, float(p.p[2])], q=p.q))
        w.settle(0.5)
        objs = {n: _seen(w, n) for n in ("red_block", "green_block")}
        ctx = SimpleNamespace(table_top_z=w.table_top_z, gripper_holding=None,
                              reach={side: sim_reach(side) for side in ARM_SIDES})
        stack = Subtask(index=0, text="stack the green block on the red block", action="stack",
                        obj=ObjectRef(phrase="the green block", color="green", label="block"),
                        target=ObjectRef(phrase="the red block", color="red", label="block"), relation="on")
        missed = FailedAttempt(strategy="direct right", object_id="green_block", skill="grasp_actor", arm="right",
                               kind=FailureKind.GRASP_EMPTY.value, pose_m=objs["green_block"].position_m)
        plan = RulesThinker().think(stack, objs, SceneMemory(objects=list(objs.values())), 1, None, ctx,  # type: ignore[arg-type]
                                    CallLog(), failures=[missed])
        skills = [c.skill for c in plan.calls]
        assert skills[0] == "close_gripper" and "grasp_actor" in skills, skills  # the push comes first
        grasp_at = skills.index("grasp_actor")
        before = np.asarray(green.get_pose().p[:2], dtype=float)
        for c in plan.calls[:grasp_at]:
            r = _call(w, c, "green_block")
            assert r.ok, (c.skill, r.message)
        w.settle(0.5)
        after = np.asarray(green.get_pose().p[:2], dtype=float)
        middle = (0.12, -0.05)
        assert math.dist(after, middle) < math.dist(before, middle) - 0.03, (before, after)  # pushed back
        assert after[1] > before[1] + 0.03  # away from the front edge, one miss further from leaving the reach
        for c in plan.calls[grasp_at:]:
            r = _call(w, c, "green_block")
            assert r.ok, (c.skill, r.message)
        w.settle(0.5)
        g, red = green.get_pose().p, w.objects["red_block"].entity.get_pose().p
        assert math.dist(g[:2], red[:2]) < 0.02 and g[2] > red[2] + 0.04  # carried on as planned: on the red block


def test_a_place_whose_pre_place_point_is_out_of_bounds_is_made_from_a_lower_approach() -> None:
    """The right arm's workspace ends 2.5 cm below the usual pre-place pose above a stack of two (8 cm above the
    target), a situation that stays the same from one attempt to the next; the grasp of the block on the table
    fits under it. The first attempt grasps the green block and is refused at the place; the next one (before: the
    same place again, or the other arm the benchmark refuses, relays and nudges, none of them coming down lower)
    places it from 5 cm above the target, which the workspace allows, and the block ends on the stack."""
    with SimWorld.create("stack_blocks_three", 0, render=False) as w:
        w.settle()
        for name, (x, y, up) in (("red_block", (*RED_XY_M, 0.0)), ("green_block", (*RED_XY_M, 0.05)),
                                 ("blue_block", (0.17, -0.06, 0.0))):
            e = w.objects[name].entity
            p = w.objects["red_block"].entity.get_pose()
            e.set_pose(sapien.Pose(p=[x, y, float(p.p[2]) + up + 0.002], q=p.q))
        w.settle(0.5)
        names = ("red_block", "green_block", "blue_block")
        start = w.objects["blue_block"].entity.get_pose()
        objs = {n: _seen(w, n) for n in names}
        stack_top = objs["green_block"].position_m[2] + 0.025
        lo, hi = w.guard.config.workspace_m["right"]
        # the usual pre-place pose's height (the grasp centre 2.5 cm above the block's bottom), less 2.5 cm
        cap = stack_top + 0.025 + 0.08 + w.guard.config.tcp_offset_m - 0.025
        w.guard.reconfigure(workspace_m={"left": w.guard.config.workspace_m["left"],
                                         "right": (lo, (hi[0], hi[1], cap))})
        ctx = SimpleNamespace(table_top_z=w.table_top_z, gripper_holding=None,
                              reach={side: sim_reach(side) for side in ARM_SIDES})
        stack = Subtask(index=0, text="stack the blue block on the green block", action="stack",
                        obj=ObjectRef(phrase="the blue block", color="blue", label="block"),
                        target=ObjectRef(phrase="the green block", color="green", label="block"), relation="on")
        memory: list[FailedAttempt] = []
        strategies = []
        for attempt in range(5):
            objs = {n: _seen(w, n) for n in names}
            plan = RulesThinker().think(stack, objs, SceneMemory(objects=list(objs.values())), attempt, None,
                                        ctx, CallLog(), failures=memory)  # type: ignore[arg-type]
            strategies.append(plan.strategy or "usual")
            failed = None
            for i, c in enumerate(plan.calls):
                if c.skill == "grasp_actor" and c.arm == "left":
                    r = SkillResult.failure("the benchmark refuses the left arm", FailureKind.WRONG_ARM)
                else:
                    r = _call(w, c, "blue_block")
                if not r.ok:
                    failed = FailedAttempt(strategy=plan.strategy, calls=plan.calls, object_id="blue_block",
                                           pose_m=objs["blue_block"].position_m, skill=c.skill, arm=c.arm,
                                           failed_call=i, kind=str(r.kind.value if r.kind else "other"),
                                           explanation=r.message[:200])
                    break
            if failed is None:
                break
            memory.append(failed)
            w.skills.open_gripper("right")  # a refused place leaves the block in the hand: the same start again
            w.skills.back_to_origin("right")
            w.objects["blue_block"].entity.set_pose(start)
            w.settle(0.5)
        assert memory and memory[0].skill == "place_actor" and memory[0].kind == "refused_by_guard", memory
        assert strategies[-1].endswith("low approach"), [f"{m.line()}: {m.explanation}" for m in memory]
        b, g = w.objects["blue_block"].entity.get_pose().p, w.objects["green_block"].entity.get_pose().p
        assert math.dist(b[:2], g[:2]) < 0.02 and b[2] > g[2] + 0.04, (b, g)  # on the stack
