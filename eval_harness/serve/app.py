"""The Starlette application: routes -> views -> Jinja templates (autoescaped).

Page handlers are plain functions: Starlette runs them on its thread pool, so reading runs
or drawing a chart never stalls the event loop (and one slow page never blocks another).

Routes (every ``{eval}`` is a catalog key, every other name is checked by ``views``):

    GET  /                          evals
    GET  /e/{eval}                  an eval: matrix, ANOVA, leaderboard, charts, case grid
    GET  /e/{eval}/chart/{name}.svg a chart of the eval (server-rendered SVG)
    GET  /e/{eval}/trends           pass rate / mean composite per condition over time
    GET  /e/{eval}/compare          two conditions, or a baseline file against a condition
    GET  /e/{eval}/case/{case}      one case across every condition and replication
    GET  /e/{eval}/search?q=        case ids, inputs, answers
    GET  /e/{eval}/calibration      judge agreement with the labels (calibrate's numbers)
    POST /e/{eval}/labels           add one label (the only write)
    GET  /token, /e/{eval}/token    change tokens: pages reload when they change
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from eval_harness._util.clock import utc_timestamp
from eval_harness.app.options import AnalysisOptions
from eval_harness.serve import views
from eval_harness.serve.catalog import Catalog, EvalEntry, change_token
from eval_harness.serve.evaldata import WAIT_S, EvalCache, EvalData
from eval_harness.serve.security import Guard, allowed_hosts
from eval_harness.store.labels import (
    LabelRow,
    append_label,
    labels_path,
    latest_labels,
    read_labels_lenient,
)

STATIC = Path(__file__).resolve().parent / "static"
CHARTS = ("means", "main_effects", "interactions", "heatmap", "pareto")
CHART_CSP = "default-src 'none'; style-src 'unsafe-inline'"
_CHART_LOCK = threading.Lock()


class Dashboard:
    """State shared by the routes: the catalog, the analysis cache, the templates."""

    def __init__(self, roots: list[Path], baselines: list[Path], wait_s: float,
                 options: AnalysisOptions | None = None) -> None:
        self.catalog = Catalog(roots)
        self.cache = EvalCache(wait_s=wait_s, options=options)
        self.baselines = baselines
        self._labels: dict[str, tuple[tuple[str, int, int], list[LabelRow], list[str]]] = {}
        self._labels_lock = threading.Lock()
        self.env = Environment(loader=PackageLoader("eval_harness.serve", "templates"),
                               autoescape=select_autoescape(default=True, default_for_string=True))
        self.env.filters["num"] = _num
        self.env.filters["pct"] = lambda x: "—" if x is None else f"{100 * float(x):.0f}%"
        self.env.filters["replace_page"] = _replace_page
        self.env.filters["pretty"] = lambda x: json.dumps(x, indent=2, ensure_ascii=False,
                                                          default=str)

    def render(self, request: Request, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        ctx.setdefault("token", "")
        html = self.env.get_template(name).render(
            csrf=request.scope.get("state", {}).get("csrf_token", ""), request=request, **ctx)
        return HTMLResponse(html, status_code=status, headers={"cache-control": "no-store"})

    def entry(self, request: Request) -> EvalEntry:
        found = self.catalog.get(request.path_params["eval"])
        if found is None:
            raise views.NotFound(f"no eval {request.path_params['eval']!r} under the served roots")
        return found

    def data(self, request: Request) -> tuple[EvalEntry, EvalData | None, dict[str, Any]]:
        """The eval, its analysis (None while the first one is computed), page context."""
        entry = self.entry(request)
        got = self.cache.lookup(entry)
        ctx = {"entry": entry, "token": change_token(entry), "stale": not got.current,
               "error": got.error, "label_problems": self.labels(entry)[1]}
        return entry, got.data, ctx

    def labels(self, entry: EvalEntry) -> tuple[list[LabelRow], list[str]]:
        """(the good labels of the eval, one line per bad line of labels.jsonl: file and
        line, at most 5 and a count), read again only when the file changes."""
        path = labels_path(entry.path)
        try:
            st = os.stat(path)
            key: tuple[str, int, int] = (str(path), st.st_mtime_ns, st.st_size)
        except OSError:
            return [], []
        with self._labels_lock:
            memo = self._labels.get(str(path))
        if memo is not None and memo[0] == key:
            return memo[1], memo[2]
        rows, problems = read_labels_lenient(path)
        shown = [p.one_line() for p in problems[:5]]
        if len(problems) > 5:
            shown.append(f"… and {len(problems) - 5} more bad line(s) in {path}")
        with self._labels_lock:
            self._labels[str(path)] = (key, rows, shown)
        return rows, shown


def _num(x: Any, digits: int = 3) -> str:
    f = views.as_finite(x)
    return "—" if f is None else f"{f:.{digits}g}"


def _replace_page(params: Any, page: int) -> str:
    from urllib.parse import urlencode

    return urlencode({**{k: v for k, v in params.items() if k != "page"}, "page": page})


def _params(request: Request) -> dict[str, str]:
    return {k: v for k, v in request.query_params.items()}


def evals_page(request: Request) -> Response:
    d: Dashboard = request.app.state.dash
    from eval_harness.serve.evaldata import run_meta_cached

    rows = []
    tokens = {}
    for entry in d.catalog.entries().values():
        data = d.cache.cached(entry.key)
        # run.json of each run even before the eval is analysed; read again only when the
        # eval's change token moved
        tokens[entry.key] = change_token(entry)
        metas = list(run_meta_cached(entry, tokens[entry.key]).values())
        finished = sorted(filter(None, (m.finished_at for m in metas)))
        rows.append({"entry": entry, "n_runs": len(entry.runs),
                     "summary": views.frame_summary(data) if data else None,
                     "conditions": len({m.condition_id for m in metas}),
                     "replications": max((m.replication for m in metas), default=0),
                     "run_status": _run_status(metas),
                     "last": finished[-1] if finished else None})
    page = d.render(request, "evals.html", rows=rows, token=_global_token(d, tokens),
                    skipped=d.catalog.skipped)
    warm(request.app.state.dash)  # the evals a person is about to open start analysing
    return page


def _run_status(metas: list[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in metas:
        out[m.status] = out.get(m.status, 0) + 1
    return out


def _global_token(d: Dashboard, known: dict[str, str] | None = None) -> str:
    entries = d.catalog.entries()
    known = known or {}
    return "-".join([str(len(entries))] + [(known.get(e.key) or change_token(e))[:8]
                                           for e in entries.values()])


Builder = Callable[[Request, "Dashboard", EvalEntry, EvalData], dict[str, Any]]


def eval_route(template: str, build: Builder) -> Callable[[Request], Response]:
    """A page of one eval: "analysing…" until its analysis exists, else ``template``
    with what ``build`` returns."""
    def endpoint(request: Request) -> Response:
        d: Dashboard = request.app.state.dash
        entry, data, ctx = d.data(request)
        if data is None:
            return d.render(request, "pending.html", **ctx)
        return d.render(request, template, data=data, **build(request, d, entry, data), **ctx)

    return endpoint


def _eval(request: Request, d: Dashboard, entry: EvalEntry, data: EvalData) -> dict[str, Any]:
    flt = views.parse_grid_filter(data, _params(request))
    return {"report": data.report, "flt": flt, "grid": views.case_grid(data, flt),
            "board": views.leaderboard(data), "judges": views.judge_names(data),
            "verdicts": views.VERDICTS, "counts": views.status_counts(data), "charts": CHARTS,
            "calibration": _calibration(d, entry, data)}


def chart(request: Request) -> Response:
    d: Dashboard = request.app.state.dash
    name = request.path_params["name"]
    if name not in CHARTS:
        raise views.NotFound(f"no chart {name!r}")
    data = d.cache.cached(d.entry(request).key)
    if data is None:
        raise views.NotFound("the eval is still being analysed")
    with _CHART_LOCK:  # matplotlib's pyplot state is not thread-safe
        if name not in data.charts:
            data.charts[name] = _render_chart(name, data.report)
    return Response(data.charts[name], media_type="image/svg+xml",
                    headers={"content-security-policy": CHART_CSP, "cache-control": "no-store"})


def _render_chart(name: str, report: dict[str, Any]) -> str:
    from eval_harness.reports.html import charts as ch

    fn = {"means": ch.means_chart, "main_effects": ch.main_effects_chart,
          "interactions": ch.interaction_chart, "heatmap": ch.heatmap_chart,
          "pareto": ch.pareto_chart}[name]
    made = fn(report)
    if made is None:
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="320" height="40">'
                '<text x="8" y="24" font-family="sans-serif" font-size="13">not enough data '
                'for this chart</text></svg>')
    return made.svg.replace("var(--grid)", "#d5d8dc")


def _trends(request: Request, d: Dashboard, entry: EvalEntry, data: EvalData) -> dict[str, Any]:
    return {"tr": views.trends(data, d.baselines)}


def _compare(request: Request, d: Dashboard, entry: EvalEntry, data: EvalData) -> dict[str, Any]:
    return {"cmp": views.compare(data, _params(request), d.baselines),
            "categories": views.CATEGORIES, "sorts": views.SORTS}


def _case(request: Request, d: Dashboard, entry: EvalEntry, data: EvalData) -> dict[str, Any]:
    from eval_harness.serve.casedata import case_attempts

    case = views.check_case(data, request.path_params["case"])
    labels = latest_labels(d.labels(entry)[0])
    return {"case": case, "attempts": case_attempts(data, case),
            "names": views.condition_labels(data), "expected": data.expected.get(case),
            "has_expected": case in data.expected, "labels": views.label_table(data, labels),
            "calibration": _calibration(d, entry, data)}


def _search(request: Request, d: Dashboard, entry: EvalEntry, data: EvalData) -> dict[str, Any]:
    return {"res": views.search(data, request.query_params.get("q", "")[:200])}


def _calibration_page(request: Request, d: Dashboard, entry: EvalEntry,
                      data: EvalData) -> dict[str, Any]:
    return {"calibration": _calibration(d, entry, data)}


def _calibration(d: Dashboard, entry: EvalEntry, data: EvalData) -> dict[str, Any]:
    """calibrate's report over the eval's good labels; cached until labels.jsonl
    changes (its bad lines are named on the page: ``label_problems``)."""
    from eval_harness.judges.label_match import runs_calibration

    path = labels_path(entry.path)
    try:
        st = os.stat(path)
        key = (st.st_mtime_ns, st.st_size)
    except OSError:
        key = (0, -1)
    memo = data.memo.get("calibration")
    if memo is not None and memo[0] == key:
        return dict(memo[1])
    report = runs_calibration(data.frame, d.labels(entry)[0], source=str(path),
                              pass_mark=data.pass_mark, reps=500)
    data.memo["calibration"] = (key, report)
    return report


async def add_label(request: Request) -> Response:
    d: Dashboard = request.app.state.dash
    entry = d.entry(request)
    data = d.cache.cached(entry.key)
    if data is None:
        return JSONResponse({"error": "the eval is still being analysed"}, status_code=409)
    try:
        body = json.loads(await request.body(), parse_constant=_no_constant)
        if not isinstance(body, dict):
            raise ValueError("the body must be a JSON object")
        run = data.runs[str(body["run"])]
        case = views.check_case(data, str(body["case"]))
        judge = str(body["judge"])
        if judge not in views.judge_names(data):
            raise views.NotFound(f"no judge {judge!r}")
        row = LabelRow(schema_version=1, run=run.run_id, case=case, condition=run.condition_id,
                       replication=run.replication, judge=judge, label=body["label"],
                       who=str(body.get("who") or "")[:80],
                       when=utc_timestamp("seconds"))
    except (ValueError, KeyError, TypeError, ValidationError, views.NotFound) as exc:
        return JSONResponse({"error": f"bad label: {exc}"}, status_code=400)
    append_label(entry.path, row)
    cal = _calibration(d, entry, data)
    return JSONResponse({"ok": True, "label": row.model_dump(),
                         "kappa": {g["judge"]: g["kappa"] for g in cal["groups"]}})


def _no_constant(name: str) -> Any:
    """NaN / Infinity / -Infinity are not JSON: a posted label with one is refused."""
    raise ValueError(f"{name} is not a number JSON allows")


def eval_token(request: Request) -> Response:
    d: Dashboard = request.app.state.dash
    return JSONResponse({"token": change_token(d.entry(request))})


def global_token(request: Request) -> Response:
    return JSONResponse({"token": _global_token(request.app.state.dash)})


async def not_found(request: Request, exc: Exception) -> Response:
    d: Dashboard = request.app.state.dash
    return d.render(request, "error.html", status=404, message=str(exc).strip("'\""))


def create_app(roots: list[Path], *, host: str = "127.0.0.1", port: int = 8000,
               baselines: list[Path] | None = None, secret: bytes | None = None,
               wait_s: float = WAIT_S, options: AnalysisOptions | None = None) -> Guard:
    """The dashboard as an ASGI app, behind its :class:`Guard`. A page waits up to
    ``wait_s`` for an analysis before showing "analysing…" (and reloading itself).
    ``options``: how each eval is analysed (``app.analyze``, in memory; default: as
    ``--analyze-only`` without flags)."""
    dash = Dashboard([Path(r) for r in roots], [Path(b) for b in baselines or []], wait_s,
                     options)
    routes = [
        Route("/", evals_page), Route("/token", global_token),
        Route("/e/{eval}", eval_route("eval.html", _eval)),
        Route("/e/{eval}/token", eval_token), Route("/e/{eval}/chart/{name}.svg", chart),
        Route("/e/{eval}/trends", eval_route("trends.html", _trends)),
        Route("/e/{eval}/compare", eval_route("compare.html", _compare)),
        Route("/e/{eval}/case/{case}", eval_route("case.html", _case)),
        Route("/e/{eval}/search", eval_route("search.html", _search)),
        Route("/e/{eval}/calibration", eval_route("calibration.html", _calibration_page)),
        Route("/e/{eval}/labels", add_label, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={views.NotFound: not_found,
                                                       404: not_found})
    app.state.dash = dash
    guard = Guard(app, hosts=allowed_hosts(host, port), secret=secret or secrets.token_bytes(32))
    guard.dash = dash
    return guard


def warm(dash: Dashboard) -> None:
    """Start analysing the first evals in the background (not at start-up: the imports
    and reads of an analysis would slow the first page; pages then open at once)."""
    for entry in list(dash.catalog.entries().values())[: dash.cache.max_evals]:
        dash.cache.lookup(entry, wait_s=0)
