"""The rules Thinker's arm choice after a fault moved an object to the back of the table: the arm that reaches it
with a leaned grasp carries it directly, without a relay through the middle."""

from __future__ import annotations

from mallvi.graph.backends.backend_protocols import CallLog
from mallvi.graph.backends.rules.thinker.thinker import RulesThinker
from mallvi.graph.schemas import ObjectRef, SceneMemory, SceneObject, Subtask
from tests.fixtures.graph_fakes import TABLE_Z, FakeWorld, fake_context


def _block(color: str, x: float, y: float, z: float = TABLE_Z + 0.025) -> SceneObject:
    return SceneObject(id=f"{color}_block", label="block", color=color, position_m=(x, y, z), size_m=(0.05,) * 3)


def _stack_subtask() -> Subtask:
    return Subtask(text="put the blue block on the red block", action="place",
                   obj=ObjectRef(phrase="the blue block", color="blue", label="block"),
                   target=ObjectRef(phrase="the red block", color="red", label="block"), relation="on")


def _think(blue: SceneObject, attempt: int, feedback: str | None) -> list[tuple[str, str]]:
    red = _block("red", 0.0, -0.13)
    localized = {"blue_block": blue, "red_block": red}
    ctx = fake_context(FakeWorld.blocks(("red", 0.0, -0.13), ("blue", blue.position_m[0], blue.position_m[1])))
    plan = RulesThinker().think(_stack_subtask(), localized, SceneMemory(objects=[blue, red]), attempt, feedback,
                                ctx, CallLog())
    return [(c.skill, c.arm) for c in plan.calls]


def test_a_block_at_the_back_of_the_table_is_carried_directly_by_the_arm_that_reaches_it_leaning() -> None:
    blue = _block("blue", -0.20, 0.26)  # past the upright grasps' reach, within the leaned grasps' (left arm)
    calls = _think(blue, 0, None)
    assert calls == [("grasp_actor", "left"), ("place_actor", "left"), ("back_to_origin", "left")]
