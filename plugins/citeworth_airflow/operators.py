"""The DVC versioning step of both DAGs as an operator."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator


class DvcVersionOperator(BaseOperator):
    """Record ``stages``' outputs of the run's workspace in DVC, push them, commit the lock onto
    the project branch (a run on the defaults) or the run's experiment branch ``runs/<run id>``,
    and (optionally) tag a data version; see ``citeworth.orchestration.experiments.version_run``.

    After it, ``dvc status`` over ``stages`` is clean in the workspace: the lock holds exactly the
    hashes of what the run produced, the same ``dvc repro`` would record. The run's ``push`` /
    ``dvc_remote`` params choose whether and where to push. Idempotent: rerunning it over unchanged
    outputs commits and tags nothing new. With ``source`` and ``release`` the commit is tagged
    ``data/<source>/<release>``; the result (tag, commit) becomes the extra of every outlet's asset
    event. Runs in the one-slot pool ``citeworth_versioning``: one run at a time writes the refs,
    on the queue $CITEWORTH_VERSIONING_QUEUE (the host with push rights on a cluster). In the remote
    workspace form it first fetches the run's outputs and then publishes to the git remote.
    """

    template_fields: Sequence[str] = ("source", "release")
    ui_color = "#945dd6"

    def __init__(self, *, stages: Sequence[str], source: str | None = None, release: str | None = None,
                 **kwargs: Any) -> None:
        from citeworth.orchestration.versioning import VERSIONING_POOL
        from citeworth_airflow.tasks import VERSIONING_QUEUE

        super().__init__(**{"pool": VERSIONING_POOL, "queue": VERSIONING_QUEUE, **kwargs})
        self.stages = list(stages)
        self.source = source
        self.release = release

    def execute(self, context: Any) -> dict[str, Any]:
        from citeworth.orchestration.experiments import version_run
        from citeworth_airflow import project
        from citeworth_airflow.tasks import prepare_versioning

        prepare_versioning(self.stages)
        version = version_run(project(), context["run_id"], self.stages, dict(context["params"]),
                              self.source, self.release)
        self.log.info("versioned %s: %s", self.stages, version)
        extra = {**version, "source": self.source, "release": self.release}
        for outlet in self.outlets:
            context["outlet_events"][outlet].extra = extra
        return version
