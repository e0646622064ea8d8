"""After a failed attempt the retry works from where the Reflector just saw the objects: a block put down off its
target near the image edge (read there as "yellow pad") is still found, by its colour near where it was put."""

from __future__ import annotations

from mallvi.graph.nodes.reflector import refreshed
from mallvi.graph.schemas import SceneObject

TABLE_Z = 0.72


def _obj(oid: str, label: str, color: str, x: float, y: float) -> SceneObject:
    return SceneObject(id=oid, label=label, color=color, position_m=(x, y, TABLE_Z + 0.025), size_m=(0.05, 0.05, 0.05),
                       source="sim")


def test_a_block_seen_with_another_shape_word_where_it_was_put_is_that_block() -> None:
    yellow = _obj("yellow_block", "block", "yellow", -0.15, 0.06)  # where it was grasped
    black = _obj("black_block", "block", "black", 0.0, -0.15)
    fresh = [_obj("yellow_pad", "pad", "yellow", -0.042, -0.30), black]  # put 5 cm off (0.0, -0.27)
    out = refreshed({"yellow_block": yellow, "black_block": black}, fresh, "yellow_block", (0.0, -0.27, TABLE_Z))
    assert out["yellow_block"].position_m[:2] == (-0.042, -0.30)
    assert out["yellow_block"].label == "block"  # the memory keeps its words; only where it is changes
    # without knowing where it was put, a block 37 cm from where it was is not taken for it
    out = refreshed({"yellow_block": yellow, "black_block": black}, fresh)
    assert out["yellow_block"].position_m[:2] == (-0.15, 0.06)
    # two objects of that colour: neither is taken by colour alone
    two = [*fresh, _obj("yellow_pad_2", "pad", "yellow", 0.02, -0.28)]
    out = refreshed({"yellow_block": yellow, "black_block": black}, two, "yellow_block", (0.0, -0.27, TABLE_Z))
    assert out["yellow_block"].position_m[:2] == (-0.15, 0.06)
