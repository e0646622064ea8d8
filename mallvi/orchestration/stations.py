"""Opening the Station a run asks for (simulator, twin or rig), and refusing the options it cannot honour.

Every option of ``mallvi run`` is either honoured by a Station or refused here, before anything is built:

| option | sim | twin | rig |
|---|---|---|---|
| a scene (``--task``) and ``--seed`` | needed | needed | refused: a rig's scene is the table in front of it |
| no instruction (the scene's own) | yes | yes | refused |
| ``--perception sim`` | yes | refused | refused |
| ``--contingency`` | yes | yes | refused: faults are simulated |
| ``--calibration`` | refused | needed | needed |
| ``--single-agent``, ``--no-reflector``, ``--approve``, ``--dry-run`` | yes | yes | yes |
| ``--checkpoint``, ``--resume`` | yes | yes | yes |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mallvi.config import ConfigError, RunConfig
from mallvi.contracts.station import Station

if TYPE_CHECKING:
    from mallvi.contracts.world_model import WorldModel
    from mallvi.robot_drivers.calibration.plausibility import ArmLayout
    from mallvi.sim_bridge.scene_catalog import SceneCatalog


class NotAvailableError(ConfigError):
    """An option this build or this Station cannot honour (e.g. mixing the simulator and the real rig)."""


#: the scene name a rig run records (a rig has no scene catalogue)
RIG_TASK = "real_rig"


@dataclass(frozen=True)
class RunRequest:
    """What to run and where its records go.

    Attributes:
        instruction: what to do; None runs the scene's own instruction, judged by its success check.
        task: the scene (simulator and twin); None on the rig.
        seed: the scene's seed (simulator and twin; default 0).
        trace_dir: where the trace goes (None: no trace).
        checkpoint: the SQLite checkpoint file (a paused run can be resumed from it).
        resume_thread: continue this paused run from ``checkpoint``.
        calibration: the twin's or the rig's calibration YAML.
    """

    instruction: str | None = None
    task: str | None = None
    seed: int | None = None
    trace_dir: Path | None = None
    checkpoint: Path | None = None
    resume_thread: str | None = None
    calibration: Path | None = None


@dataclass(frozen=True)
class RigAccess:
    """How a rig run reaches its hardware: RigConfig fields (tests: a virtual CAN bus), a camera frame source and,
    when known, where the rig's arms stand (``layout``: a calibration of another layout is refused)."""

    overrides: dict[str, Any] = field(default_factory=dict)
    camera_source: object | None = None
    layout: ArmLayout | None = None


def station_kind(cfg: RunConfig) -> str:
    """"sim", "twin" or "rig"; NotAvailableError for a mix of the simulator and the real rig."""
    if cfg.robot == "twin":
        return "twin"
    if cfg.robot == "sim" and cfg.camera == "sim":
        return "sim"
    if cfg.robot == "piper" and cfg.camera == "realsense":
        return "rig"
    raise NotAvailableError(f"--robot {cfg.robot} with --camera {cfg.camera}: mixing the simulator and the real rig "
                            "is not supported; use --robot sim --camera sim or --robot piper --camera realsense")


def check_options(cfg: RunConfig, request: RunRequest) -> str:
    """Refuse every option the requested Station cannot honour (ConfigError); return the Station's kind."""
    kind = station_kind(cfg)
    if cfg.single_agent and cfg.approve:
        raise ConfigError("--single-agent and --approve cannot be combined")
    if request.resume_thread is not None and request.checkpoint is None:
        raise ConfigError("--resume needs the paused run's checkpoint (--checkpoint or its --trace-dir)")
    if kind == "sim":
        if request.calibration is not None:
            raise ConfigError("--calibration is for --robot twin or --robot piper; the simulator needs none")
    elif cfg.perception == "sim":
        raise ConfigError(f"--perception sim reads the simulator; the {kind} perceives like a rig: color or neural")
    if kind in ("sim", "twin") and request.task is None:
        raise ConfigError(f"--task is required with --robot {cfg.robot} (the scene to run in)")
    if kind in ("twin", "rig") and request.calibration is None:
        what = "`mallvi calibrate --robot twin`" if kind == "twin" else "`mallvi calibrate`"
        raise ConfigError(f"the {kind} needs --calibration FILE (from {what})")
    if kind == "rig":
        if request.instruction is None:
            raise ConfigError("the real rig needs an instruction")
        if request.task is not None or request.seed is not None:
            raise ConfigError(f"--{'task' if request.task is not None else 'seed'} names a simulated scene; on the "
                              "real rig the scene is the table in front of it")
        if cfg.contingency not in (None, "none"):
            raise ConfigError("--contingency injects simulated faults; the real rig has its own")
    if kind in ("twin", "rig") and request.calibration is not None:  # the options first, then the file
        check_calibration_file(request.calibration)
    return kind


def check_video(cfg: RunConfig, trace_dir: Path | str | None) -> None:
    """``--video`` records a simulated camera into the trace: refused (ConfigError) on the rig or without a trace
    folder, before any file is read."""
    if station_kind(cfg) == "rig" or trace_dir is None:
        raise ConfigError("--video records a simulated camera into the trace: it needs the simulator or the twin "
                          "(--robot sim or twin) and a trace folder")


def check_calibration_file(path: Path) -> None:
    """Load the calibration file (bounded, typed, plausible) before anything is built; ConfigError naming the file
    and the key otherwise. Whether it fits the station's arm layout is checked when the Station opens."""
    from mallvi.robot_drivers.calibration.calibration_files import CalibrationFileError, load_rig_calibration

    try:
        load_rig_calibration(path)
    except CalibrationFileError as e:
        raise ConfigError(str(e)) from e


@dataclass
class OpenedStation:
    """A Station ready for a run, with what judging and tracing it needs.

    Attributes:
        station: the Station (closed by ``close()``).
        instruction: the scene's own instruction ("" on a rig).
        success_check: the scene's own success check (None: judged by the goal predicates or the graph's belief).
        fault_listeners: where a listener for injected faults goes (None: the Station injects none).
    """

    station: Station
    instruction: str = ""
    success_check: Callable[[Any], bool] | None = None
    fault_listeners: list[Callable[[dict[str, Any]], None]] | None = None
    faults: Callable[[], list[Any]] = field(default=lambda: [])

    def close(self) -> None:
        self.station.close()


def open_station(kind: str, cfg: RunConfig, request: RunRequest, world_model: Callable[[], WorldModel], *,
                 catalog: SceneCatalog | None = None, rig: RigAccess | None = None) -> OpenedStation:
    """Build the Station of ``kind`` for ``request`` (ConfigError for a bad scene or calibration)."""
    if kind == "rig":
        return _open_rig(cfg, request, world_model(), rig or RigAccess())
    from mallvi.sim_bridge.contingency_profile import ContingencySpecError
    from mallvi.sim_bridge.scene_catalog import builtin_catalog

    try:
        entry = (catalog if catalog is not None else builtin_catalog()).get(str(request.task))
    except KeyError as e:
        raise ConfigError(str(e)) from e
    contingency = cfg.contingency if cfg.contingency not in (None, "none") else None
    try:
        if kind == "twin":
            station, world = _open_twin(entry.spec, request.seed or 0, request, cfg, contingency, world_model())
        else:
            from mallvi.sim_bridge.sim_station import SimStation
            from mallvi.sim_bridge.world import SimWorld

            world = SimWorld.create(entry.spec, request.seed or 0, contingency=contingency, wrist_cameras=True)
            station = SimStation(world, main_camera=cfg.camera_name)
    except ContingencySpecError as e:
        raise ConfigError(f"--contingency: {e}") from e
    faults = world.faults
    return OpenedStation(station=station, instruction=world.instruction, success_check=entry.success,
                         fault_listeners=faults.listeners if faults is not None else None,
                         faults=lambda: list(getattr(world, "injected_faults", [])))


def _open_twin(scene: Any, seed: int, request: RunRequest, cfg: RunConfig, contingency: str | None,
               world_model: WorldModel) -> tuple[Station, Any]:
    """The rig's Station over the twin of (scene, seed), its drivers and camera calibrated by the request's file."""
    from mallvi.robot_drivers.calibration.calibration_files import CalibrationFileError
    from mallvi.twin.twin_station import TwinStation

    try:
        station = TwinStation.open(scene, seed, str(request.calibration), world_model, dry_run=cfg.dry_run,
                                   contingency=contingency)
    except (CalibrationFileError, ValueError) as e:
        raise ConfigError(str(e)) from e
    return station, station.twin.world


def _open_rig(cfg: RunConfig, request: RunRequest, world_model: WorldModel, rig: RigAccess) -> OpenedStation:
    """Connect the real rig (DriverError when it does not come up) after checking the calibration fits it: its
    bases near the configured table and, when the rig's layout is known, its mounts the rig's."""
    from mallvi.robot_drivers.calibration.calibration_files import (
        CalibrationFileError,
        calibrated_layout,
        load_rig_calibration,
    )
    from mallvi.robot_drivers.calibration.plausibility import LayoutMismatchError, check_over_table, layout_mismatch
    from mallvi.robot_drivers.rig.config_rig import RigConfig
    from mallvi.robot_drivers.rig.rig_station import RigStation

    try:
        rig_cfg = RigConfig(calibration_path=str(request.calibration), dry_run=cfg.dry_run, **rig.overrides)
        calib = load_rig_calibration(rig_cfg.calibration_path)
        check_over_table({s: a.T_world_base for s, a in calib.arms.items()}, rig_cfg.table_top_z_m,
                         rig_cfg.calibration_path, "rig")
        if rig.layout is not None:
            why = layout_mismatch(calibrated_layout(calib, f"the calibration {rig_cfg.calibration_path!r}"),
                                  rig.layout)
            if why is not None:
                raise LayoutMismatchError(f"{why}. Calibrate the rig again: `mallvi calibrate --out FILE "
                                          "--save-views DIR`")
        station = RigStation.connect(rig_cfg, world_model, camera_source=rig.camera_source)
    except (CalibrationFileError, ValueError) as e:
        raise ConfigError(str(e)) from e
    return OpenedStation(station=station)
