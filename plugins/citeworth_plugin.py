"""Registers citeworth's results page with Airflow: a FastAPI app (it checks logins itself, see
citeworth_airflow.ui) and a nav entry that shows it."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin
from citeworth_airflow.ui import RESOURCE_NAME, app


class CiteworthPlugin(AirflowPlugin):
    name = "citeworth"
    fastapi_apps = [{"app": app, "url_prefix": "/citeworth", "name": "citeworth results"}]
    external_views = [{
        "name": RESOURCE_NAME,
        "href": "citeworth/",
        "destination": "nav",
        "category": "browse",
        "url_route": "citeworth",
    }]
