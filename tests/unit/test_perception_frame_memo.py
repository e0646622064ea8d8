"""A frame's table height and depth regions are computed once per frame, and never handed to another frame."""

from __future__ import annotations

import gc

import pytest

from mallvi.contracts.observation import Observation
from mallvi.perception.background import behind_table, far_edge, frame_behind_table, frame_far_edge
from mallvi.perception.frame_memo import FRAMES_KEPT, per_frame
from mallvi.perception.projection import support_z, world_z_image
from mallvi.perception.raised_regions import raised_regions
from mallvi.perception.synthetic import SynthBox, head_camera, render

K, T_WORLD_CAM = head_camera()


def _frame(table_z: float, block_x: float = 0.0) -> Observation:
    box = SynthBox("white_box", (block_x, 0.05, table_z + 0.03), (0.08, 0.08, 0.06), "white")
    return render([box], K, T_WORLD_CAM, 640, 360, table_z=table_z)


def test_each_frame_and_argument_set_is_computed_once() -> None:
    calls: list[tuple[int, int]] = []

    @per_frame
    def area(obs: Observation, scale: int = 1) -> int:
        calls.append((id(obs), scale))
        return int((obs.depth_m > 0).sum()) * scale

    a, b = _frame(0.74), _frame(0.80)
    assert area(a) == area(a) == int((a.depth_m > 0).sum())
    assert area(a, scale=2) == 2 * area(a)
    area(b)
    assert calls == [(id(a), 1), (id(a), 2), (id(b), 1)]


def test_a_new_frame_never_gets_a_freed_frames_result() -> None:
    # frames made and dropped one after another often reuse the same address; each must see its own table
    for i in range(12):
        table_z = 0.70 + 0.01 * i
        obs = _frame(table_z)
        got = support_z(obs)
        assert got is not None and abs(got - table_z) < 0.002, (i, got)
        assert support_z(obs) == got
        del obs
        gc.collect()


def test_cached_regions_are_the_regions_computed_afresh() -> None:
    frames = [_frame(0.74, x) for x in (-0.1, 0.0, 0.1)]
    for obs in frames:
        cached = raised_regions(obs)
        fresh = raised_regions.__wrapped__(obs)  # type: ignore[attr-defined]
        assert len(cached) == len(fresh) == 1
        assert cached[0].box_xyxy == fresh[0].box_xyxy and (cached[0].mask == fresh[0].mask).all()
    # the boxes moved with the block: no frame got another's regions
    assert len({raised_regions(obs)[0].box_xyxy for obs in frames}) == 3


def test_the_shared_far_edge_and_behind_mask_are_the_frames_own() -> None:
    shelf = SynthBox("green_tile", (0.0, 0.42, 0.74 + 0.02), (0.05, 0.04, 0.04), "green")
    obs = render([shelf], K, T_WORLD_CAM, 640, 360, table_z=0.74)
    z, table_z = world_z_image(obs), support_z(obs)
    assert z is not None and table_z is not None
    edge = far_edge(obs, z, table_z)
    shared = frame_far_edge(obs)
    assert edge is not None and shared is not None and shared.distance_m == edge.distance_m
    behind = behind_table(obs, z, table_z, edge)
    assert behind.any() and (frame_behind_table(obs) == behind).all()  # the tile behind the table is marked


def test_only_the_newest_frames_are_kept() -> None:
    calls: list[int] = []

    @per_frame
    def mark(obs: Observation) -> int:
        calls.append(id(obs))
        return len(calls)

    frames = [_frame(0.74) for _ in range(FRAMES_KEPT + 1)]
    for obs in frames:
        mark(obs)
    mark(frames[-1])  # still kept
    mark(frames[0])  # dropped as the newest came in: computed again
    assert calls == [id(f) for f in frames] + [id(frames[0])]


def test_anything_but_an_observation_is_refused() -> None:
    with pytest.raises(TypeError, match="Observation"):
        support_z("head.png")  # type: ignore[arg-type]


def test_a_shared_array_cannot_be_written() -> None:
    z = world_z_image(_frame(0.74))
    assert z is not None
    with pytest.raises(ValueError, match="read-only"):
        z[0, 0] = 0.0  # would change every other stage's height image of this frame
