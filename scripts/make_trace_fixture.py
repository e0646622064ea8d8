"""Record the trace fixtures under tests/fixtures/traces/ from a small MALLVi-shaped LangGraph run.

The graph has the controller's shape (Decomposer and Descriptor in parallel, then per subtask Perceptor →
Grounder → Projector → Thinker → Actor → Reflector, with targeted retries) and a scripted fake chat model;
it is traced by ``TraceCallbackHandler`` exactly as the real graph is. Camera frames are drawn with OpenCV
(a table with three cubes), with detection boxes, a mask and grasp points in the artifact meta.

    .venv/bin/python scripts/make_trace_fixture.py [--out tests/fixtures/traces]

Writes OUT/run_stack (one run: two subtasks, a Grounder retry and an Actor retry after an injected fault) and
OUT/bench_planning (a ``mallvi bench``-shaped folder: results.json, table.md, episodes.jsonl, traces/<episode>/);
with ``--real`` also OUT/real_stack_blocks_two, a run of the real controller (rules backend) in the simulator,
and OUT/bench_real_expert, the output of a real ``mallvi bench`` run (expert agent, no graph nodes).

    .venv/bin/python scripts/make_trace_fixture.py --long-run DIR --size-mb 50

writes only DIR: a long ``--contingency hard``-shaped run of the controller's nodes, retried until its
``events.jsonl`` holds SIZE_MB megabytes (up to 49 retries per subtask, then the next subtask), each node's input
state as large as the controller's summarised state gets in such a run (40-item verdict history and trail), one
camera frame per attempt, a failure report at the end: what the viewer's load figures are measured on.
"""

from __future__ import annotations

import argparse
import json
import operator
import shutil
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

import cv2
import numpy as np
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph

from mallvi.tracing.capture import TraceCallbackHandler
from mallvi.tracing.trace import TraceWriter

W, H = 320, 240
CUBES = {  # name -> (pixel centre, BGR colour, world xyz in metres)
    "red cube": ((110, 150), (40, 40, 210), (-0.12, -0.05, 0.765)),
    "green cube": ((170, 120), (60, 170, 60), (0.02, 0.04, 0.765)),
    "blue cube": ((235, 160), (200, 90, 40), (0.14, -0.08, 0.765)),
}
HALF_PX = 16


class MiniState(TypedDict):
    instruction: str
    subtasks: Annotated[list[str], operator.add]
    subtask_index: int
    attempts: dict[str, int]
    target: str
    verdicts: Annotated[list[dict[str, Any]], operator.add]
    status: str


def draw_scene(cubes: dict[str, tuple[tuple[int, int], tuple[int, int, int], Any]], gripper: bool) -> np.ndarray:
    """A synthetic head-camera frame (RGB): table, cubes, optionally a gripper shadow."""
    img = np.full((H, W, 3), (180, 190, 200), np.uint8)
    cv2.rectangle(img, (20, 60), (300, 230), (95, 125, 160), -1)
    for (u, v), bgr, _ in cubes.values():
        cv2.rectangle(img, (u - HALF_PX, v - HALF_PX), (u + HALF_PX, v + HALF_PX), bgr, -1)
        cv2.rectangle(
            img, (u - HALF_PX, v - HALF_PX), (u + HALF_PX, v - HALF_PX + 5), [min(255, c + 40) for c in bgr], -1
        )
    if gripper:
        cv2.rectangle(img, (150, 10), (190, 70), (70, 70, 70), -1)
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


def build_graph(writer: TraceWriter, scale_s: float, grounder_mistake: bool, actor_fault: bool, give_up: bool) -> Any:
    def llm(replies: list[str], model: str) -> GenericFakeChatModel:
        msgs = [
            AIMessage(
                content=r,
                usage_metadata={"input_tokens": 180 + 7 * len(r), "output_tokens": 8 + len(r) // 4, "total_tokens": 0},
                response_metadata={"model_name": model},
            )
            for r in replies
        ]
        return GenericFakeChatModel(messages=iter(msgs))

    planner = llm(['{"subtasks": ["pick the red cube", "place it on the green cube"]}'], "qwen2.5-7b-instruct")
    describer = llm(
        ['{"objects": ["red cube", "green cube", "blue cube"], "relations": [["red cube", "left of", "green cube"]]}'],
        "qwen2.5-vl-7b",
    )
    thinker_llm = llm(
        ['{"skill": "grasp_actor", "arm": "left", "object": "red cube"}'] * 3
        + ['{"skill": "place_actor", "arm": "left", "target": "green cube", "dz_m": 0.05}'] * 4,
        "qwen2.5-7b-instruct",
    )
    reflector_llm = llm(["verdict recorded"] * 10, "qwen2.5-vl-7b")

    def pause(seconds: float) -> None:
        time.sleep(seconds * scale_s)

    def decomposer(state: MiniState) -> dict[str, Any]:
        reply = planner.invoke(
            [
                SystemMessage(content="You split a manipulation instruction into atomic subtasks. Answer JSON."),
                HumanMessage(content=state["instruction"]),
            ]
        )
        pause(0.4)
        return {"subtasks": json.loads(str(reply.content))["subtasks"]}

    def descriptor(state: MiniState) -> dict[str, Any]:
        describer.invoke(
            [
                SystemMessage(content="Describe the objects on the table and their relations."),
                HumanMessage(
                    content=[
                        {"type": "text", "text": "Head camera:"},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    ]
                ),
            ]
        )
        pause(0.5)
        writer.emit(
            "scene_graph",
            node="descriptor",
            objects=[{"name": n, "position_m": list(c[2]), "extent_m": [0.05, 0.05, 0.05]} for n, c in CUBES.items()],
            relations=[
                ["red cube", "left_of", "green cube"],
                ["blue cube", "right_of", "green cube"],
                ["green cube", "behind", "red cube"],
            ],
        )
        return {}

    def dispatch(state: MiniState) -> dict[str, Any]:
        pause(0.02)
        return {}

    def perceptor(state: MiniState) -> dict[str, Any]:
        pause(0.3)
        frame = draw_scene(CUBES, gripper=False)
        mask = np.zeros((H, W), np.uint8)
        (u, v), _, _ = CUBES["red cube"]
        mask[v - HALF_PX : v + HALF_PX, u - HALF_PX : u + HALF_PX] = 255
        mask_rel = writer.save_image("mask_red_cube", mask, node="perceptor", role="mask", label="red cube")
        boxes = [
            [c[0][0] - HALF_PX - 2, c[0][1] - HALF_PX - 2, c[0][0] + HALF_PX + 2, c[0][1] + HALF_PX + 2, n, s]
            for (n, c), s in zip(CUBES.items(), (0.93, 0.88, 0.81), strict=True)
        ]
        writer.save_image(
            "head_rgb",
            frame,
            node="perceptor",
            camera="head",
            role="rgb",
            boxes=boxes,
            masks=[{"path": mask_rel, "label": "red cube"}],
        )
        return {}

    def grounder(state: MiniState) -> dict[str, Any]:
        pause(0.15)
        idx = str(state["subtask_index"])
        wrong = grounder_mistake and state["subtask_index"] == 0 and state["attempts"].get(idx, 0) == 0
        return {"target": "blue cube" if wrong else ("red cube" if state["subtask_index"] == 0 else "green cube")}

    def projector(state: MiniState) -> dict[str, Any]:
        pause(0.1)
        (u, v), _, _ = CUBES[state["target"]]
        writer.save_image(
            "grasp",
            draw_scene(CUBES, gripper=False),
            node="projector",
            camera="head",
            role="rgb",
            grasp_points=[[u, v, 0.0, state["target"]]],
            boxes=[[u - HALF_PX, v - HALF_PX, u + HALF_PX, v + HALF_PX, state["target"], 1.0]],
        )
        return {}

    def thinker(state: MiniState) -> dict[str, Any]:
        thinker_llm.invoke(
            [
                SystemMessage(content="Choose the skill and its parameters for the subtask. Answer JSON."),
                HumanMessage(
                    content=f"Subtask: {state['subtasks'][state['subtask_index']]}\n"
                    f"Target: {state['target']} at {CUBES[state['target']][2]}"
                ),
            ]
        )
        pause(0.35)
        return {}

    def actor(state: MiniState) -> dict[str, Any]:
        idx = str(state["subtask_index"])
        skill = "grasp_actor" if state["subtask_index"] == 0 else "place_actor"
        pause(0.2)
        if actor_fault and state["subtask_index"] == 1 and state["attempts"].get(idx, 0) == 0:
            writer.emit("fault_injected", skill=skill, fault="slip", detail="object released 2 cm above the target")
            writer.emit(
                "safety_refusal",
                arm="left",
                command="move_by_displacement z=-0.40",
                reason="target below the table plane (z 0.52 < 0.74)",
            )
            writer.emit(
                "actor_command",
                arm="left",
                skill=skill,
                args={"object": state["target"]},
                ok=False,
                message="object slipped from the gripper",
            )
            return {}
        writer.emit(
            "actor_command",
            arm="left",
            skill=skill,
            args={"object": state["target"]},
            ok=True,
            message="Action succeeded.",
        )
        return {}

    def reflector(state: MiniState) -> dict[str, Any]:
        reflector_llm.invoke(
            [
                SystemMessage(content="Judge whether the subtask succeeded from the new image."),
                HumanMessage(content=f"Subtask: {state['subtasks'][state['subtask_index']]}"),
            ]
        )
        pause(0.25)
        (u, v), _, _ = CUBES[state["target"] or "red cube"]
        writer.save_image(
            "after",
            draw_scene(CUBES, gripper=True),
            node="reflector",
            camera="head",
            role="rgb",
            boxes=[[u - HALF_PX - 2, v - HALF_PX - 2, u + HALF_PX + 2, v + HALF_PX + 2, state["target"], 0.9]],
        )
        idx = str(state["subtask_index"])
        tries = state["attempts"].get(idx, 0)
        if give_up and state["subtask_index"] == 1:
            verdict = {
                "verdict": "failure",
                "blamed_agent": "actor",
                "failure_category": "execution",
                "explanation": "the red cube is not on the green cube",
            }
        elif state["subtask_index"] == 0 and state["target"] != "red cube":
            verdict = {
                "verdict": "failure",
                "blamed_agent": "grounder",
                "failure_category": "wrong_object",
                "explanation": "the gripper holds the blue cube; the subtask asks for the red one",
            }
        elif actor_fault and state["subtask_index"] == 1 and tries == 0:
            verdict = {
                "verdict": "failure",
                "blamed_agent": "actor",
                "failure_category": "execution",
                "explanation": "the cube slipped; retry the placement",
            }
        else:
            verdict = {
                "verdict": "success",
                "blamed_agent": None,
                "failure_category": None,
                "explanation": "post-condition holds",
            }
        out: dict[str, Any] = {"verdicts": [verdict]}
        if verdict["verdict"] == "failure":
            out["attempts"] = {**state["attempts"], idx: tries + 1}
            if tries + 1 >= 2 and give_up:
                out["status"] = "failed"
        else:
            out["subtask_index"] = state["subtask_index"] + 1
        return out

    def route(state: MiniState) -> str:
        last = state["verdicts"][-1]
        if state.get("status") == "failed":
            return END
        if last["verdict"] == "failure":
            return str(last["blamed_agent"])
        return "dispatch" if state["subtask_index"] < len(state["subtasks"]) else END

    g = StateGraph(MiniState)
    for name, fn in [
        ("decomposer", decomposer),
        ("descriptor", descriptor),
        ("dispatch", dispatch),
        ("perceptor", perceptor),
        ("grounder", grounder),
        ("projector", projector),
        ("thinker", thinker),
        ("actor", actor),
        ("reflector", reflector),
    ]:
        g.add_node(name, fn)
    g.add_edge(START, "decomposer")
    g.add_edge(START, "descriptor")
    g.add_edge(["decomposer", "descriptor"], "dispatch")
    for a, b in [
        ("dispatch", "perceptor"),
        ("perceptor", "grounder"),
        ("grounder", "projector"),
        ("projector", "thinker"),
        ("thinker", "actor"),
        ("actor", "reflector"),
    ]:
        g.add_edge(a, b)
    g.add_conditional_edges("reflector", route)
    return g.compile()


def record_run(
    out: Path,
    *,
    task: str,
    seed: int,
    scale_s: float = 1.0,
    grounder_mistake: bool = True,
    actor_fault: bool = True,
    give_up: bool = False,
) -> bool:
    """Run the mini graph once, traced into ``out``; returns whether it succeeded."""
    if out.exists():
        shutil.rmtree(out)
    instruction = "put the red cube on the green cube"
    t0 = time.perf_counter()
    with TraceWriter(out, run_id=f"{task}-{seed}") as writer:
        writer.emit(
            "run_start",
            instruction=instruction,
            task=task,
            seed=seed,
            config={"backend": "llm", "base_url": "http://127.0.0.1:8000/v1", "api_key": "sk-fixture-not-a-key"},
        )
        graph = build_graph(writer, scale_s, grounder_mistake, actor_fault, give_up)
        state = {
            "instruction": instruction,
            "subtasks": [],
            "subtask_index": 0,
            "attempts": {},
            "target": "",
            "verdicts": [],
            "status": "running",
        }
        final = graph.invoke(state, config={"callbacks": [TraceCallbackHandler(writer)], "recursion_limit": 80})
        ok = final.get("status") != "failed"
        writer.emit(
            "run_end",
            status="succeeded" if ok else "failed",
            success=ok,
            graph_success=ok,
            wall_s=round(time.perf_counter() - t0, 3),
            failure_report=None if ok else {"subtask_index": 1, "reason": "attempt budget exhausted"},
        )
    return ok


def record_bench(out: Path) -> None:
    """A small ``mallvi bench``-shaped folder with per-episode traces."""
    if out.exists():
        shutil.rmtree(out)
    episodes: list[dict[str, Any]] = []
    plan = [
        ("stack_blocks_three", 100000, {}),
        ("stack_blocks_three", 100001, {"give_up": True}),
        ("blocks_ranking_rgb", 100000, {"grounder_mistake": False, "actor_fault": False}),
    ]
    for task, seed, opts in plan:
        name = f"{task}-{seed}"
        t0 = time.perf_counter()
        ok = record_run(out / "traces" / name, task=task, seed=seed, scale_s=0.15, **opts)
        episodes.append(
            {
                "task": task,
                "seed": seed,
                "status": "done",
                "success": ok,
                "wall_s": round(time.perf_counter() - t0, 3),
                "trace": f"traces/{name}",
            }
        )
    with open(out / "episodes.jsonl", "w") as fh:
        for ep in episodes:
            fh.write(json.dumps(ep) + "\n")
    tasks: dict[str, dict[str, Any]] = {}
    for ep in episodes:
        t = tasks.setdefault(ep["task"], {"episodes": 0, "successes": 0})
        t["episodes"] += 1
        t["successes"] += int(ep["success"])
    for t in tasks.values():
        t["success_rate"] = t["successes"] / t["episodes"]
    results = {"config": {"tier": "planning", "agent": "mallvi", "backend": "llm", "episodes": 2}, "tasks": tasks}
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = ["| task | episodes | success % |", "|---|---|---|"]
    lines += [f"| {k} | {v['episodes']} | {100 * v['success_rate']:.1f} |" for k, v in tasks.items()]
    (out / "table.md").write_text("\n".join(lines) + "\n")


LONG_RUN_NODES = (  # node, seconds it takes (the rules backend's Reflector and Dispatch take about a millisecond)
    ("dispatch", 0.001), ("perceptor", 0.8), ("grounder", 0.05), ("projector", 0.02), ("thinker", 0.3),
    ("approve", 0.001), ("actor", 6.0), ("reflector", 0.002),
)
LONG_RUN_FAILURES = (("execution", "actor", "the block slipped from the gripper during transport"),
                     ("place_off_target", "thinker", "the green block rests 4 cm beside the red block"),
                     ("knocked_over", "actor", "the red block was knocked over by the approach"),
                     ("wrong_object", "grounder", "the gripper holds the blue block; the subtask names the green one"))
MAX_RETRIES_PER_SUBTASK = 49


def record_long_run(out: Path, size_mb: float, seed: int = 7) -> dict[str, Any]:
    """A long, retry-heavy run of the controller's shape, written event by event until ``size_mb`` MB."""
    if out.exists():
        shutil.rmtree(out)
    (out / "artifacts").mkdir(parents=True)
    rng = np.random.default_rng(seed)
    target = int(size_mb * 1024 * 1024)
    t = 1_790_000_000.0
    seq = 0
    history: list[dict[str, Any]] = []
    trail: list[str] = []
    fh = open(out / "events.jsonl", "w", encoding="utf-8")  # noqa: SIM115 - closed below

    def emit(kind: str, **fields: Any) -> int:
        nonlocal seq
        line = json.dumps({"v": 1, "seq": seq, "t": round(t, 4), "run_id": "longrun", "kind": kind, **fields})
        fh.write(line + "\n")
        seq += 1
        return fh.tell()

    emit("run_start", instruction="stack the green block on the red block", task="stack_blocks_three", seed=seed,
         config={"backend": "rules", "perception": "color", "robot": "sim", "reflector": True,
                 "contingency": "hard"}, station="sim", privileged=["objects resolved from simulator truth"])
    distractors = [{"name": f"distractor {k}", "position_m": [-0.4 + 0.08 * k, 0.2, 0.76],
                    "extent_m": [0.04, 0.04, 0.08], "color": "grey", "label": "cup"} for k in range(10)]
    scene = {"objects": [{"name": n, "position_m": list(c[2]), "extent_m": [0.05, 0.05, 0.05],
                          "color": n.split()[0], "label": "block"} for n, c in CUBES.items()] + distractors,
             "relations": [["red cube", "left_of", "green cube"], ["blue cube", "right_of", "green cube"]]}
    subtasks = [f"stack block {i} on the tower" for i in range(1, 9)]
    size, subtask, attempt, attempts_made = 0, 0, 1, 0
    while size < target:
        span_tag = f"{subtask}-{attempt}"
        for node, seconds in LONG_RUN_NODES:
            span = f"{node}-{span_tag}"
            state = {
                "instruction": "stack the green block on the red block",
                "plan": {"subtasks": [{"index": i, "text": text, "action": "stack"} for i, text in
                                      enumerate(subtasks)]},
                "scene": scene, "subtask_index": subtask, "attempts": {str(subtask): attempt - 1},
                "detections": {n: {"box_xyxy": [c[0][0] - 16, c[0][1] - 16, c[0][0] + 16, c[0][1] + 16],
                                   "label": n, "score": 0.9} for n, c in CUBES.items()},
                "localized": {n: {"position_m": list(c[2]), "grasp_yaw_rad": 0.3} for n, c in CUBES.items()},
                "history": history[-40:], "trail": trail[-40:], "status": "running",
                "llm_calls": [{"node": n, "model": "qwen2.5-vl-7b", "latency_s": 1.2 + 0.01 * k, "tokens_in": 1850 + k,
                               "tokens_out": 120, "decoding": "json_schema", "attempt": k,
                               "summary": f"{n} answered for subtask {subtask}: place the green block on the red "
                                          f"block at ({0.01 * k:.2f}, 0.04, 0.79)"}
                              for k, n in enumerate(["thinker", "reflector"] * 20)],
                "tried": [f"strategy {k}: top-down grasp, approach {k * 7 % 90} degrees, failed with "
                          f"{LONG_RUN_FAILURES[k % 4][0]}" for k in range(min(attempt, 40))],
            }
            emit("node_start", node=node, attempt=attempt, subtask_index=subtask, run_count=attempt, span=span,
                 step=seq, inputs=state)
            t += seconds
            outputs: dict[str, Any] = {"trail": [f"{node}: subtask {subtask} attempt {attempt}"]}
            route: Any = "next"
            if node == "actor":
                category, blamed, why = LONG_RUN_FAILURES[attempts_made % 4]
                emit("fault_injected", skill="place_actor", fault=category, detail={"object": "green cube"})
                emit("actor_command", arm="left", skill="place_actor", args={"object": "green cube",
                     "target": "red cube"}, ok=False, message=why, failure_kind=category)
            if node == "reflector":
                category, blamed, why = LONG_RUN_FAILURES[attempts_made % 4]
                verdict = {"verdict": "failure", "failure_category": category, "blamed_agent": blamed,
                           "explanation": why, "failed_step": {"skill": "place_actor", "arm": "left"}}
                frame = draw_scene(CUBES, gripper=True)
                frame[rng.integers(0, H), :, :] = rng.integers(0, 255, 3)  # a different picture each attempt
                rel = f"artifacts/{seq:06d}_reflector.png"
                cv2.imwrite(str(out / rel), cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
                emit("artifact", name="reflector", path=rel, node="reflector",
                     meta={"camera": "head", "role": "rgb", "boxes": [[94, 134, 126, 166, "red cube", 0.9]]})
                outputs["reflection"] = verdict
                route = blamed
                history.append(verdict)
                emit("verdict", node="reflector", subtask_index=subtask, route_to=blamed, **verdict)
            trail.append(f"{node} (subtask {subtask}, attempt {attempt}): {route}")
            size = emit("node_end", node=node, attempt=attempt, subtask_index=subtask, span=span,
                        duration_s=seconds, outcome="ok", outputs=outputs, route=route)
        attempts_made += 1
        attempt += 1
        if attempt > MAX_RETRIES_PER_SUBTASK + 1:
            subtask, attempt = subtask + 1, 1
    report = {"subtask_index": subtask, "subtask": subtasks[subtask % len(subtasks)],
              "reason": "the attempt budget is spent", "attempts": attempt - 1, "history": history[-attempt + 1:],
              "tried": [f"attempt {k}: {LONG_RUN_FAILURES[k % 4][0]}" for k in range(1, attempt)]}
    emit("run_end", status="failed", success=False, graph_success=False, wall_s=round(t - 1_790_000_000.0, 3),
         failure_report=report)
    fh.close()
    return {"events": seq, "attempts": attempts_made, "bytes": (out / "events.jsonl").stat().st_size}


def record_real_run(out: Path, task: str, seed: int) -> None:
    """A run of the real controller (rules backend) on the SAPIEN scene, traced as ``mallvi run`` traces it."""
    from mallvi.bench.task_scenes import scene_catalog
    from mallvi.config import RunConfig
    from mallvi.orchestration.run_instruction import run
    from mallvi.orchestration.stations import RunRequest

    if out.exists():
        shutil.rmtree(out)
    result = run(RunRequest(task=task, seed=seed, trace_dir=out), RunConfig(), catalog=scene_catalog())
    print(f"real run {task} seed {seed}: success={result.success} status={result.status} attempts={result.attempts}")


def record_real_bench(out: Path) -> None:
    """A real ``mallvi bench`` run (expert agent, one episode of two Tier 2 tasks): its output folder as is."""
    import subprocess
    import sys

    if out.exists():
        shutil.rmtree(out)
    cmd = [
        sys.executable,
        "-m",
        "mallvi.cli",
        "bench",
        "--tier",
        "planning",
        "--tasks",
        "stack_blocks_three,blocks_ranking_rgb",
        "--episodes",
        "1",
        "--agent",
        "expert",
        "--workers",
        "1",
        "--out",
        str(out),
    ]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("tests/fixtures/traces"))
    parser.add_argument("--real", action="store_true", help="also record real simulator runs (about a minute)")
    parser.add_argument("--long-run", type=Path, help="write only a long retry-heavy run into this folder")
    parser.add_argument("--size-mb", type=float, default=50.0, help="the long run's events.jsonl size (MB)")
    args = parser.parse_args()
    if args.long_run is not None:
        made = record_long_run(args.long_run, args.size_mb)
        print(f"wrote {args.long_run}: {made['events']} events, {made['attempts']} attempts, "
              f"{made['bytes'] / 1e6:.1f} MB")
        return
    record_run(args.out / "run_stack", task="stack_blocks_three", seed=100003)
    record_bench(args.out / "bench_planning")
    print(f"wrote {args.out}/run_stack and {args.out}/bench_planning")
    if args.real:
        record_real_run(args.out / "real_stack_blocks_two", "stack_blocks_two", 100000)
        record_real_bench(args.out / "bench_real_expert")


if __name__ == "__main__":
    main()
