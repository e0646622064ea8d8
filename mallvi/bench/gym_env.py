"""Any registered ST-BiBench task as a Gymnasium environment, so other policies run on the same tasks.

Actions: Tier 2 — one primitive call ``{"action_name": "grasp_actor", "parameters": {...}}`` (ids 2.2-2.9 as in
``actions.py``); Tier 3 — 16 numbers [left xyz, quat wxyz, gripper, right xyz, quat wxyz, gripper]; Tier 1 —
``{block_name: "left" | "right"}``. Reward 1 when the task succeeds (Tier 1: the spatial score / 100).
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mallvi.bench.actions import ACTION_IDS, action_name, execute_action, execute_ee_action
from mallvi.bench.tasks import BenchTask, get_task
from mallvi.bench.tasks.grounding import GroundingTask
from mallvi.contracts.skills import SkillResult


class PrimitiveSpace(gym.Space[dict[str, Any]]):
    """Tier 2 actions: a dict naming one of the primitives 2.2-2.9 with a ``parameters`` dict."""

    def __init__(self) -> None:
        super().__init__(shape=None, dtype=None)

    def contains(self, x: Any) -> bool:
        return isinstance(x, dict) and action_name(x) is not None and isinstance(x.get("parameters", {}), dict)

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        name = sorted(ACTION_IDS)[int(self.np_random.integers(len(ACTION_IDS)))]
        arm = "left" if self.np_random.random() < 0.5 else "right"
        return {"action_id": ACTION_IDS[name], "action_name": name, "parameters": {"arm_tag": arm}}


class BiBenchEnv(gym.Env[dict[str, Any], Any]):
    """One task; ``reset(seed=...)`` builds the scene for that seed (a pure function of it).

    Args:
        task: a registry name (``mallvi.bench.tasks.TASKS``).
        camera: the camera whose RGB image goes into the observation ("head"), or None for proprioception only
            (much faster: the simulator then renders nothing).
    """

    metadata = {"render_modes": ["rgb_array"]}  # noqa: RUF012 - gymnasium declares it as an instance attribute

    def __init__(self, task: str, camera: str | None = "head") -> None:
        self.task: BenchTask = get_task(task)
        self.camera = camera
        self.world: Any = None
        self._actions = 0
        if isinstance(self.task, GroundingTask):
            self.action_space: gym.Space[Any] = spaces.Dict({})  # filled per episode with the block names
        elif self.task.tier == "fine":
            low = np.array([-1, -1, 0, -1, -1, -1, -1, 0] * 2, dtype=np.float32)
            high = np.array([1, 1, 2, 1, 1, 1, 1, 1] * 2, dtype=np.float32)
            self.action_space = spaces.Box(low, high, dtype=np.float32)
        else:
            self.action_space = PrimitiveSpace()
        obs: dict[str, spaces.Space[Any]] = {
            "gripper_opening": spaces.Box(0.0, 1.0, (2,), np.float32),
            "ee_pose": spaces.Box(-np.inf, np.inf, (2, 7), np.float32),
        }
        if camera is not None:
            obs["rgb"] = spaces.Box(0, 255, (360, 640, 3), np.uint8)
        self.observation_space = spaces.Dict(obs)

    @property
    def max_actions(self) -> int:
        """Truncation limit: turns × chunk (Tier 3: ⌈1.5·turns⌉ × chunk)."""
        turns = int(np.ceil(1.5 * self.task.max_turns)) if self.task.tier == "fine" else self.task.max_turns
        return max(1, turns * max(self.task.chunk, 1))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        from mallvi.bench.episode import seed_global_rngs
        from mallvi.sim_bridge.world import SimWorld

        if self.world is not None:
            self.world.close()
        episode_seed = int(seed) if seed is not None else int(self.np_random.integers(100000, 2**31 - 1))
        seed_global_rngs(episode_seed)
        self.world = SimWorld.create(
            self.task.scene_spec(), episode_seed, render=self.camera is not None,
            cameras=(self.camera,) if self.camera else ("head",),
            grasp_refusal_threshold_m=self.task.allocation_threshold_m,
        )  # fmt: skip
        self._actions = 0
        if isinstance(self.task, GroundingTask):
            names = list(self.task.blocks_x(self.world))
            self.action_space = spaces.Dict({n: spaces.Discrete(2) for n in names})
        return self._obs(), {"instruction": self.world.instruction or self.task.instruction,
                             "hints": self.task.hints(self.world), "seed": episode_seed}  # fmt: skip

    def step(self, action: Any) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        if self.world is None:
            raise RuntimeError("call reset() before step()")
        self._actions += 1
        if isinstance(self.task, GroundingTask):
            answers = {k: (v if isinstance(v, str) else ("left", "right")[int(v)]) for k, v in dict(action).items()}
            score = self.task.score(self.world, answers)
            return self._obs(), score / 100.0, True, False, {"score": score, "truth": self.task.truth(self.world)}
        result: SkillResult
        if self.task.tier == "fine":
            result = execute_ee_action(self.world, list(np.asarray(action, dtype=float).ravel()))
        else:
            result = execute_action(self.task, self.world, action)
        success = bool(self.task.check_success(self.world))
        truncated = not success and self._actions >= self.max_actions
        info = {"ok": result.ok, "feedback": result.feedback, "hints": self.task.hints(self.world)}
        return self._obs(), float(success), success, truncated, info

    def render(self) -> Any:
        return self.world.observe(self.camera or "head").rgb if self.world is not None else None

    def close(self) -> None:
        if self.world is not None:
            self.world.close()
            self.world = None

    def _obs(self) -> dict[str, Any]:
        w = self.world
        out: dict[str, Any] = {
            "gripper_opening": np.array([w.gripper_opening("left"), w.gripper_opening("right")], dtype=np.float32),
            "ee_pose": np.array([w.arms[s].ee_pose().as_list() for s in ("left", "right")], dtype=np.float32),
        }
        if self.camera is not None:
            out["rgb"] = w.observe(self.camera).rgb
        return out
