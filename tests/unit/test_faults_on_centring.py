"""The Reflector's on(a, b) check: a block placed well off a large pad's centre is a misplacement to redo."""

from __future__ import annotations

from mallvi.graph.goals import Box, relation_holds

TABLE_Z = 0.74
PAD = Box("blue_pad", (0.12, 0.03, TABLE_Z + 0.005), (0.12, 0.12, 0.01))


def _block_at(dx_m: float) -> Box:
    return Box("red_block", (0.12 + dx_m, 0.03, TABLE_Z + 0.01 + 0.025), (0.05, 0.05, 0.05))


def test_a_block_4_cm_off_a_wide_pads_centre_is_not_on_it() -> None:
    holds, why = relation_holds("on", _block_at(0.04), PAD, TABLE_Z)
    assert not holds and "off-centre 4.0 cm" in why


def test_a_block_1_cm_off_the_pads_centre_is_on_it() -> None:
    assert relation_holds("on", _block_at(0.01), PAD, TABLE_Z)[0]


def test_a_small_target_keeps_its_tighter_tolerance() -> None:
    peg = Box("peg", (0.0, 0.0, TABLE_Z + 0.025), (0.01, 0.01, 0.05))  # half side 0.5 cm + 2 cm slack < 3 cm
    off = Box("green_block", (0.028, 0.0, TABLE_Z + 0.075), (0.04, 0.04, 0.05))
    assert not relation_holds("on", off, peg, TABLE_Z)[0]
    near = Box("green_block", (0.02, 0.0, TABLE_Z + 0.075), (0.04, 0.04, 0.05))
    assert relation_holds("on", near, peg, TABLE_Z)[0]
