"""The Dash trace viewer: run list, one run's timeline and steps, the benchmark page; live while runs grow.

Pages: ``/`` (runs), ``/run?path=KEY`` (one run), ``/bench?path=KEY`` (a ``mallvi bench`` folder); ``/download``
serves a step's long texts whole (see ``fulltext``), ``/image`` and ``/video`` a run's pictures and recordings
(see ``media``). Everything is served from this process (Dash's bundled scripts, no external stylesheets or
CDNs); no debug mode. A request the viewer cannot answer gets a short plain-text status, never a traceback.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

import dash
from dash import ClientsideFunction, Dash, Input, Output, State, dcc, html
from dash.exceptions import DependencyException, PreventUpdate
from flask import Response, request
from werkzeug.exceptions import HTTPException

from mallvi.logviz.components.bench import bench_page
from mallvi.logviz.components.runlist import filter_options, filter_runs, run_table
from mallvi.logviz.components.step import run_events_panel, step_panel
from mallvi.logviz.components.timeline import (
    BY_ATTEMPT,
    BY_NODE,
    attempt_pages,
    default_layout,
    last_page,
    timeline_figure,
)
from mallvi.logviz.fulltext import download_name, full_text
from mallvi.logviz.links import video_href
from mallvi.logviz.media import image_png, ranged_file_response, video_path
from mallvi.logviz.reader import RunSummary
from mallvi.logviz.run_index import RootNotFoundError, RunCatalog
from mallvi.logviz.run_text import failure_report_text, graph_status_text, outcome_text

log = logging.getLogger(__name__)

ASSETS = Path(__file__).parent / "assets"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8050


def create_app(root: str | Path, poll_ms: int = 1000) -> Dash:
    """A viewer for the traces under ``root`` (see ``RunCatalog``); polls for new events every ``poll_ms``."""
    catalog = RunCatalog(root)
    app = Dash(
        __name__,
        title="mallvi traces",
        serve_locally=True,
        external_stylesheets=[],
        external_scripts=[],
        assets_folder=str(ASSETS),
        suppress_callback_exceptions=True,
        update_title="",
        enable_mcp=False,  # no model-context endpoint, whatever the environment says
    )
    app.layout = html.Div(
        [
            dcc.Location(id="url"),
            dcc.Interval(id="tick", interval=poll_ms),
            html.Header(id="nav", className="nav"),
            html.Main(id="page"),
        ]
    )
    _register(app, catalog)
    return app


class ServeError(ValueError):
    """The viewer cannot be served as asked (bad folder, address in use)."""


def check_serve_args(root: str | Path, host: str, port: int) -> RunCatalog:
    """Validate the viewer's folder and address before serving; returns the catalog of what was found.

    Raises:
        ServeError: the folder does not exist, the port is out of range, or the address cannot be bound.
    """
    try:
        catalog = RunCatalog(root)
    except RootNotFoundError as e:
        raise ServeError(str(e)) from e
    if not 0 < port < 65536:
        raise ServeError(f"port must be 1..65535, got {port}")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise ServeError(f"cannot resolve host {host!r}: {e}") from e
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # as the server itself does: a port left in TIME_WAIT by a closed viewer's connections is free to reuse
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as e:
            raise ServeError(f"cannot listen on {host}:{port}: {e.strerror or e}") from e
    return catalog


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine."""
    return host in ("localhost", "::1") or host.startswith("127.")


def serve(root: str | Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    """Run the viewer until interrupted (blocking)."""
    app = create_app(root)
    log.info("trace viewer on http://%s:%d for %s", host, port, root)
    app.run(host=host, port=port, debug=False, dev_tools_ui=False, dev_tools_hot_reload=False)


def _register(app: Dash, catalog: RunCatalog) -> None:
    server = app.server
    server.add_url_rule("/download", "download", lambda: _download(catalog))
    server.add_url_rule("/image", "image", lambda: _image(catalog))
    server.add_url_rule("/video", "video", lambda: _video(catalog))

    @server.before_request
    def refuse_dot_segments() -> Response | None:
        """A path with ``..`` or ``.`` segments (raw or %-encoded) names nothing the viewer serves."""
        segments = request.path.replace("\\", "/").split("/")
        if any(seg in ("..", ".") for seg in segments) or "\x00" in request.path:
            return _plain("not found", 404)
        return None

    @server.errorhandler(DependencyException)
    def unknown_component_file(e: DependencyException) -> Response:  # Dash's answer to an unregistered script
        log.info("no such script: %s", request.path)
        return _plain("not found", 404)

    @server.errorhandler(Exception)
    def unexpected(e: Exception) -> Response | HTTPException:
        if isinstance(e, HTTPException):
            return e
        log.warning("the viewer could not answer %s: %s: %s", request.path, type(e).__name__, str(e)[:300])
        return _plain("the viewer could not answer this request (see its log)", 500)

    @app.callback(
        Output("nav", "children"), Output("page", "children"), Input("url", "pathname"), Input("url", "search")
    )
    def route(pathname: str | None, search: str | None) -> tuple[list[Any], Any]:
        catalog.scan(force=True)
        key = _query_path(search)
        if pathname == "/run" and key is not None:
            page = _run_page(catalog, key)
        elif pathname == "/bench" and key is not None:
            bench_dir = catalog.bench_dir(key)
            page = bench_page(bench_dir, key, set(catalog.keys())) if bench_dir else _missing(f"benchmark {key!r}")
        else:
            page = _list_page()
        return _nav(catalog), page

    @app.callback(
        Output("run-list", "children"),
        Output("filter-task", "options"),
        Output("filter-outcome", "options"),
        Output("list-signature", "data"),
        Input("tick", "n_intervals"),
        Input("filter-task", "value"),
        Input("filter-outcome", "value"),
        State("list-signature", "data"),
    )
    def update_list(_: Any, tasks: list[str] | None, outcomes: list[str] | None, seen: Any) -> tuple[Any, ...]:
        signature = [list(catalog.signature()), tasks, outcomes]
        if dash.ctx.triggered_id == "tick" and signature == seen:
            raise PreventUpdate
        runs = catalog.runs()
        task_options, outcome_options = filter_options(runs)
        return run_table(filter_runs(runs, tasks, outcomes)), task_options, outcome_options, signature

    @app.callback(
        Output("timeline", "figure"),
        Output("run-header", "children"),
        Output("step-select", "options"),
        Output("run-events-container", "children"),
        Output("run-signature", "data"),
        Output("timeline-page", "options"),
        Output("timeline-page", "style"),
        Input("tick", "n_intervals"),
        Input("timeline-layout", "value"),
        Input("timeline-page", "value"),
        State("run-key", "data"),
        State("run-signature", "data"),
    )
    def update_run(_: Any, layout: str | None, first_row: int | None, key: str | None, seen: Any) -> tuple[Any, ...]:
        run = catalog.run(key) if key else None
        if run is None:
            raise PreventUpdate
        signature = _run_signature(run, layout, first_row)
        if signature == seen:
            raise PreventUpdate
        figure = timeline_figure(run, layout, first_row)
        pages, style = _page_choice(run, layout)
        if dash.ctx.triggered_id in ("timeline-layout", "timeline-page"):  # only the timeline changes
            return figure, dash.no_update, dash.no_update, dash.no_update, signature, pages, style
        return figure, _run_header(run), _step_options(run), run_events_panel(run, key), signature, pages, style

    app.clientside_callback(
        ClientsideFunction(namespace="mallvi", function_name="seekVideo"),
        Output("video-seek", "data"),
        Input("timeline", "clickData"),
        State("video-times", "data"),
        prevent_initial_call=True,
    )

    @app.callback(
        Output("step-index", "data"),
        Input("timeline", "clickData"),
        Input("step-select", "value"),
        prevent_initial_call=True,
    )
    def select_step(click: dict[str, Any] | None, selected: int | None) -> int | None:
        """The step a bar stands for (its ``customdata`` starts with the execution's index)."""
        if dash.ctx.triggered_id != "timeline":
            return selected
        points = (click or {}).get("points") or [{}]
        custom = points[0].get("customdata")
        if isinstance(custom, list):  # [exec index, start time]
            custom = custom[0] if custom else None
        if not isinstance(custom, int | float):  # e.g. a run-events marker
            raise PreventUpdate
        return int(custom)

    @app.callback(
        Output("step", "children"),
        Input("step-index", "data"),
        Input("run-signature", "data"),  # a live run: the shown step updates as its events arrive
        State("run-key", "data"),
    )
    def show_step(index: int | None, _: Any, key: str | None) -> Any:
        run = catalog.run(key) if key else None
        if run is None:
            raise PreventUpdate
        if index is None:
            return html.Div("Click a bar of the timeline to see that step.", className="empty")
        return step_panel(run, index, key)


def _download(catalog: RunCatalog) -> Response:
    """The whole text behind a step's "download" link (plain text, as an attachment); 404 for a bad link."""
    args = request.args
    key, part = args.get("path"), args.get("part", "")
    try:
        exec_index = int(args.get("exec", ""))
        call = int(args["call"]) if "call" in args else None
    except ValueError:
        return Response("bad download link\n", status=400, mimetype="text/plain")
    run = catalog.run(key) if key else None
    text = full_text(run, exec_index, part, call) if run is not None and key is not None else None
    if text is None or key is None:
        return Response("nothing to download here\n", status=404, mimetype="text/plain")
    name = download_name(key, exec_index, part, call)
    return Response(text, mimetype="text/plain; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


def _image(catalog: RunCatalog) -> Response:
    """A run's picture with its overlays (PNG); 404 for a link that names nothing readable."""
    args = request.args
    key = args.get("path")
    try:
        seq, exec_index = int(args.get("seq", "")), int(args.get("exec", ""))
    except ValueError:
        return _plain("bad image link", 400)
    run = catalog.run(key) if key else None
    data = image_png(run, seq, exec_index) if run is not None else None
    if data is None:
        return _plain("no such image", 404)
    return Response(data, mimetype="image/png", headers={"Cache-Control": "max-age=3600"})


def _video(catalog: RunCatalog) -> Response:
    """A run's recorded video, in the byte ranges the browser asks for; 404 for a link that names none."""
    key = request.args.get("path")
    try:
        number = int(request.args.get("n", ""))
    except ValueError:
        return _plain("bad video link", 400)
    run = catalog.run(key) if key else None
    path = video_path(run, number) if run is not None else None
    if path is None:
        return _plain("no such video", 404)
    return ranged_file_response(path, request, "video/mp4")


def _plain(text: str, status: int) -> Response:
    return Response(text + "\n", status=status, mimetype="text/plain")


def _list_page() -> html.Div:
    return html.Div(
        [
            html.H2("Runs"),
            html.Div(
                [
                    dcc.Dropdown(id="filter-task", multi=True, placeholder="filter by task"),
                    dcc.Dropdown(id="filter-outcome", multi=True, placeholder="filter by outcome"),
                ],
                className="filters",
            ),
            dcc.Store(id="list-signature"),
            html.Div(id="run-list", children=html.Div("loading…", className="empty")),
        ]
    )


def _run_page(catalog: RunCatalog, key: str) -> html.Div:
    run = catalog.run(key)
    if run is None:
        return _missing(f"run {key!r}")
    layout = default_layout(run)
    first_row = last_page(run)
    timeline = dcc.Graph(id="timeline", config={"displaylogo": False},
                         figure=timeline_figure(run, layout, first_row))
    pages, page_style = _page_choice(run, layout)
    return html.Div(
        [
            dcc.Store(id="run-key", data=key),
            dcc.Store(id="run-signature", data=_run_signature(run, layout, first_row)),  # nothing for a first poll
            dcc.Store(id="step-index"),
            dcc.Store(id="video-times", data=_video_times(run)),
            dcc.Store(id="video-seek"),
            html.Div(_run_header(run), id="run-header"),
            dcc.RadioItems(
                id="timeline-layout",
                options=[{"label": "timeline by subtask attempt", "value": BY_ATTEMPT},
                         {"label": "by node", "value": BY_NODE}],
                value=layout,
                inline=True,
                className="timeline-layout",
            ),
            dcc.Dropdown(id="timeline-page", options=pages, value=first_row, clearable=False, style=page_style,
                         className="timeline-page"),
            html.Div([html.Div(timeline, className="timeline-box"), *_video_panel(run, key)],
                     className="timeline-row" + (" with-video" if run.videos else "")),
            dcc.Dropdown(id="step-select", options=_step_options(run), placeholder="…or choose a step"),
            html.Div(id="step", className="step-container"),
            html.Div(run_events_panel(run, key), id="run-events-container"),
        ]
    )


def _run_signature(run: RunSummary, layout: str | None, first_row: int | None) -> list[Any]:
    """What the run's page shows depends on: the events read, the lines skipped, the timeline's layout and page."""
    return [run.n_events, len(run.problems), layout, first_row]


def _page_choice(run: RunSummary, layout: str | None) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The by-attempt pages to choose from; the chooser is hidden when there is one page or another layout."""
    pages = attempt_pages(run)
    shown = (layout or default_layout(run)) == BY_ATTEMPT and len(pages) > 1
    return pages, ({"width": "320px"} if shown else {"display": "none"})


def _video_panel(run: RunSummary, key: str) -> list[Any]:
    """The run's first recorded video beside the timeline (clicking a bar seeks it to that moment)."""
    if not run.videos:
        return []
    video = run.videos[0]
    caption = f"{video.get('camera') or 'camera'}: {video.get('frames') or '?'} frames at {video.get('fps') or '?'} fps"
    return [html.Figure([html.Video(src=video_href(key, 0), id="run-video", controls=True, preload="metadata",
                                    muted=True, className="run-video"),
                         html.Figcaption(caption)], className="video-box")]


def _video_times(run: RunSummary) -> dict[str, Any] | None:
    """What the seek-on-click script needs: the video's frame rate and each frame's Unix time."""
    if not run.videos:
        return None
    video = run.videos[0]
    times = run.event_value(video, "frame_t")
    fps = video.get("fps")
    if not isinstance(times, list) or not isinstance(fps, int | float) or isinstance(fps, bool) or fps <= 0:
        return None
    return {"fps": fps, "t": times}


def _step_options(run: RunSummary) -> list[dict[str, Any]]:
    return [
        {"label": f"{ex.index}: {ex.label} (subtask {ex.subtask_index}, {ex.outcome})", "value": ex.index}
        for ex in run.node_execs
    ]


def _run_header(run: RunSummary) -> html.Div:
    live = html.Span(" ● live", className="live") if run.outcome == "running" else ""
    duration = f"{run.duration_s:.1f} s" if run.duration_s is not None else "-"
    facts = [
        ("task", run.task or "-"),
        ("instruction", run.instruction or "-"),
        ("outcome", outcome_text(run)),
        ("graph status", graph_status_text(run)),
        ("duration", duration),
        ("LLM calls", str(run.llm_calls)),
        ("tokens", f"{run.tokens_in:,} in / {run.tokens_out:,} out"),
        ("node runs", str(len(run.node_execs))),
        *_station_facts(run.run_start),
    ]
    failure = run.run_end.get("failure_report") if run.run_end else None
    children: list[Any] = [
        html.H2([f"Run {run.run_id}", live]),
        html.Table([html.Tr([html.Th(k), html.Td(v)]) for k, v in facts], className="facts", id="run-facts"),
    ]
    if failure:
        children.append(html.H4("Failure report"))
        children.append(html.Pre(failure_report_text(run.event_value(run.run_end, "failure_report")),
                                 className="failure-report", id="failure-report"))
    if run.problems:
        listed = "; ".join(str(p) for p in run.problems[:5]) + (" …" if len(run.problems) > 5 else "")
        children.append(html.Div(f"{len(run.problems)} line(s) of events.jsonl could not be read and are left out: "
                                 f"{listed}", className="problems", id="run-problems"))
    return html.Div(children)


def _station_facts(run_start: dict[str, Any]) -> list[tuple[str, str]]:
    """The Station a run was on and its privileged inputs (traces written before Stations have neither)."""
    if "station" not in run_start:
        return []
    privileged = [str(p) for p in run_start.get("privileged") or []]
    return [("station", str(run_start.get("station") or "-")),
            ("privileged inputs", "; ".join(privileged) if privileged else "none")]


def _nav(catalog: RunCatalog) -> list[Any]:
    links: list[Any] = [html.B("mallvi traces"), dcc.Link("Runs", href="/", id="nav-runs")]
    for i, key in enumerate(catalog.bench_keys):
        label = "Benchmark" if key == "." else f"Benchmark: {key}"
        links.append(dcc.Link(label, href="/bench?path=" + quote(key, safe=""), id=f"nav-bench-{i}"))
    links.append(html.Span(str(catalog.root), className="root"))
    return links


def _missing(what: str) -> html.Div:
    return html.Div(
        [
            html.H2("Not found"),
            html.P(f"There is no {what} under this folder."),
            dcc.Link("back to the runs", href="/"),
        ],
        className="empty",
    )


def _query_path(search: str | None) -> str | None:
    values = parse_qs((search or "").lstrip("?")).get("path")
    return values[0] if values else None
