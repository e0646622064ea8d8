"""The single-planner baseline: one vision-language model plans every turn (the paper's own agent).

Two protocols (``BenchConfig.single_protocol``):

* "paper" (default): the original benchmark's, per tier. Tier 2 sees the head camera, a third-person view (our
  ``front`` camera, at the original's observer pose), the turn's text and the task's example image; Tier 3 the
  head camera, the text and, for place_burger_fries only, its example image. Images are JPEG as the original
  writes them; the text is the original's (``single_paper_prompt``, ``single_paper_info``). The reply's
  ``executable_plan`` goes to ``loop_paper`` as the model wrote it; ``paper_actions`` reads it as the original.
* "mallvi": mallvi's own prompt (``single_prompt``, ``single_info``), both views in both tiers, the example image
  only from ``--example-images``, actions read leniently here (``single_parse``) and run by ``loop``.

Talks to any OpenAI-compatible endpoint via ChatOpenAI.
"""

from __future__ import annotations

import ast
import base64
import io
import json
import logging
import os
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mallvi.bench.agents import single_paper_prompt as paper
from mallvi.bench.agents.agent_protocols import PlanReply, TurnRecord
from mallvi.bench.agents.single_info import example_reply, guide
from mallvi.bench.agents.single_paper_info import EpisodeFacts, assistant_info, episode_facts
from mallvi.bench.agents.single_parse import lenient_action
from mallvi.bench.agents.single_prompt import grounding_prompt, planning_prompt
from mallvi.bench.bench_config import BenchConfig
from mallvi.bench.tasks.grounding import GroundingTask
from mallvi.bench.tasks.task_base import BenchTask, BenchWorld, task_object_names
from mallvi.graph.backends.llm.errors import describe, token_count
from mallvi.tracing.trace import TraceWriter

log = logging.getLogger(__name__)

MAX_OUTPUT_TOKENS = 4096
#: the camera that gives the third-person view beside the head camera
THIRD_VIEW_CAMERA = "front"


class ReplyParseError(ValueError):
    """The model's reply holds no usable JSON object."""


def parse_json_object(text: str) -> dict[str, Any]:
    """The outermost JSON object in a model reply (code fences and surrounding prose are tolerated)."""
    cleaned = re.sub(r"```(?:json)?", "", text).strip()
    start, end = cleaned.find("{"), cleaned.rfind("}")
    if start < 0 or end <= start:
        raise ReplyParseError("the reply contains no JSON object")
    body = cleaned[start : end + 1]
    try:
        value = json.loads(body)
    except json.JSONDecodeError as e:
        try:  # Python-style dicts with single quotes, True/False/None
            value = ast.literal_eval(body)
        except (ValueError, SyntaxError):
            raise ReplyParseError(f"the reply is not valid JSON: {e}") from None
    if not isinstance(value, dict):
        raise ReplyParseError("the reply's top level is not a JSON object")
    return value


def plan_actions(reply: Mapping[str, Any], tier: str) -> list[Any]:
    """``executable_plan`` as a list of actions (a JSON string inside the object is accepted too)."""
    plan = reply.get("executable_plan")
    if isinstance(plan, str):
        plan = parse_json_array(plan)
    if not isinstance(plan, list):
        raise ReplyParseError("executable_plan must be a list of actions")
    if tier == "fine":
        for a in plan:
            if not (isinstance(a, list) and len(a) == 16 and all(isinstance(v, int | float) for v in a)):
                raise ReplyParseError("every fine-grained action must be a list of 16 numbers")
    else:
        if not all(isinstance(a, dict) for a in plan):
            raise ReplyParseError("every action must be a JSON object")
    return plan


def parse_json_array(text: str) -> Any:
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        raise ReplyParseError("executable_plan holds no JSON array")
    try:
        return json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        try:
            return ast.literal_eval(text[start : end + 1])
        except (ValueError, SyntaxError) as e:
            raise ReplyParseError(f"executable_plan is not valid JSON: {e}") from None


def png_data_url(rgb: NDArray[np.uint8]) -> str:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb)).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


#: the original writes each observation with OpenCV's default JPEG quality
JPEG_QUALITY = 95


def jpeg_data_url(rgb: NDArray[np.uint8]) -> str:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb)).save(buf, format="JPEG", quality=JPEG_QUALITY)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def paper_plan(reply: Mapping[str, Any]) -> Any:
    """``executable_plan`` as the original takes it: the value as written; an empty list, a missing key or
    anything that is not a list, text or object counts as no plan (``{}``)."""
    plan = reply.get("executable_plan", {})
    if isinstance(plan, list | str | dict) and plan:
        return plan
    return {}


class SingleAgent:
    """One model, temperature 0, up to 4096 output tokens; implements ``Planner`` and ``GroundingAnswerer``."""

    name = "single"

    def __init__(self, chat: Any, model: str, example_dir: str | None = None, protocol: str = "paper") -> None:
        self.chat = chat
        self.model = model
        self.example_dir = example_dir  # a folder of <task>.png example images (the original's script/example_img)
        self.protocol = protocol
        self.trace: TraceWriter | None = None  # set by the episode runner; every call is recorded there
        #: this episode's model calls, summed as the graph's ``llm_calls`` (the episode record carries them)
        self.llm_calls: dict[str, Any] = {"calls": 0, "failed": 0, "tokens_in": 0, "tokens_out": 0,
                                          "latency_s": 0.0, "by_node": {}}
        self._facts: EpisodeFacts | None = None

    @staticmethod
    def from_config(cfg: BenchConfig) -> SingleAgent:
        from langchain_openai import ChatOpenAI

        model = cfg.llm.get("vlm_model") or cfg.llm.get("model") or "gpt-4o-mini"
        chat = ChatOpenAI(
            model=model, base_url=cfg.llm["base_url"], api_key=os.environ.get("OPENAI_API_KEY") or "unused",  # type: ignore[arg-type]
            temperature=0, max_completion_tokens=MAX_OUTPUT_TOKENS, timeout=float(cfg.llm.get("timeout_s", 120)),
            max_retries=3,
        )  # fmt: skip
        return SingleAgent(chat, model, cfg.llm.get("example_images"), cfg.single_protocol)

    # -- Planner -----------------------------------------------------------------------------------------------
    def reset(self, task: BenchTask, world: BenchWorld) -> None:
        """The paper protocol takes the episode's facts now (the arms' initial poses, the original's draws)."""
        self._facts = episode_facts(task, world) if self.protocol == "paper" else None

    def plan(self, task: BenchTask, world: BenchWorld, history: Sequence[TurnRecord], turn: int) -> PlanReply:
        if self.protocol == "paper":
            return self._plan_paper(task, world, history)
        instruction = getattr(world, "instruction", "") or task.instruction
        example_png = self.example_image(task.name)
        text = planning_prompt(
            task.name, instruction, task.tier, task.chunk, task.hints(world), history, first_turn=turn == 0,
            guide=guide(task.name, task.tier), example=example_reply(task_object_names(world), task.tier),
            example_image=example_png is not None,
        )  # fmt: skip
        raw = self._ask(text, world, third_view=True, example_png=example_png)
        try:
            actions = plan_actions(parse_json_object(raw), task.tier)
        except ReplyParseError as e:
            return PlanReply([], raw=raw, error=str(e))
        if task.tier != "fine":
            actions = [lenient_action(task.name, a, world.objects) for a in actions]
        return PlanReply(actions, raw=raw)

    def _plan_paper(self, task: BenchTask, world: BenchWorld, history: Sequence[TurnRecord]) -> PlanReply:
        """One turn of the original's protocol (see the module docstring)."""
        if self._facts is None:
            self._facts = episode_facts(task, world)
        text = paper.turn_text(task.name, task.tier, history, assistant_info(task, world, self._facts))
        name = paper.example_image_name(task.name, task.tier)
        example = None if name is None else self._example_file(name) or paper.packaged_example(name)
        raw = self._ask(text, world, third_view=task.tier == "planning", example_png=example, jpeg=True)
        try:
            plan = paper_plan(parse_json_object(raw))
        except ReplyParseError as e:
            return PlanReply([], raw=raw, error=str(e), plan={})
        return PlanReply(plan if isinstance(plan, list) else [], raw=raw, plan=plan)

    def example_image(self, task_name: str) -> bytes | None:
        """The task's example image (PNG bytes) from the example folder, or None without one."""
        return self._example_file(f"{task_name.removesuffix('_ee')}.png")

    def _example_file(self, file_name: str) -> bytes | None:
        """``file_name`` from the ``--example-images`` folder, or None (no folder, no such file)."""
        if not self.example_dir:
            return None
        path = os.path.join(self.example_dir, file_name)
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as fh:
            return fh.read()

    # -- GroundingAnswerer -------------------------------------------------------------------------------------
    def answer(self, task: BenchTask, world: BenchWorld, attempt: int) -> Mapping[str, str | None] | None:
        if not isinstance(task, GroundingTask):
            raise TypeError(f"{task.name} is not a grounding task")
        blocks = list(task.blocks_x(world))
        raw = self._ask(grounding_prompt(blocks), world)
        try:
            reply = parse_json_object(raw)
        except ReplyParseError:
            return None
        results = reply.get("results")
        if not isinstance(results, list):
            return None
        out: dict[str, str | None] = dict.fromkeys(blocks)
        for item in results:
            if isinstance(item, dict):
                name = str(item.get("object", "")).strip().strip("()").lower()
                arm = str(item.get("use_arm", "")).strip().lower()
                if name in out and arm in ("left", "right"):
                    out[name] = arm
        return out

    def _ask(self, text: str, world: BenchWorld, third_view: bool = False, example_png: bytes | None = None,
             jpeg: bool = False) -> str:  # fmt: skip
        """One user message, ordered as the original's: head image, third view, text, example image."""
        from langchain_core.messages import HumanMessage

        encode = jpeg_data_url if jpeg else png_data_url
        head = encode(world.observe("head").rgb)
        content: list[str | dict[str, Any]] = [{"type": "image_url", "image_url": {"url": head}}]
        if third_view and THIRD_VIEW_CAMERA in getattr(world, "camera_names", []):
            third = world.observe(THIRD_VIEW_CAMERA).rgb
            content.append({"type": "image_url", "image_url": {"url": encode(third)}})
        content.append({"type": "text", "text": text})
        if example_png is not None:
            url = "data:image/png;base64," + base64.b64encode(example_png).decode("ascii")
            content.append({"type": "image_url", "image_url": {"url": url}})
        t0 = time.perf_counter()
        try:
            reply = self.chat.invoke([HumanMessage(content=content)])
        except Exception as e:  # re-raised without the original, whose text may quote the API key
            message = describe(e, (os.environ.get("OPENAI_API_KEY", ""),))
            self._record(text, "", time.perf_counter() - t0, None, message)
            raise RuntimeError(f"the model call failed: {message}") from None
        out = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
        self._record(text, out, time.perf_counter() - t0, getattr(reply, "usage_metadata", None), None)
        return out

    def _record(self, prompt: str, response: str, latency_s: float, usage: Any, error: str | None) -> None:
        usage = usage or {}
        calls = self.llm_calls
        calls["calls"] += 1
        calls["failed"] += int(error is not None)
        calls["tokens_in"] += token_count(usage.get("input_tokens"))
        calls["tokens_out"] += token_count(usage.get("output_tokens"))
        calls["latency_s"] += latency_s
        calls["by_node"]["single"] = calls["by_node"].get("single", 0) + 1
        if self.trace is None:
            return
        self.trace.emit("llm_call", node="single", model=self.model, prompt=prompt, response=response,
                        latency_s=latency_s, tokens_in=usage.get("input_tokens"), tokens_out=usage.get("output_tokens"),
                        error=error)  # fmt: skip
