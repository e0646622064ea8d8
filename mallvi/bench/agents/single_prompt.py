"""Prompts of the single-planner baseline, following the structure of the ST-BiBench agent prompts.

Structure (paper, appendix F, and the original evaluation code): on the first turn the task name and goal, the
robot's role and the dual-arm caution; on later turns the last three turns' actions with their feedback instead;
then every turn the task-specific assistant info (``single_info``: steps, object names, parameter advice, and
the live facts from the task's hints), recommended parameters, the JSON output format (visual_state_description,
reasoning_and_reflection, language_plan, executable_plan), the action list and an example reply. Quaternions
are [w, x, y, z] throughout (said explicitly).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mallvi.bench.agents.agent_protocols import TurnRecord

ROLE = (
    "You control a robot with two arms (left and right) in a simulated tabletop scene. Follow the task "
    "description, look at the observation images and the information below, and output the next actions. "
    "World frame: +x to the robot's right, +y away from the robot, +z up; metres. Quaternions are "
    "[w, x, y, z]; [0, 1, 0, 0] points a frame's z axis down."
)
DUAL_ARM_NOTE = (
    "You have two arms: plan so that they never collide. An arm you do not need right now should go back to "
    "its origin. Raise an arm after grasping before moving sideways, and raise it again after placing before "
    "sending it home."
)
RECOMMENDED = "Recommended: pre_grasp_dis=0.09 and grasp_dis=0.03 for grasp_actor."
OUTPUT_FORMAT = (
    "Answer with one JSON object and nothing else (no code fences), with the keys "
    '"visual_state_description" (what you see, including the grippers), "reasoning_and_reflection" (what the '
    'last actions achieved and why a failure happened), "language_plan" (the next steps in words) and '
    '"executable_plan" (a JSON array of actions). Do not use apostrophes inside JSON strings.'
)

PRIMITIVES: dict[str, dict[str, Any]] = {
    "2.2": {"name": "grasp_actor", "description": "Pick up an object with one arm.",
            "parameters": {"actor": "object name", "arm_tag": "left or right",
                           "pre_grasp_dis": "approach distance, default 0.1 m", "grasp_dis": "default 0 m",
                           "gripper_pos": "closing position, default 0 (fully closed)",
                           "contact_point_id": "optional grasp point id; default: the best one"}},
    "2.3": {"name": "place_actor", "description": "Place the held object at a target pose.",
            "parameters": {"actor": "the held object", "arm_tag": "the arm holding it",
                           "target_pose": "[x, y, z] or [x, y, z, qw, qx, qy, qz]",
                           "functional_point_id": "object point put at the target (0 = bottom centre)",
                           "pre_dis": "default 0.1 m", "dis": "default 0.02 m",
                           "is_open": "open the gripper at the end, default true",
                           "constrain": "free | align | auto (default)"}},
    "2.4": {"name": "move_by_displacement", "description": "Shift an end-effector.",
            "parameters": {"arm_tag": "left or right", "x": "m", "y": "m", "z": "m",
                           "quat": "optional orientation [w, x, y, z]", "move_axis": "world (default) or arm"}},
    "2.5": {"name": "move_to_pose", "description": "Move an end-effector to an absolute pose.",
            "parameters": {"arm_tag": "left or right", "target_pose": "[x, y, z, qw, qx, qy, qz]"}},
    "2.6": {"name": "close_gripper", "parameters": {"arm_tag": "left or right", "pos": "0 = fully closed"}},
    "2.7": {"name": "open_gripper", "parameters": {"arm_tag": "left or right", "pos": "1 = fully open"}},
    "2.8": {"name": "back_to_origin", "parameters": {"arm_tag": "left or right"}},
    "2.9": {"name": "get_arm_pose", "parameters": {"arm_tag": "left or right"}},
}  # fmt: skip

ACTION_FORMAT_PLANNING = (
    'Each item of "executable_plan" is {"action_id": "2.x", "action_name": "...", "parameters": {...}}. '
    "Quaternions are [w, x, y, z]. Only the first {chunk} actions of a plan are executed; after that you see the "
    "result and plan again. "
    "The actions:\n"
)
ACTION_FORMAT_FINE = (
    'Each item of "executable_plan" is a list of 16 numbers: [left x, y, z, qw, qx, qy, qz, left gripper, '
    "right x, y, z, qw, qx, qy, qz, right gripper]; gripper 1 = open, 0 = closed. Both arms move together to "
    "their poses (the end-effector sits 0.12 m behind the grasp centre along its approach axis). Only the "
    "first {chunk} actions of a plan are executed."
)

GROUNDING = (
    "You are the planner of a robot with two arms. Look at the image from the robot's head camera and decide, "
    "for each block listed below, which arm (LEFT or RIGHT) should grasp it: the arm on the block's side of "
    "the table is the right choice. Answer with one JSON object and nothing else: "
    '{"visual_state_description": "...", "results": [{"object": "<name>", "use_arm": "LEFT or RIGHT"}, ...]}. '
    "Blocks: {blocks}."
)


HISTORY_INTRO = "The last steps (actions and their feedback):"
FOLLOW_UP = (
    "Given these steps and the current images, continue towards the goal: {goal} Describe the current state "
    "from the images, sum up what the steps and their feedback show, say why the last plan failed or did not "
    "finish the task, and give your new plan from here, ending with the actions, in the JSON format below."
)
IMAGES = (
    "The images: the head camera, a third-person view of the scene{example}."
)


def planning_prompt(
    task_name: str,
    instruction: str,
    tier: str,
    chunk: int,
    hints: dict[str, Any],
    history: Sequence[TurnRecord],
    *,
    first_turn: bool | None = None,
    guide: str = "",
    example: dict[str, Any] | None = None,
    example_image: bool = False,
) -> str:
    """The text of one planning turn (images are attached separately).

    As in the original benchmark, the task statement and the robot's role open the first turn only; later turns
    open with the last steps and their feedback instead. Every turn carries the assistant info (the task's
    guide and live facts), the output format with the action list, and an example reply.
    """
    first = not history if first_turn is None else first_turn
    parts: list[str] = []
    if first:
        parts += [f"The task is {task_name}. Goal: {instruction}", ROLE, DUAL_ARM_NOTE]
    else:
        lines = [HISTORY_INTRO]
        for i, rec in enumerate(history, 1):
            lines.append(f"Step {i}, actions {json.dumps(rec.actions)}, feedback: {' '.join(rec.feedback)}")
        parts.append("\n".join(lines))
        parts.append(FOLLOW_UP.replace("{goal}", instruction))
    info = (guide + " " if guide else "") + "Facts about this scene, use them directly: " + json.dumps(
        hints, sort_keys=True
    )
    parts.append("Assistant info (important): " + info)
    if tier == "planning":
        parts.append(RECOMMENDED)
        parts.append(OUTPUT_FORMAT)
        parts.append(ACTION_FORMAT_PLANNING.replace("{chunk}", str(chunk)) + json.dumps(PRIMITIVES, indent=1))
    else:
        parts.append(OUTPUT_FORMAT)
        parts.append(ACTION_FORMAT_FINE.replace("{chunk}", str(chunk)))
    if example is not None:
        parts.append("An example reply (replace the capitalised placeholders): " + json.dumps(example))
    parts.append(IMAGES.replace("{example}", ", and an example of this task being done" if example_image else ""))
    return "\n\n".join(parts)


def grounding_prompt(blocks: Sequence[str]) -> str:
    return GROUNDING.replace("{blocks}", ", ".join(blocks))
