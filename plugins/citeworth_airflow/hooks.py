"""Semantic Scholar datasets API credentials kept in an Airflow connection."""

from __future__ import annotations

from airflow.sdk import BaseHook


class SemanticScholarHook(BaseHook):
    """The S2 datasets API key from connection ``semantic_scholar_default``.

    Any connection type works (e.g. "HTTP" or "Generic"): the key is read from the password
    field, or from ``{"api_key": ...}`` in the extra field. The key is handed to the download
    library through the environment variable it reads, so it never reaches a log or a DAG param.
    """

    conn_name_attr = "semantic_scholar_conn_id"
    default_conn_name = "semantic_scholar_default"
    conn_type = "semantic_scholar"
    hook_name = "Semantic Scholar datasets API"

    def __init__(self, semantic_scholar_conn_id: str = default_conn_name) -> None:
        super().__init__()
        self.semantic_scholar_conn_id = semantic_scholar_conn_id

    def get_conn(self) -> str:
        """The API key (an empty string when the connection has none)."""
        connection = self.get_connection(self.semantic_scholar_conn_id)
        return connection.password or connection.extra_dejson.get("api_key", "")
