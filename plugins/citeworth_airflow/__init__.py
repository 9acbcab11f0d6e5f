"""What Airflow needs beyond the citeworth library: task callables, a DVC versioning operator,
a Semantic Scholar hook and the results page. The DAG files in ``dags/`` only wire these up.

Everything heavy (the stages, DVC, torch) is imported inside task bodies, never at module level,
so a DAG file that imports this package still parses in milliseconds.
"""

from pathlib import Path


def project() -> Path:
    """The project checkout the tasks work in: $CITEWORTH_PROJECT_DIR, else the folder above plugins/."""
    from citeworth.orchestration.workspace import project_dir

    return project_dir(default=Path(__file__).resolve().parents[2])


def results_root() -> Path:
    """Where the results page reads: the branch's latest versioned results (a worktree the version
    step refreshes), else the project checkout itself (results of `dvc repro` there)."""
    from citeworth.orchestration.runs import results_view

    root = project()
    return results_view(root) or root


def page_root() -> Path:
    """Where the results page reads by default: the checkout when it holds results of its own (a
    `dvc repro` there), else the latest results: in a deployment runs build in their own workspaces
    and the checkout holds none."""
    from citeworth.orchestration.workspace import RESULT_FILES

    root = project()
    return root if any((root / path).is_file() for path in RESULT_FILES.values()) else results_root()
