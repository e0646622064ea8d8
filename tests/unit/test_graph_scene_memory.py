"""Scene memory across re-scans: ids the plan is bound to survive a change of shape word, and an object hidden
under another one is remembered, while an object that simply vanished is not invented."""

from __future__ import annotations

from mallvi.graph.scene_memory import is_remembered, reconcile
from mallvi.graph.schemas import Predicate, SceneObject

TABLE_Z = 0.73
PAD = SceneObject(id="blue_pad", label="pad", color="blue", position_m=(0.18, 0.0, TABLE_Z + 0.005),
                  size_m=(0.10, 0.10, 0.01), source="color")
BLOCK = SceneObject(id="red_block", label="block", color="red", position_m=(-0.10, -0.05, TABLE_Z + 0.025),
                    size_m=(0.05, 0.05, 0.05), source="color")


def _at(o: SceneObject, x: float, y: float, z: float) -> SceneObject:
    return o.model_copy(update={"position_m": (x, y, z)})


def test_a_pad_under_the_block_put_on_it_is_remembered_where_it_was_seen() -> None:
    block_on_pad = _at(BLOCK, 0.19, 0.01, TABLE_Z + 0.01 + 0.025)
    objects, _ = reconcile([PAD, BLOCK], [block_on_pad], [])
    pad = next(o for o in objects if o.id == "blue_pad")
    assert is_remembered(pad) and pad.source == "memory: hidden under red_block"
    assert pad.position_m == PAD.position_m
    assert not is_remembered(next(o for o in objects if o.id == "red_block"))


def test_an_object_that_is_simply_not_seen_is_not_invented() -> None:
    objects, _ = reconcile([PAD, BLOCK], [BLOCK], [])  # nothing lies where the pad was
    assert [o.id for o in objects] == ["red_block"]
    beside = _at(BLOCK, 0.30, 0.0, TABLE_Z + 0.025)  # next to the pad's place, not on it
    objects, _ = reconcile([PAD, BLOCK], [beside], [])
    assert [o.id for o in objects] == ["red_block"]


def test_the_same_object_read_with_another_shape_word_keeps_its_id() -> None:
    half_covered = PAD.model_copy(update={"id": "blue_object", "label": "object", "position_m": (0.19, 0.0, 0.735)})
    rel = Predicate(relation="near", args=["red_block", "blue_object"])
    objects, relations = reconcile([PAD, BLOCK], [BLOCK, half_covered], [rel])
    assert sorted(o.id for o in objects) == ["blue_pad", "red_block"]
    assert relations[0].args == ["red_block", "blue_pad"]
    far = half_covered.model_copy(update={"position_m": (-0.25, 0.1, 0.735)})  # another blue thing elsewhere
    objects, _ = reconcile([PAD, BLOCK], [BLOCK, far], [])
    assert sorted(o.id for o in objects) == ["blue_object", "red_block"]


def test_an_object_the_main_camera_lost_is_recovered_from_another_view_even_with_another_shape_word() -> None:
    from mallvi.graph.scene_memory import recover_from_view

    green = BLOCK.model_copy(update={"id": "green_block", "color": "green", "position_m": (0.19, -0.35, 0.755)})
    seen_from_front = [green.model_copy(update={"id": "green_round", "label": "round", "source": "describe"}),
                       BLOCK.model_copy(update={"source": "describe"})]  # the red block both cameras see
    objects = recover_from_view([PAD, BLOCK, green], [PAD, BLOCK], seen_from_front, "front")
    got = next(o for o in objects if o.id == "green_block")
    assert got.label == "block" and got.source == "describe@front" and got.position_m == (0.19, -0.35, 0.755)
    assert len(objects) == 3, "nothing else from that view is added"
    two_green = [*seen_from_front, green.model_copy(update={"id": "green_block_2", "position_m": (-0.2, 0.1, 0.755)})]
    assert len(recover_from_view([PAD, BLOCK, green], [PAD, BLOCK], two_green, "front")) == 2, "ambiguous: left lost"


def test_the_one_lost_object_of_a_colour_is_the_one_new_name_of_that_colour_wherever_it_went() -> None:
    green = BLOCK.model_copy(update={"id": "green_block", "color": "green"})
    pushed = green.model_copy(update={"id": "green_pad", "label": "pad", "position_m": (0.0, -0.28, 0.767)})
    objects, _ = reconcile([PAD, BLOCK, green], [PAD, BLOCK, pushed], [])
    got = next(o for o in objects if o.position_m == (0.0, -0.28, 0.767))
    assert (got.id, got.label) == ("green_block", "block")
    two_new = [PAD, BLOCK, pushed, pushed.model_copy(update={"id": "green_round", "position_m": (0.05, 0.05, 0.75)})]
    objects, _ = reconcile([PAD, BLOCK, green], two_new, [])
    assert "green_block" not in {o.id for o in objects}, "two candidates: ambiguous, left to the re-scan"


def _bottle(oid: str, x: float, y: float) -> SceneObject:
    """A bottle as simulator perception gives it: a label, no colour."""
    return SceneObject(id=oid, label="bottle", color=None, position_m=(x, y, TABLE_Z + 0.12),
                       size_m=(0.07, 0.07, 0.24), source="describe")


CLUTTER = SceneObject(id="clutter", label="clutter", color=None, position_m=(0.52, -0.16, TABLE_Z + 0.01),
                      size_m=(0.05, 0.10, 0.02), source="describe")
BOTTLES = [_bottle("bottle", -0.38, 0.04), _bottle("bottle_2", 0.0, -0.22), _bottle("bottle_3", 0.2, 0.1)]


def test_a_bottle_knocked_far_out_of_the_bin_keeps_its_id_when_it_is_the_one_lost_and_the_one_new() -> None:
    knocked = _bottle("bottle_5", -0.21, 0.30)  # 0.38 m from where it stood in the bin
    objects, _ = reconcile([*BOTTLES, CLUTTER], [BOTTLES[1], BOTTLES[2], knocked, CLUTTER], [])
    assert sorted(o.id for o in objects if o.label == "bottle") == ["bottle", "bottle_2", "bottle_3"]
    assert next(o for o in objects if o.id == "bottle").position_m[:2] == (-0.21, 0.30)
    # two bottles lost and one new: which one it is cannot be told, the new name stays
    objects, _ = reconcile([*BOTTLES, CLUTTER], [BOTTLES[2], knocked, CLUTTER], [])
    assert sorted(o.id for o in objects if o.label == "bottle") == ["bottle_3", "bottle_5"]


def test_a_colourless_object_of_another_kind_never_takes_a_lost_bottles_id() -> None:
    new_clutter = CLUTTER.model_copy(update={"id": "clutter_2", "position_m": (-0.37, 0.05, TABLE_Z + 0.01)})
    objects, _ = reconcile([*BOTTLES, CLUTTER], [BOTTLES[1], BOTTLES[2], CLUTTER, new_clutter], [])
    assert {o.id for o in objects} == {"bottle_2", "bottle_3", "clutter", "clutter_2"}
    assert next(o for o in objects if o.id == "clutter_2").label == "clutter"


def test_another_view_recovers_a_lost_bottle_but_not_a_clutter_item_in_its_place() -> None:
    from mallvi.graph.scene_memory import recover_from_view

    seen = [BOTTLES[1], BOTTLES[2]]
    front_sees_clutter = [CLUTTER.model_copy(update={"id": "clutter_7"})]
    assert recover_from_view([*BOTTLES, CLUTTER], [*seen, CLUTTER], front_sees_clutter, "front") == [*seen, CLUTTER]
    front_sees_bottle = [_bottle("bottle_9", -0.30, 0.12)]
    got = recover_from_view(BOTTLES, seen, front_sees_bottle, "front")
    assert [o.id for o in got] == ["bottle_2", "bottle_3", "bottle"] and got[-1].source == "describe@front"
