"""Run expectation suites over tables as GX checkpoints, and build the Data Docs site.

One in-memory GX context holds every suite; each table is validated by its own checkpoint (a GX
dataframe batch is passed at run time, and a checkpoint passes one batch to all its validation
definitions). Data Docs are built once at the end, into a temporary sibling of the site folder
that replaces it whole, so no page of an earlier run lingers in a DVC-tracked output; they carry
no wall-clock time or random id (``citeworth.quality.site``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import great_expectations as gx
from great_expectations.core.run_identifier import RunIdentifier
from great_expectations.data_context.types.base import (
    DataContextConfig,
    InMemoryStoreBackendDefaults,
    ProgressBarsConfig,
)
from tqdm import tqdm

from citeworth.core.errors import StageFailed
from citeworth.quality.results import Outcome, outcomes
from citeworth.quality.site import pin_load_times, run_id_for, site_config
from citeworth.quality.tables import Table

log = logging.getLogger(__name__)
SITE_NAME = "citeworth_quality"


def run_suites(tables: dict[str, Table], suite_of: dict[str, gx.ExpectationSuite], site_dir: Path,
               examples: int) -> list[Outcome]:
    """Validate each table with its suite (``suite_of[table name]``); Data Docs go to ``site_dir``."""
    found: list[Outcome] = []
    with _fresh_directory(Path(site_dir)) as site, warnings.catch_warnings():
        # The paper's regexes have capture groups; pandas warns that str.contains ignores them.
        warnings.filterwarnings("ignore", message="This pattern is interpreted as a regular expression")
        context = _context(site)
        source = context.data_sources.add_pandas("citeworth")
        for suite in {id(s): s for s in suite_of.values()}.values():
            context.suites.add(suite)
        # One run id for all checkpoints: the Data Docs list them as one validation run.
        run_id = run_id_for({name: table.frame for name, table in tables.items()})
        for name in tqdm(sorted(tables), desc="validate", unit="table"):
            found += _run_checkpoint(context, source, tables[name], suite_of[name], examples, run_id)
        pin_load_times(context, run_id)
        context.build_data_docs(site_names=[SITE_NAME])
        _check_pages(site, len(tables))
    return found


def _check_pages(site: Path, expected: int) -> None:
    """GX's site builder logs a page it fails to render at DEBUG and goes on: count the pages."""
    pages = len(list((site / "validations").rglob("*.html")))
    if pages != expected:
        raise StageFailed(f"Data Docs: GX rendered {pages} of {expected} validation pages (its render errors "
                          "are logged at DEBUG by great_expectations.render)")


def _context(site: Path):
    """An in-memory GX context whose only Data Docs site is ``site`` (GX's default ephemeral
    context would also build a throwaway site under /tmp), without GX's per-metric progress bars
    (a dozen per table; the stage shows one bar over the tables)."""
    config = DataContextConfig(store_backend_defaults=InMemoryStoreBackendDefaults(),
                               data_docs_sites={SITE_NAME: site_config(str(site.resolve()))},
                               progress_bars=ProgressBarsConfig(globally=False))
    return gx.get_context(project_config=config, mode="ephemeral")


def _run_checkpoint(context, source, table: Table, suite: gx.ExpectationSuite, examples: int,
                    run_id: RunIdentifier) -> list[Outcome]:
    batch = source.add_dataframe_asset(table.name).add_batch_definition_whole_dataframe(table.name)
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name=table.name, data=batch, suite=suite))
    # Example rows are looked up by the row index GX reports: asking GX for index *columns*
    # instead costs a Python loop over every unexpected row (minutes at a million rows).
    checkpoint = context.checkpoints.add(gx.Checkpoint(
        name=table.name, validation_definitions=[definition],
        result_format={"result_format": "SUMMARY", "partial_unexpected_count": examples},
    ))
    start = time.perf_counter()
    result = checkpoint.run(batch_parameters={"dataframe": table.frame}, run_id=run_id)
    log.info("validated %s (%d rows) with suite %s in %.1f s", table.name, len(table.frame), suite.name,
             time.perf_counter() - start)
    (validation,) = result.run_results.values()
    return outcomes(table, suite.name, validation, examples)


@contextlib.contextmanager
def _fresh_directory(target: Path) -> Iterator[Path]:
    """Build into a temporary sibling; swap it in for ``target`` only if the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        yield build
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    build.chmod(0o755)  # mkdtemp makes it private; the site is meant to be read
    old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old"))
    if target.exists():
        os.replace(target, old / target.name)
    os.replace(build, target)
    shutil.rmtree(old, ignore_errors=True)
