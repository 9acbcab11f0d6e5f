"""The "CiteWorth" page in the Airflow UI: latest dataset stats, quality gate result, model metrics.

A FastAPI app mounted by the plugin at ``/citeworth``: ``/citeworth/`` is the HTML page (shown in
the UI's nav through an external view), ``/citeworth/api/latest`` the same data as JSON and
``/citeworth/quality/`` the Great Expectations Data Docs of the last validation. It only reads
result files of the project checkout; it has no write endpoints.

Airflow does not authenticate the FastAPI apps of plugins, so every route here asks Airflow's auth
manager itself: a JWT from ``POST /auth/token`` as ``Authorization: Bearer``, or the ``_token``
cookie a browser logged in to the UI sends (401 without either), and read access to the custom
view ``CiteWorth results`` (403 without it; every role of the simple auth manager has it).
"""

from __future__ import annotations

import html
import json
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request, status
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

RESOURCE_NAME = "CiteWorth results"  # the custom view an auth manager grants (also the nav entry's name)
BearerCredentials = Annotated[HTTPAuthorizationCredentials | None, Depends(HTTPBearer(auto_error=False))]


async def authorized_reader(request: Request, credentials: BearerCredentials) -> None:
    """Let through a user whom Airflow's auth manager knows and allows to read the results view."""
    # Imported per request: task processes load this plugin too, and need none of Airflow's API server.
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.core_api.security import get_user

    user = await get_user(request, _oauth_token=None, bearer_credentials=credentials)
    if not get_auth_manager().is_authorized_custom_view(method="GET", resource_name=RESOURCE_NAME, user=user):
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail=f"no read access to {RESOURCE_NAME}")


# No /docs or /openapi.json: FastAPI serves those outside the app's dependencies, so without a login.
app = FastAPI(title="citeworth results", description="Latest citeworth dataset, quality and model results",
              dependencies=[Depends(authorized_reader)], docs_url=None, redoc_url=None, openapi_url=None)


def _results() -> dict[str, Any]:
    from citeworth.orchestration.workspace import latest_results
    from citeworth_airflow import results_root

    return latest_results(results_root())


@app.get("/api/latest")
def latest() -> dict[str, Any]:
    return _results()


@app.get("/", response_class=HTMLResponse)
def page() -> str:
    return render(_results())


@app.get("/quality/{path:path}")
def data_docs(path: str) -> FileResponse:
    """A file of the Data Docs site (reports/quality/site); nothing outside it is served."""
    from citeworth_airflow import results_root

    site = (results_root() / "reports" / "quality" / "site").resolve()
    target = (site / (path or "index.html")).resolve()
    if not target.is_relative_to(site) or not target.is_file():
        raise HTTPException(status_code=404, detail=f"no Data Docs file {path!r}")
    return FileResponse(target)


def render(results: dict[str, Any]) -> str:
    sections = [
        ("Data versions", _list(results.get("versions") or [])),
        ("Dataset", _table(_dataset_rows(results.get("dataset")))),
        ("Quality gate", _table(_quality_rows(results.get("quality")))
         + "<p><a href='quality/index.html'>Data Docs</a></p>"),
        ("Models", _table(_metric_rows(results.get("models")))),
        ("Domains", _json(results.get("domains"))),
        ("Transfer", _json(results.get("transfer"))),
    ]
    body = "".join(f"<h2>{title}</h2>{content}" for title, content in sections)
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>CiteWorth</title><style>"
        "body{font-family:sans-serif;margin:1.5rem}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.25rem .6rem;text-align:left}"
        "pre{background:#f6f6f6;padding:.5rem}"
        f"</style></head><body><h1>CiteWorth: latest results</h1>{body}</body></html>"
    )


def _dataset_rows(stats: dict | None) -> list[tuple[str, Any]]:
    if not stats:
        return []
    rows = [(f"overall {key}", value) for key, value in sorted((stats.get("overall") or {}).items())
            if not isinstance(value, (dict, list))]
    for split, values in sorted((stats.get("splits") or {}).items()):
        rows += [(f"{split} {key}", value) for key, value in sorted(values.items())
                 if not isinstance(value, (dict, list))]
    return rows


def _quality_rows(summary: dict | None) -> list[tuple[str, Any]]:
    """The verdict and counts; the per-expectation details live in the Data Docs."""
    if not summary:
        return []
    rows = []
    for key, value in sorted(summary.items()):
        if isinstance(value, list):
            rows.append((key, "; ".join(map(str, value)) or "none"))
        elif not isinstance(value, dict):
            rows.append((key, value))
    return rows


def _metric_rows(models: dict | None) -> list[tuple[str, Any]]:
    if not models:
        return []
    return [(values.get("label", name), _scores(values)) for name, values in sorted(models.items())]


def _scores(values: dict) -> str:
    if {"f1", "precision", "recall"} <= set(values):
        return (f"F1 {values['f1']:.4f} ± {values.get('f1_std', 0):.4f}, P {values['precision']:.4f}, "
                f"R {values['recall']:.4f}")
    return json.dumps(values, sort_keys=True)


def _table(rows: list[tuple[str, Any]]) -> str:
    if not rows:
        return "<p>not produced yet</p>"
    cells = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>" for k, v in rows)
    return f"<table>{cells}</table>"


def _list(items: list[str]) -> str:
    if not items:
        return "<p>none yet</p>"
    return "<ul>" + "".join(f"<li>{html.escape(item)}</li>" for item in items) + "</ul>"


def _json(value: Any) -> str:
    if value is None:
        return "<p>not produced yet</p>"
    return f"<pre>{html.escape(json.dumps(value, indent=2, sort_keys=True))}</pre>"
