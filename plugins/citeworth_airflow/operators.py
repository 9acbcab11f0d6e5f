"""The DVC versioning step of both DAGs as an operator."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator


class DvcVersionOperator(BaseOperator):
    """Record ``stages``' outputs in DVC, push them, commit the lock and (optionally) tag a data version.

    After it, ``dvc status`` over ``stages`` is clean: the lock holds exactly the hashes of what
    the run produced, the same ``dvc repro`` would record. The run's ``push`` / ``dvc_remote``
    params choose whether and where to push. Idempotent: rerunning it over unchanged
    outputs commits and tags nothing new. With ``source`` and ``release`` the commit is tagged
    ``data/<source>/<release>``; the result (tag, commit) becomes the extra of every outlet's asset
    event, so the models DAG knows which data version it trains on.
    """

    template_fields: Sequence[str] = ("source", "release")
    ui_color = "#945dd6"

    def __init__(self, *, stages: Sequence[str], source: str | None = None, release: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.stages = list(stages)
        self.source = source
        self.release = release

    def execute(self, context: Any) -> dict[str, Any]:
        from citeworth.orchestration import versioning
        from citeworth_airflow import project

        root = project()
        versioning.record_outputs(root, self.stages)
        form = context["params"]
        if form.get("push", True):
            versioning.push(root, self.stages, form.get("dvc_remote"))
        if self.source and self.release:
            version = versioning.tag_data_version(root, self.source, self.release, self.stages,
                                                     replace=bool(form.get("force")))
        else:
            commit = versioning.commit_version(root, self.stages, f"Model results ({context['run_id']})")
            version = {"commit": commit or versioning.git(root, "rev-parse", "HEAD"),
                       "created": commit is not None}
        self.log.info("versioned %s: %s", self.stages, version)
        extra = {**version, "source": self.source, "release": self.release}
        for outlet in self.outlets:
            context["outlet_events"][outlet].extra = extra
        return version
