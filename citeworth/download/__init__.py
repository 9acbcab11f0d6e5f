"""Fetch source data into ``raw/<source>/<release>/`` with a sha256 ``MANIFEST.json``.

Sources (``download.source`` in params.yaml):

- ``demo``: the embedded demo corpus, listed in ``demo_files.tsv`` (origin URL, sha256, size), fetched
  by origin URL or from a mirror folder / HTTP mirror laid out like ``../shared/data``.
- ``s2_api``: the Semantic Scholar datasets API (releases, ``latest``, dataset files, incremental diffs).
- ``s2orc_legacy``: the S2ORC 20200705 shards from an S3 bucket/prefix or a list of (presigned) URLs.
- ``arxiv_s3``: arXiv bulk source tars from the requester-pays ``arxiv`` bucket, chosen by month range.

Entry points: :func:`citeworth.download.stage.download` (the stage) and
:func:`citeworth.download.releases.newer_release_available` (the Airflow sensor / backfill question).
"""
