"""The "CiteWorth results" page in the Airflow UI: a thin shell over ``citeworth.results``.

A FastAPI app mounted by the plugin at ``/citeworth``: ``/citeworth/`` is the HTML page (shown in
the UI's nav through an external view; ``?version=<data tag or runs/ branch>`` shows an older
version), ``/citeworth/files/<plot>.png`` its images, ``/citeworth/static/`` its stylesheet,
``/citeworth/api/latest`` the latest results as JSON and ``/citeworth/quality/`` the Great
Expectations Data Docs of the last validation. The page is rendered on the server from the result
files of the project checkout (no JavaScript); the only thing asked of Airflow is which DAG runs
made a version. There are no write endpoints.

Airflow does not authenticate the FastAPI apps of plugins, so every route here asks Airflow's auth
manager itself: a JWT from ``POST /auth/token`` as ``Authorization: Bearer``, or the ``_token``
cookie a browser logged in to the UI sends (401 without either), and read access to the custom
view ``CiteWorth results`` (403 without it; every role of the simple auth manager has it).
"""

from __future__ import annotations

from importlib.resources import files as package_files
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request, status
from fastapi.responses import FileResponse, HTMLResponse, Response
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


def _version_files(version: str | None):
    """The result files of ``version`` (a listed data tag or run branch), else of ``page_root()``."""
    from citeworth.results.files import open_files
    from citeworth_airflow import page_root

    try:
        return open_files(page_root(), version)
    except LookupError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=str(exc)) from exc


@app.get("/api/latest")
def latest() -> dict[str, Any]:
    return _results()


@app.get("/", response_class=HTMLResponse)
def page(version: str | None = None) -> str:
    from citeworth.results.files import head_commit, list_refs
    from citeworth.results.page import build_page, render
    from citeworth_airflow import page_root

    root = page_root()
    return render(build_page(_version_files(version), list_refs(root), head_commit(root), find_runs))


@app.get("/files/{path:path}")
def image(path: str, version: str | None = None) -> Response:
    """A plot of the page (PNG), from the version's plot files; nothing else is served."""
    from citeworth.results.page import image as image_bytes

    found = image_bytes(_version_files(version), path)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no plot {path!r}")
    return Response(found, media_type="image/png", headers={"Cache-Control": "private, max-age=60"})


@app.get("/static/results.css")
def stylesheet() -> Response:
    css = package_files("citeworth.results").joinpath("static/results.css").read_text()
    return Response(css, media_type="text/css")


@app.get("/quality/{path:path}")
def data_docs(path: str) -> FileResponse:
    """A file of the Data Docs site (reports/quality/site); nothing outside it is served."""
    from citeworth_airflow import results_root

    site = (results_root() / "reports" / "quality" / "site").resolve()
    target = (site / (path or "index.html")).resolve()
    if not target.is_relative_to(site) or not target.is_file():
        raise HTTPException(status_code=404, detail=f"no Data Docs file {path!r}")
    return FileResponse(target)


DAGS = ("citeworth_dataset", "citeworth_models")


def find_runs(tag: str | None = None, run_id: str | None = None) -> list[dict]:
    """The DAG runs behind a version, from Airflow's metadata DB: the run whose dataset asset event
    announced data tag ``tag``, the run ``run_id``, or (neither given) the latest run of each DAG."""
    from airflow.models.asset import AssetEvent
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        if tag is not None:
            events = session.scalars(select(AssetEvent).where(AssetEvent.source_dag_id == DAGS[0])
                                     .order_by(AssetEvent.timestamp.desc()).limit(500))
            keys = [(e.source_dag_id, e.source_run_id) for e in events
                    if (e.extra or {}).get("tag") == tag][:1]
        elif run_id is not None:
            keys = [(dag_id, run_id) for dag_id in DAGS]
        else:
            keys = [(dag_id, latest) for dag_id in DAGS
                    if (latest := session.scalar(select(DagRun.run_id).where(DagRun.dag_id == dag_id)
                                                 .order_by(DagRun.run_after.desc()).limit(1)))]
        runs = [session.scalar(select(DagRun).where(DagRun.dag_id == d, DagRun.run_id == r)) for d, r in keys]
        return [_run_facts(run) for run in runs if run is not None]


def _run_facts(run) -> dict:
    def when(moment) -> str | None:
        return moment.isoformat(timespec="seconds") if moment else None

    return {"dag_id": run.dag_id, "run_id": run.run_id, "state": str(run.state),
            "run_type": str(run.run_type), "start_date": when(run.start_date), "end_date": when(run.end_date)}
