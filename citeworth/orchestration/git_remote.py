"""The project's git remote, the one place where hosts that share no disk share refs.

In the remote workspace form (``$CITEWORTH_GIT_REMOTE`` set, see ``citeworth.orchestration.runs``)
every host keeps its own clone; it learns the branches and data-version tags from the remote
(``sync``: into ``refs/remotes/citeworth/*`` and ``refs/tags/*``), and a versioning step publishes
there by compare-and-swap (``push_ref``: ``git push --force-with-lease``). A source release is
claimed by creating the ref ``refs/citeworth/claims/<source>/<release>`` on the remote with a lease
that the ref must not exist yet: of any number of runs on any hosts racing for one release exactly
one push succeeds. The claim is a commit of the empty tree whose message names the run.
No Airflow import here.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from citeworth.core.errors import StageFailed
from citeworth.orchestration.versioning import git

log = logging.getLogger(__name__)

REMOTE_ENV = "CITEWORTH_GIT_REMOTE"
TRACKING = "refs/remotes/citeworth"
CLAIMS = "refs/citeworth/claims"
_SEEN_CLAIMS = "refs/citeworth/remote-claims"  # the remote's claims as last fetched


def remote_url() -> str | None:
    """The git remote of the remote workspace form ($CITEWORTH_GIT_REMOTE), None in the local form."""
    return os.environ.get(REMOTE_ENV) or None


@contextmanager
def locked(project: Path, name: str = "citeworth-remote") -> Iterator[None]:
    """One holder of lock ``name`` at a time per clone, across processes (one git fetch at a time:
    concurrent tasks of one host would race for ref locks)."""
    common = Path(git(project, "rev-parse", "--git-common-dir"))
    lock = (common if common.is_absolute() else project / common) / f"{name}.lock"
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def sync(project: Path, url: str, *refspecs: str) -> None:
    """Fetch the remote's branches (as ``refs/remotes/citeworth/*``), tags (moved ones too: a
    forced rebuild moves a data-version tag) and ``refspecs`` into the clone ``project``."""
    with locked(project):
        git(project, "fetch", "--quiet", "--prune", "--force", url,
            f"+refs/heads/*:{TRACKING}/*", "+refs/tags/*:refs/tags/*", *refspecs)


def default_branch(project: Path, url: str) -> str:
    """The branch the remote's HEAD names (where runs on the defaults publish)."""
    for line in git(project, "ls-remote", "--symref", url, "HEAD").splitlines():
        if line.startswith("ref: refs/heads/"):
            return line.split()[1].removeprefix("refs/heads/")
    raise StageFailed(f"the git remote {url} has no HEAD branch")


def resolve(project: Path, url: str, start: str) -> str:
    """The commit ``start`` names after a sync: HEAD is the remote's default branch, a tag or a
    commit id as the remote has it."""
    sync(project, url)
    name = f"{TRACKING}/{default_branch(project, url)}" if start == "HEAD" else start
    return git(project, "rev-parse", "--verify", f"{name}^{{commit}}")


def push_ref(project: Path, url: str, commit: str | None, ref: str, expected: str | None) -> bool:
    """Set ``ref`` on the remote to ``commit`` (None: delete it) if it still is ``expected`` (None:
    if it does not exist); False when another host moved it first."""
    command = ["git", "push", "--porcelain", f"--force-with-lease={ref}:{expected or ''}", url,
               f"{commit or ''}:{ref}"]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True)
    if done.returncode == 0:
        return True
    # the lease failed here, or the remote's own ref lock went to a concurrent push
    if "[rejected] (stale info)" in done.stdout or "cannot lock ref" in done.stderr:
        return False
    raise StageFailed(f"git push of {ref} to {url} failed: {(done.stderr or done.stdout).strip()}")


def push_tag(project: Path, url: str, tag: str, force: bool = False) -> None:
    git(project, "push", "--quiet", *(["--force"] if force else []), url, f"refs/tags/{tag}:refs/tags/{tag}")


# --- release claims ---------------------------------------------------------------------------------


def claim(project: Path, url: str, source: str, release: str, run_id: str) -> str | None:
    """Claim ``source``'s ``release`` for ``run_id`` on the remote: None if this run holds it now
    (also when it already did: a retry), else the id of the run that holds it."""
    record = json.dumps({"run_id": run_id, "source": source, "release": release, "claimed": time.time()},
                        sort_keys=True)
    empty_tree = git(project, "hash-object", "-t", "tree", "-w", "--stdin", stdin="")
    commit = git(project, "commit-tree", empty_tree, "-m", record)
    if push_ref(project, url, commit, _claim_ref(source, release), None):
        log.info("claimed %s release %s for run %s on %s", source, release, run_id, url)
        return None
    holder = claims(project, url).get((source, release))
    return None if holder == run_id else holder or "an unknown run"


def claims(project: Path, url: str) -> dict[tuple[str, str], str]:
    """(source, release) -> the run holding it, as the remote has them now."""
    return {key: record["run_id"] for key, (record, _) in _fetch_claims(project, url).items()}


def drop_claims(project: Path, url: str, run_id: str) -> list[str]:
    """Delete the remote claims ``run_id`` holds (its run failed), so a later run builds those releases."""
    dropped = []
    for (source, release), (record, commit) in _fetch_claims(project, url).items():
        if record["run_id"] == run_id and push_ref(project, url, None, _claim_ref(source, release), commit):
            dropped.append(f"{source}/{release}")
            log.info("released the claim of %s release %s of failed run %s", source, release, run_id)
    return dropped


def _claim_ref(source: str, release: str) -> str:
    return f"{CLAIMS}/{source}/{release}"


def _fetch_claims(project: Path, url: str) -> dict[tuple[str, str], tuple[dict, str]]:
    with locked(project):
        git(project, "fetch", "--quiet", "--prune", "--force", url, f"+{CLAIMS}/*:{_SEEN_CLAIMS}/*")
    found = {}
    listed = git(project, "for-each-ref", "--format=%(refname) %(objectname)", f"{_SEEN_CLAIMS}/")
    for line in listed.splitlines():
        ref, commit = line.split()
        source, release = ref.removeprefix(f"{_SEEN_CLAIMS}/").split("/", 1)
        found[(source, release)] = (json.loads(git(project, "log", "-1", "--format=%B", commit)), commit)
    return found
