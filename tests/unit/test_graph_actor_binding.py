"""How the Actor binds a perceived object to the robot's name for it when another perceived object's box holds
its centre too: a bottle fallen into a bin is the bottle, not the bin the graph also sees."""

from __future__ import annotations

from mallvi.contracts.geometry import Pose
from mallvi.contracts.world_model import ObjectInfo
from mallvi.graph.nodes.actor import match_object
from mallvi.graph.schemas import SceneObject
from tests.fixtures.graph_fakes import TABLE_Z
from tests.fixtures.world_models import FixedWorld

BIN_CENTRE = (-0.38, -0.05, TABLE_Z + 0.04)
BOTTLE_CENTRE = (-0.30, -0.044, TABLE_Z + 0.065)  # lying along x, its cap end over the bin's middle


def _world() -> FixedWorld:
    dustbin = ObjectInfo("dustbin", "dustbin", Pose((-0.38, -0.05, TABLE_Z)), (0.20, 0.30, 0.08), None,
                         {"bbox_center": Pose(BIN_CENTRE)})
    bottle = ObjectInfo("bottle1", "bottle", Pose(BOTTLE_CENTRE), (0.23, 0.08, 0.08), None,
                        {"bbox_center": Pose(BOTTLE_CENTRE)})
    return FixedWorld(dustbin, bottle)


def _seen(oid: str, label: str, xyz: tuple[float, float, float]) -> SceneObject:
    return SceneObject(id=oid, label=label, position_m=xyz, size_m=(0.1, 0.05, 0.05))


# the camera sees the part of the bottle over the bin: its centre lies in both boxes, nearer the bin's centre
BOTTLE_SEEN = _seen("bottle", "bottle", (-0.37, -0.044, TABLE_Z + 0.066))
BIN_SEEN = _seen("bin", "bin", (-0.38, -0.05, TABLE_Z + 0.032))


def test_alone_the_bottle_over_the_bin_binds_to_the_bin_whose_centre_is_nearer() -> None:
    assert match_object(BOTTLE_SEEN, _world(), 0.03)[0] == "dustbin"


def test_a_bin_the_graph_sees_too_keeps_its_name_and_the_bottle_binds_to_the_bottle() -> None:
    world = _world()
    name, why = match_object(BOTTLE_SEEN, world, 0.03, [BOTTLE_SEEN, BIN_SEEN])
    assert name == "bottle1", why
    assert match_object(BIN_SEEN, world, 0.03, [BOTTLE_SEEN, BIN_SEEN])[0] == "dustbin"


def test_an_object_nearer_its_name_than_the_other_keeps_it() -> None:
    # a second look at the bin, farther from its centre than the bin's own sighting, does not take its name away
    near_bin = _seen("bin", "bin", (-0.38, -0.05, TABLE_Z + 0.045))
    name, _ = match_object(near_bin, _world(), 0.03, [near_bin, BOTTLE_SEEN])
    assert name == "dustbin"


def test_nothing_left_within_reach_is_reported_not_bound_to_the_claimed_name() -> None:
    world = FixedWorld(ObjectInfo("dustbin", "dustbin", Pose((-0.38, -0.05, TABLE_Z)), (0.20, 0.30, 0.08), None,
                                  {"bbox_center": Pose(BIN_CENTRE)}))
    name, why = match_object(BOTTLE_SEEN, world, 0.03, [BOTTLE_SEEN, BIN_SEEN])
    assert name is None
    assert "no object within 3 cm of perceived bottle" in why
