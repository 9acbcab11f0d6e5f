"""DAG integrity: the DAG files import cleanly, are thin, and carry the settings a deployment relies on.

The DAGs are parsed as Airflow's DAG processor would (the ``dag_facts`` fixture); how long that takes
is measured by ``benchmarks/dag_parse.py``, not asserted here. That the task graph is dvc.yaml's is
checked in test_pipeline_graph.py.
"""

from __future__ import annotations


def test_dag_files_import_without_errors(dag_facts):
    assert dag_facts["import_errors"] == {}
    assert sorted(dag_facts["dags"]) == ["citeworth_dataset", "citeworth_models"]


def test_parsing_imports_no_heavy_library(dag_facts):
    assert dag_facts["heavy_loaded"] == []


def test_tags_schedule_and_single_active_run(dag_facts):
    dataset, models = dag_facts["dags"]["citeworth_dataset"], dag_facts["dags"]["citeworth_models"]
    assert dataset["tags"] == ["citeworth", "dataset"]
    assert models["tags"] == ["citeworth", "models"]
    assert "NullTimetable" in models["schedule"]  # triggered once per new data version
    assert dataset["tasks"]["train_models"]["templated"]["trigger_dag_id"] == "'citeworth_models'"
    assert dataset["max_active_runs"] == models["max_active_runs"] == 1
    assert dataset["start_date_tz"] == models["start_date_tz"] == "UTC"  # tz-aware start dates


def test_every_task_retries_with_backoff_and_has_a_timeout(dag_facts):
    for dag in dag_facts["dags"].values():
        for task_id, task in dag["tasks"].items():
            assert task["retries"] >= 2, task_id
            assert task["backoff"] > 1, task_id
            assert task["timeout"] and task["timeout"] <= 24 * 3600, task_id


def test_dataset_dag_maps_curation_over_shards_and_versions_last(dag_facts):
    tasks = dag_facts["dags"]["citeworth_dataset"]["tasks"]
    assert tasks["curate_shard"]["mapped"] and tasks["curate_baseline_shard"]["mapped"]
    assert "plan_curate" in tasks["curate_shard"]["upstream"]
    assert tasks["assemble"]["upstream"] == ["curate_shard"]
    assert tasks["validate"]["upstream"] == ["assemble", "assemble_baseline"]
    assert tasks["related_work"]["upstream"] == ["download", "pdf2tei"]  # the same raw papers as curate
    assert tasks["export"]["upstream"] == ["download", "pdf2tei"]
    assert {"download", "pdf2tei"} <= set(tasks["plan_curate"]["upstream"])  # globbed after the files land
    assert tasks["pdf2tei"]["upstream"] == ["open_workspace"]
    assert tasks["version"]["upstream"] == ["export", "related_work", "resolve_release", "validate"]
    assert tasks["version"]["outlets"] == ["citeworth_dataset"]
    assert tasks["open_workspace"]["upstream"] == ["resolve_release"]
    assert tasks["download"]["upstream"] == ["open_workspace"]  # stages work in the run's workspace
    assert tasks["new_data_version"]["upstream"] == ["version"]
    assert tasks["train_models"]["upstream"] == ["new_data_version", "version"]


def test_versioning_is_serialized_and_a_workspace_is_removed_only_after_it(dag_facts):
    for dag in dag_facts["dags"].values():
        tasks = dag["tasks"]
        assert tasks["version"]["pool"] == "citeworth_versioning"  # one slot: one writer of the refs
        others = [task for name, task in tasks.items() if name != "version"]
        assert all(task["pool"] != "citeworth_versioning" for task in others)
        assert tasks["close_workspace"]["upstream"] == ["version"]
        assert tasks["close_workspace"]["trigger_rule"] == "none_failed"  # kept when the run failed
        assert tasks["housekeeping"]["upstream"] == []


def test_values_pass_between_tasks_as_xcomargs_not_jinja_strings(dag_facts):
    templated = dag_facts["dags"]["citeworth_dataset"]["tasks"]["version"]["templated"]
    assert set(templated) == {"source", "release"}
    assert all("XComArg" in value and "{{" not in value for value in templated.values())


def test_models_dag_maps_training_over_models_on_the_training_queue(dag_facts):
    tasks = dag_facts["dags"]["citeworth_models"]["tasks"]
    assert tasks["train_model"]["mapped"]
    # a worker serving only the training queue gets exactly the train tasks; the studies go to
    # the default queue, the versioning step to the host with push rights
    assert {name for name, task in tasks.items() if task["queue"] == "gpu"} == {"train_model"}
    others = {task["queue"] for name, task in tasks.items() if name not in ("train_model", "version")}
    assert others == {"cpu"}
    assert tasks["version"]["queue"] == "versioning"
    assert dag_facts["dags"]["citeworth_dataset"]["tasks"]["version"]["queue"] == "versioning"
    assert {task["queue"] for name, task in dag_facts["dags"]["citeworth_dataset"]["tasks"].items()
            if name != "version"} == {"cpu"}
    assert "plan_models" in tasks["train_model"]["upstream"]
    assert "open_workspace" in tasks["plan_models"]["upstream"]  # models are read after the form is applied
    assert tasks["domain_cell"]["mapped"]
    assert tasks["domains"]["upstream"] == ["domain_cell"]
    assert "open_workspace" in tasks["plan_cells"]["upstream"]
    assert tasks["report"]["upstream"] == ["train_model"]  # Table 4 does not wait for the studies
    assert tasks["silver"]["upstream"] == ["open_workspace"]
    assert tasks["scaling"]["upstream"] == ["open_workspace"]
    assert tasks["works"]["upstream"] == ["open_workspace"]  # the cited-works index, beside silver
    assert tasks["version"]["upstream"] == ["domains", "report", "scaling", "silver", "transfer", "works"]


def test_trigger_forms_offer_the_run_settings(dag_facts):
    dataset = dag_facts["dags"]["citeworth_dataset"]["params"]
    models = dag_facts["dags"]["citeworth_models"]["params"]
    assert {"profile", "source", "release", "sample_size", "overrides", "force", "push"} <= set(dataset)
    assert dataset["profile"]["type"] == models["profile"]["type"] == ["null", "string"]
    assert "workers" not in dataset  # how many processes run is no result: not a field of a run
    assert {"models", "overrides", "push", "data_version"} <= set(models)
    assert "demo" in dataset["source"]["enum"]
    assert dataset["sample_size"]["type"] == ["null", "integer"]
    assert models["models"]["items"] == {"type": "string"}


def test_the_forms_source_choices_are_the_download_stages(dag_facts):
    from citeworth.download.params import SOURCES

    assert dag_facts["dags"]["citeworth_dataset"]["params"]["source"]["enum"] == [None, *SOURCES]
