"""The self-authored arm: its URDF reproduces the Piper's DH kinematics and is what the generator writes."""

from __future__ import annotations

import numpy as np
import pytest
import sapien
from piper_sdk.kinematics.piper_fk import C_PiperForwardKinematics

from mallvi.robot_drivers.embodiment import piper_dh
from mallvi.robot_drivers.embodiment.loader import Embodiment, default_embodiment


def test_urdf_forward_kinematics_matches_piper_sdk_within_1mm() -> None:
    emb = default_embodiment()
    scene = sapien.Scene()
    loader = scene.create_urdf_loader()
    loader.fix_root_link = True
    art = loader.load(str(emb.urdf_path))
    links = {link.name: link for link in art.get_links()}
    sdk = C_PiperForwardKinematics()
    rng = np.random.default_rng(0)
    lo = np.array([a for a, _ in piper_dh.JOINT_LIMITS_RAD])
    hi = np.array([b for _, b in piper_dh.JOINT_LIMITS_RAD])
    for _ in range(20):
        q = rng.uniform(lo, hi)
        art.set_qpos(np.concatenate([q, [0.0, 0.0]]))
        flange_mm = np.asarray(links["link6"].entity.get_pose().p, dtype=float) * 1000.0
        expected_mm = np.asarray(sdk.CalFK(list(q))[-1][:3])
        assert np.linalg.norm(flange_mm - expected_mm) < 1.0, (q, flange_mm, expected_mm)
        # the grasp centre is 0.13 m along the flange's z axis, 0.12 m in front of the ee frame along its x axis
        T6 = links["link6"].entity.get_pose().to_transformation_matrix()
        tcp = links["tcp"].entity.get_pose().p
        ee = links["ee_link"].entity.get_pose().to_transformation_matrix()
        assert np.allclose(tcp, T6[:3, 3] + 0.13 * T6[:3, 2], atol=1e-4)
        assert np.allclose(tcp, ee[:3, 3] + 0.12 * ee[:3, 0], atol=1e-4)


def test_committed_assets_are_what_the_generator_writes() -> None:
    emb = default_embodiment()
    assert emb.urdf_path.read_text() == piper_dh.build_urdf()
    assert emb.srdf_path.read_text() == piper_dh.build_srdf()


def test_embodiment_rejects_missing_files_and_bad_home(tmp_path) -> None:  # type: ignore[no-untyped-def]
    emb = default_embodiment()
    with pytest.raises(FileNotFoundError):
        Embodiment(urdf_path=tmp_path / "none.urdf", srdf_path=emb.srdf_path)
    with pytest.raises(ValueError, match="home_qpos_rad"):
        Embodiment(urdf_path=emb.urdf_path, srdf_path=emb.srdf_path, home_qpos_rad=(0.0, 1.0))
