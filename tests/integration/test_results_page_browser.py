"""The results page in a real headless Chromium against a real ``airflow standalone``.

A demo-sized project (the session's `dvc repro` build of the dataset stages) is versioned by the
dataset DAG (``dag.test()`` into the deployment's own metadata DB, so the page can link that run),
then gets one model, the domain matrix and transfer on the models DAG's tiny budget. The browser
logs in through Airflow's login form, opens ``/citeworth/``, and the test checks the tables, that
every image request answered 200 and decoded, saves a screenshot to
``test-artifacts/results-page.png`` (git-ignored), and picks the data version in the form. Without
Chromium the test is skipped, saying so (``make test`` installs it where it runs as root with
apt-get; under ``CI=true`` a missing Chromium fails the run).

Chromium is driven over the DevTools protocol (``websockets``, no browser-automation package).
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from dvc_workspace import ROOT, dvc, reproduced_workspace
from programs import installed
from test_airflow_dags import (
    TAG,
    TINY_MODELS,
    Airflow,
    _free_port,
    dag_test,
    standalone_env,
)

from citeworth.orchestration.params_file import apply_params, form_updates

CHROMIUM = installed("chromium", "chromium-browser", package="chromium",
                     needed_for="the results page's browser test needs it")
pytestmark = pytest.mark.slow
ARTIFACTS = ROOT / "test-artifacts"


class Browser:
    """One headless Chromium page, driven over the Chrome DevTools Protocol."""

    def __init__(self, profile: Path, log: Path):
        from websockets.sync.client import connect

        port = _free_port()
        sandbox = ["--no-sandbox"] if os.geteuid() == 0 else []  # Chromium refuses root with a sandbox
        self.log = open(log, "w")  # noqa: SIM115 -- closed in close()
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless=new", *sandbox, "--disable-gpu", "--no-first-run", "--hide-scrollbars",
             f"--remote-debugging-port={port}", f"--user-data-dir={profile}", "--window-size=1400,1000",
             "about:blank"], stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        target = self._page_target(port)
        self.exits = contextlib.ExitStack()
        self.socket = self.exits.enter_context(
            connect(target["webSocketDebuggerUrl"], max_size=None, open_timeout=30))
        self.ids = itertools.count(1)
        self.events: list[dict] = []
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable")

    def _page_target(self, port: int, timeout: float = 60) -> dict:
        deadline = time.time() + timeout
        while time.time() < deadline:
            assert self.process.poll() is None, f"chromium exited {self.process.returncode}"
            try:
                pages = requests.get(f"http://127.0.0.1:{port}/json/list", timeout=2).json()
                if page := next((t for t in pages if t["type"] == "page"), None):
                    return page
            except requests.RequestException:
                pass
            time.sleep(0.5)
        pytest.fail(f"chromium's DevTools endpoint did not answer in {timeout}s")

    def call(self, method: str, timeout: float = 60, **params) -> dict:
        ident = next(self.ids)
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.time() + timeout
        while True:
            message = json.loads(self.socket.recv(timeout=max(deadline - time.time(), 0.1)))
            if message.get("id") == ident:
                assert "error" not in message, f"{method}: {message['error']}"
                return message["result"]
            self.events.append(message)

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def wait_until(self, expression: str, timeout: float = 60) -> None:
        deadline = time.time() + timeout
        while not self.evaluate(expression):
            if time.time() > deadline:
                pytest.fail(f"browser: `{expression}` still false after {timeout}s at {self.url()}")
            time.sleep(0.3)

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_until("document.readyState === 'complete'")

    def url(self) -> str:
        return self.evaluate("location.href")

    def type_into(self, selector: str, text: str) -> None:
        """Focus ``selector`` and type like a user (React sees real input events)."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        self.call("Input.insertText", text=text)

    def screenshot(self, path: Path) -> None:
        size = self.call("Page.getLayoutMetrics")["cssContentSize"]
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1})
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        try:
            self.exits.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
            self.log.close()


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, migrated_db, mirror):
    """``airflow standalone`` over a demo project that the two DAGs versioned and trained on."""
    workspace, _ = reproduced_workspace(tmp_path_factory, tmp_path_factory.mktemp("results_ws"))
    home, port = tmp_path_factory.mktemp("results_home"), _free_port()
    env = standalone_env(home, workspace, migrated_db, port)
    dag_test("citeworth_dataset", {}, workspace, env)
    # The models part on the models DAG's tiny budget, through DVC (one process per stage: minutes
    # faster than dag.test's task per domain cell).
    apply_params(workspace, form_updates(TINY_MODELS))
    dvc(workspace, "repro", "report", "domains", "transfer", timeout=1200)
    airflow = Airflow(home, env, port)
    try:
        airflow.wait_until_healthy()
        yield airflow, workspace
    finally:
        airflow.stop()


@pytest.fixture()
def browser(tmp_path):
    chromium = Browser(tmp_path / "chromium-profile", tmp_path / "chromium.log")
    yield chromium
    chromium.close()


def test_a_logged_in_browser_sees_the_results_tables_and_images(deployment, browser):
    airflow, workspace = deployment
    page_url = f"{airflow.base}/citeworth/"
    passwords = airflow.home / "simple_auth_manager_passwords.json.generated"
    password = json.loads(passwords.read_text())["admin"]

    # Not logged in: the page is refused, like the rest of Airflow's API.
    assert requests.get(page_url, timeout=10).status_code == 401
    # Airflow's own login form, as a person uses it.
    browser.open(f"{airflow.base}/auth/login?next={quote(page_url, safe='')}")
    browser.wait_until("document.querySelector('input[type=password]') !== null")
    browser.type_into("input:not([type=password])", "admin")
    browser.type_into("input[type=password]", password)
    browser.evaluate("document.querySelector('button[type=submit]').click()")
    browser.wait_until(f"location.href === {json.dumps(page_url)} && document.readyState === 'complete'")
    browser.wait_until("[...document.images].every(image => image.complete)")

    sections = browser.evaluate("[...document.querySelectorAll('main section')].map(s => s.id)")
    assert sections[:6] == ["run", "quality", "dataset", "funnel", "models", "domains"]
    assert "transfer" in sections
    table2 = browser.evaluate("[...document.querySelectorAll('#dataset tr')].map("
                              "r => [...r.cells].map(c => c.textContent.trim()))")
    assert table2[0][:5] == ["", "all", "train", "dev", "test"]
    stats = json.loads((workspace / "reports" / "dataset_stats.json").read_text())
    assert table2[1][1] == f"{stats['overall']['sentences']:,}"
    table4 = browser.evaluate("[...document.querySelectorAll('#models tbody th')].map(c => c.textContent)")
    assert any("tfidf_lr" in label for label in table4)
    assert browser.evaluate("document.querySelector('#quality .verdict').textContent") == "passed"
    assert browser.evaluate("document.querySelectorAll('#funnel svg rect').length") >= 5
    # The run section links the dataset DAG's run that versioned the data, in Airflow's UI.
    [dataset_run] = airflow.api("GET", "/dags/citeworth_dataset/dagRuns")["dag_runs"]
    [link] = browser.evaluate("[...document.querySelectorAll('#run table.dag-runs a')].map(a => a.href)")
    assert link == f"{airflow.base}/dags/citeworth_dataset/runs/{quote(dataset_run['dag_run_id'], safe='')}"
    assert TAG in browser.evaluate("document.querySelector('#run dl').textContent")
    assert browser.evaluate("document.querySelector('#run dl .badge').textContent") == "defaults"
    versions = browser.evaluate("[...document.querySelectorAll('#run table.versions tr')].map("
                                "r => [...r.cells].map(c => c.textContent.trim()))")
    assert [TAG, "defaults"] in [row[:2] for row in versions]

    # Every image answered 200 as a PNG and decoded.
    images = browser.evaluate("[...document.images].map(i => ({src: i.src, width: i.naturalWidth}))")
    assert len(images) >= 4  # tfidf_lr's PR curve and confusion matrix, the heatmap, the PCA scatter
    assert all(image["width"] > 0 for image in images), images
    responses = {e["params"]["response"]["url"]: e["params"]["response"] for e in browser.events
                 if e.get("method") == "Network.responseReceived" and e["params"]["type"] == "Image"}
    for image in images:
        assert responses[image["src"]]["status"] == 200, image["src"]
        assert responses[image["src"]]["mimeType"] == "image/png", image["src"]
    shot = ARTIFACTS / "results-page.png"
    browser.screenshot(shot)
    assert shot.read_bytes().startswith(b"\x89PNG")
    print(f"screenshot: {shot}")

    # The version picker (a plain form) shows the data version as the dataset DAG committed it: its
    # run, its dataset, and no models (trained after the tag, not committed).
    browser.evaluate(f"document.querySelector('#version').value = {json.dumps(TAG)}")
    browser.evaluate("document.querySelector('form.picker').submit()")
    browser.wait_until(f"location.search === {json.dumps('?version=' + quote(TAG, safe=''))}"
                       " && document.readyState === 'complete'")
    links = browser.evaluate("[...document.querySelectorAll('#run table.dag-runs a')]"
                             ".map(a => a.textContent)")
    assert links == [dataset_run["dag_run_id"]]
    sections = browser.evaluate("[...document.querySelectorAll('main section')].map(s => s.id)")
    assert "dataset" in sections and "quality" in sections and "models" not in sections
