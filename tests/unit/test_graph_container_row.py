"""A row of objects put into one container lies off its middle line towards the work centre, so that a drop that
misses its cell leans over the wall on the table's middle, not over the wall on the table's edge."""

from __future__ import annotations

import pytest

from mallvi.graph.backends.rules.thinker.goal_plans import container_spot
from mallvi.graph.schemas import SceneObject
from tests.fixtures.graph_fakes import TABLE_Z

BOTTLE = SceneObject(id="bottle", label="bottle", position_m=(0.1, -0.1, TABLE_Z + 0.12), size_m=(0.07, 0.07, 0.24))


def _bin(x: float) -> SceneObject:
    return SceneObject(id="bin", label="dustbin", position_m=(x, -0.05, TABLE_Z + 0.04), size_m=(0.2, 0.3, 0.08))


@pytest.mark.parametrize("bin_x", [-0.38, 0.38])
def test_a_row_in_a_bin_at_the_tables_side_lies_towards_the_middle_of_the_table(bin_x: float) -> None:
    spots = [container_spot(_bin(bin_x), BOTTLE, i, 3, "left") for i in range(3)]
    # free room across: 0.1 - 0.01 (wall) - 0.035 (half a bottle) - 0.005 (margin) = 0.05 m; half of it
    for x, _ in spots:
        assert x == pytest.approx(bin_x - 0.025 * (1 if bin_x > 0 else -1))
        assert abs(x) < abs(bin_x), "towards the middle, away from the table's edge"
    # the row itself runs along the bin's longer side, far cell first, inside its walls
    ys = [y for _, y in spots]
    assert ys == sorted(ys, reverse=True) and ys[0] - ys[-1] == pytest.approx(2 * (0.15 - 0.01 - 0.035 - 0.005))
    assert all(abs(x - bin_x) + 0.035 < 0.1 - 0.01 for x, _ in spots), "every cell clear of the walls"


def test_a_single_object_goes_to_the_centre_and_a_bin_as_narrow_as_the_object_gets_no_shift() -> None:
    assert container_spot(_bin(-0.38), BOTTLE, None, 1, "left") == (-0.38, -0.05)
    narrow = _bin(-0.38).model_copy(update={"size_m": (0.085, 0.3, 0.08)})
    assert container_spot(narrow, BOTTLE, 0, 3, "left")[0] == pytest.approx(-0.38)
