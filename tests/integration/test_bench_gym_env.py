"""Tasks as Gymnasium environments: seeded reset, reward = task success, bad actions reported."""

from __future__ import annotations

import numpy as np
import pytest

from mallvi.bench.actions import make_action
from mallvi.bench.gym_env import BiBenchEnv


def test_planning_env_rewards_success_only_when_the_task_is_done() -> None:
    env = BiBenchEnv("place_burger_fries", camera=None)
    try:
        obs, info = env.reset(seed=100000)
        obs2, info2 = env.reset(seed=100000)
        assert info["hints"] == info2["hints"] and np.allclose(obs["ee_pose"], obs2["ee_pose"])
        assert env.observation_space.contains(obs)
        targets = info["hints"]["targets"]
        plan = [
            make_action("grasp_actor", actor="burger", arm_tag="left"),
            make_action("place_actor", actor="burger", arm_tag="left", target_pose=targets["burger"]),
            make_action("back_to_origin", arm_tag="left"),
            make_action("grasp_actor", actor="fries", arm_tag="right"),
            make_action("place_actor", actor="fries", arm_tag="right", target_pose=targets["fries"]),
        ]
        rewards = []
        for action in plan:
            assert env.action_space.contains(action)
            _, reward, terminated, truncated, step_info = env.step(action)
            rewards.append(reward)
            assert step_info["ok"], step_info["feedback"]
            if terminated:
                break
        assert rewards[-1] == 1.0 and terminated and not truncated
        assert all(r == 0.0 for r in rewards[:-1])
    finally:
        env.close()


def test_fine_env_reports_a_bad_vector_as_a_failed_action() -> None:
    env = BiBenchEnv("stack_blocks_two", camera=None)
    try:
        env.reset(seed=100001)
        action = np.zeros(16)
        action[0] = np.nan
        _, reward, terminated, _, info = env.step(action)
        assert reward == 0.0 and not terminated
        assert not info["ok"] and info["feedback"].startswith("Action failed:")
    finally:
        env.close()


def test_grounding_env_scores_the_answer() -> None:
    env = BiBenchEnv("grounding_dense", camera=None)
    try:
        env.reset(seed=100000)
        blocks = list(env.action_space.spaces)
        assert len(blocks) == 5
        truth = env.task.truth(env.world)
        _, reward, terminated, _, _ = env.step(truth)
        assert reward == pytest.approx(1.0) and terminated
        wrong = {k: ("right" if v == "left" else "left") for k, v in truth.items()}
        env.reset(seed=100000)
        _, reward_wrong, _, _, _ = env.step(wrong)
        assert reward_wrong < 1.0
    finally:
        env.close()
