"""Data Docs that depend on the validated data only, not on the clock or on chance.

The site is a DVC output, so two validations of the same data must write the same bytes. GX puts
four things into it that differ between runs: the run's name and time (pages live under
``validations/<suite>/<run name>/<run time>/``), the time each batch was loaded (batch marker
``ge_load_time``), the render time as a ``?d=`` cache buster on the logo's URL, and a random
uuid4 in the id of every collapsible block. Here the run is named after a digest of the validated
tables and dated at the Unix epoch (the page shows 1970-01-01: no wall-clock time on purpose),
load times are set to that date, and the page views below drop the cache buster and number the
blocks of each page instead.
"""

from __future__ import annotations

import hashlib
import itertools
from datetime import UTC, datetime

import pandas as pd
from great_expectations.core.run_identifier import RunIdentifier
from great_expectations.render.view import DefaultJinjaIndexPageView, DefaultJinjaPageView
from jinja2 import pass_context

RUN_TIME = datetime(1970, 1, 1, tzinfo=UTC)
RUN_NAME_PREFIX = "citeworth-validate-"


def run_id_for(frames: dict[str, pd.DataFrame]) -> RunIdentifier:
    """One run id for the checkpoints over ``frames`` (table name -> frame), named by their content."""
    digest = hashlib.sha256()
    for name in sorted(frames):
        frame = frames[name]
        digest.update(repr((name, list(frame.columns), [str(t) for t in frame.dtypes])).encode())
        digest.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    return RunIdentifier(run_name=RUN_NAME_PREFIX + digest.hexdigest()[:16], run_time=RUN_TIME)


def pin_load_times(context, run_id: RunIdentifier) -> None:
    """Date every stored validation result's batch load at the run's time (before rendering)."""
    store = context.validation_results_store
    load_time = run_id.run_time.strftime("%Y%m%dT%H%M%S.%fZ")
    for key in store.list_keys():
        result = store.get(key)
        result.meta.get("batch_markers", {})["ge_load_time"] = load_time
        store.set(key, result)


class _ReproducibleView:
    """Mixed into GX's page views: the same document renders to the same HTML."""

    def render(self, document, template=None, **kwargs):
        self._element_numbers = itertools.count(1)  # ids need only be unique within a page
        return super().render(document, template, **kwargs)

    @pass_context
    def add_data_context_id_to_url(self, jinja_context, url: str, add_datetime: bool = True) -> str:
        return super().add_data_context_id_to_url(jinja_context, url, add_datetime=False)

    def generate_html_element_uuid(self, prefix: str | None = None) -> str:
        return f"{prefix or ''}{next(self._element_numbers)}"


class ReproduciblePageView(_ReproducibleView, DefaultJinjaPageView):
    """Expectation suite and validation result pages."""


class ReproducibleIndexPageView(_ReproducibleView, DefaultJinjaIndexPageView):
    """The site's index page."""


def _view(cls: type) -> dict[str, str]:
    return {"module_name": __name__, "class_name": cls.__name__}


def site_config(base_directory: str) -> dict:
    """The SiteBuilder config of a site at ``base_directory`` rendered with the views above."""
    section = {"view": _view(ReproduciblePageView)}
    index = {"class_name": "DefaultSiteIndexBuilder", "view": _view(ReproducibleIndexPageView)}
    return {
        "class_name": "SiteBuilder",
        "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": base_directory},
        "site_index_builder": index,
        "site_section_builders": {"expectations": section, "validations": section},
    }
