"""A task that writes a part of a folder (a curate shard, a domain cell) sends just its part through a
real DVC remote (a local folder), and a later task lays out the union of the parts: never what
else the producing host's copy of the folder held."""

from __future__ import annotations

from pathlib import Path

from citeworth.orchestration import outputs
from citeworth.orchestration.versioning import dvc, git


def _host(root: Path, remote: Path) -> Path:
    """A host's workspace: a git + DVC repository whose default remote is ``remote``."""
    root.mkdir()
    git(root, "init", "--quiet")
    dvc(root, "init", "--quiet")
    dvc(root, "remote", "add", "--default", "store", str(remote))
    return root


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _files(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): path.read_text() for path in folder.rglob("*") if path.is_file()}


def test_each_task_sends_only_the_files_it_wrote_and_the_union_is_the_run_s(tmp_path):
    remote = tmp_path / "remote"
    first, second, later = (_host(tmp_path / name, remote) for name in ("first", "second", "later"))
    # the first host holds an old copy of shard s1 (pulled from dvc.lock), a killed attempt's
    # half-written file, and an old table of the stage; it curates s2
    _write(first, {"interim/paragraphs/s1.jsonl": "old s1\n", "interim/paragraphs/.s1.jsonl.x.tmp": "half",
                   "interim/paragraphs/s2.jsonl": "s2\n", "interim/stats/s2.json": "{}",
                   "reports/table.md": "old table"})
    _write(second, {"interim/paragraphs/s1.jsonl": "new s1\n", "interim/stats/s1.json": "{}"})
    from_second = outputs.push_outputs(second, ["interim"], only=["interim/paragraphs/s1.jsonl",
                                                                  "interim/stats/s1.json"])
    from_first = outputs.push_outputs(first, ["interim", "reports/table.md"],
                                      only=["interim/paragraphs/s2.jsonl", "interim/stats/s2.json",
                                            "interim/quarantine/s2.jsonl"])  # a file it did not write
    assert set(from_first) == {"interim"}  # the old table is not this task's

    # the first host's part comes last: without parts, its old s1 would win the union
    _write(later, {"interim/paragraphs/s3.jsonl": "a shard no longer listed\n"})
    outputs.pull_outputs(later, {"interim": [from_second["interim"], from_first["interim"]]})
    assert _files(later / "interim") == {"paragraphs/s1.jsonl": "new s1\n", "stats/s1.json": "{}",
                                         "paragraphs/s2.jsonl": "s2\n", "stats/s2.json": "{}"}


def test_without_parts_a_folder_is_sent_whole(tmp_path):
    remote = tmp_path / "remote"
    host, later = _host(tmp_path / "host", remote), _host(tmp_path / "later", remote)
    _write(host, {"out/a.txt": "a", "out/sub/b.txt": "b", "metric.json": "1"})
    sent = outputs.push_outputs(host, ["out", "metric.json", "absent"])
    assert set(sent) == {"out", "metric.json"} and sent["out"].endswith(".dir")
    outputs.pull_outputs(later, {path: [value] for path, value in sent.items()})
    assert _files(later / "out") == {"a.txt": "a", "sub/b.txt": "b"}
    assert (later / "metric.json").read_text() == "1"
