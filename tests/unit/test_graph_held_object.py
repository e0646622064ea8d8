"""An object a hand holds is where the hand is, even when the camera cannot see it between the fingers: after a
hand-over, "place it on the blue pad" goes on with the block the right hand holds instead of looking for it in
the image, re-scanning, and giving up on it as lost (colour perception lost handover_block's block so)."""

from __future__ import annotations

from dataclasses import dataclass

from mallvi.contracts.observation import Observation
from mallvi.graph.drive import drive
from mallvi.graph.in_hand import grasp_centre, holding_arm
from mallvi.graph.schemas import Detection2D, ObjectRef, Plan, Predicate, SceneObject, Subtask
from mallvi.graph.state import initial_state
from tests.fixtures.graph_fakes import TABLE_Z, FakeObject, FakePerception, FakeWorld, fake_context

HANDOVER = ("Use the left arm to grasp the red block on the table, handover it to the right arm and place it on "
            "the blue pad.")


@dataclass
class _HandHides(FakePerception):
    """A camera that sees nothing a gripper holds (the fingers cover a small block)."""

    def _held(self) -> set[str]:
        return {h for h in self.world.held.values() if h is not None}

    def scan(self, obs: Observation) -> list[SceneObject]:
        return [o for o in super().scan(obs) if o.id not in self._held()]

    def detect(self, obs: Observation, queries: dict[str, str]) -> dict[str, list[Detection2D]]:
        self.hide = self._held()
        return super().detect(obs, queries)


def _world() -> FakeWorld:
    world = FakeWorld.blocks(("red", -0.15, -0.05))
    world.objects["blue_pad"] = FakeObject("blue_pad", "blue", "pad", [0.18, 0.02, TABLE_Z + 0.005], size=0.01)
    return world


def test_the_held_block_is_placed_though_the_camera_cannot_see_it() -> None:
    world = _world()
    out, state = drive(fake_context(world, perception=_HandHides(world)), HANDOVER)
    assert out.status == "succeeded", state["failure_report"]
    red, pad = world.objects["red_block"].pos, world.objects["blue_pad"].pos
    assert abs(red[0] - pad[0]) < 0.03 and abs(red[1] - pad[1]) < 0.03  # on the pad, in the world's truth
    assert out.node_sequence.count("descriptor") == 1  # no re-scan looking for a block that was in the hand
    assert [c[:2] for c in world.calls if c[0] in ("grasp_actor", "place_actor")][-1] == ("place_actor", "right")


def _state(held_by_right: bool, later_place: bool) -> dict[str, object]:
    red = ObjectRef(phrase="the red block", color="red", label="block", instance="red_block")
    subtasks = [Subtask(text="hand it over", action="handover", obj=red, arm_hint="left",
                        post=[Predicate(relation="held_by", args=["red_block", "right"])] if held_by_right else [])]
    if later_place:
        subtasks.append(Subtask(text="put it down", action="place", obj=red, relation="center"))
    state = dict(initial_state(HANDOVER))
    state.update(plan=Plan(subtasks=subtasks), completed=list(range(len(subtasks))))
    return state


def test_only_a_checked_hold_by_a_gripper_that_still_senses_it_counts() -> None:
    world = _world()
    ctx = fake_context(world)
    world.held["right"], world.grip["right"] = "red_block", 0.4  # closed on the block
    assert holding_arm(_state(True, False), ctx, "red_block") == "right"  # type: ignore[arg-type]
    assert holding_arm(_state(False, False), ctx, "red_block") is None  # type: ignore[arg-type]
    assert holding_arm(_state(True, True), ctx, "red_block") is None  # type: ignore[arg-type]  # put down since
    world.held["right"], world.grip["right"] = None, 1.0  # it slipped out: the gripper is open
    assert holding_arm(_state(True, False), ctx, "red_block") is None  # type: ignore[arg-type]


def test_the_grasp_centre_is_in_front_of_the_end_effector_frame() -> None:
    # identity: the approach axis is world x; turned to point down (x -> -z), the centre is below the wrist
    x, y, z = grasp_centre([0.1, 0.2, 1.0, 1.0, 0.0, 0.0, 0.0])
    assert abs(x - 0.22) < 1e-9 and abs(y - 0.2) < 1e-9 and abs(z - 1.0) < 1e-9
    x, y, z = grasp_centre([0.0, 0.0, 1.0, 0.7071068, 0.0, 0.7071068, 0.0])  # +90 deg about y
    assert abs(x) < 1e-6 and abs(y) < 1e-6 and abs(z - 0.88) < 1e-6
