"""The dataset schema: split names, label strings and record keys every stage agrees on.

Records keep the shape of the released CiteWorth JSONL files (one paragraph a line with its
``samples``), so tools written for the release read ours and ours read the release.
"""

from __future__ import annotations

# The dataset's splits, and the file stems ``<split>.jsonl`` under a dataset folder.
SPLITS = ("train", "dev", "test")

# Sentence labels as the released CiteWorth files spell them. The release says "check-worthy",
# a name borrowed from fact-checking (claim check-worthiness), for what the paper calls
# cite-worthy; we keep the release's strings so its files and ours are interchangeable.
CITE_WORTHY = "check-worthy"
NOT_CITE_WORTHY = "non-check-worthy"
LABELS = (CITE_WORTHY, NOT_CITE_WORTHY)

# The record key holding a paragraph's field(s) of study. The release names it after the
# Microsoft Academic Graph fields S2ORC carried; ours may come from other schemes (arXiv, PMC).
FIELD_OF_STUDY = "mag_field_of_study"

# Provenance of the field: the source's own list as the reader gave it (MAG / S2 fields, arXiv
# categories, PLOS taxonomy paths...) and its scheme, from which the curation chose the one field.
SOURCE_FIELDS = "source_fields_of_study"

# The finer subject a paper is kept under for a domain study (Table 5 over real subjects: eLife's
# heading, a PLOS taxonomy term, a journal's broad subject), null where the source gives none; and the
# collection its input names (eLife, Europe PMC, PLOS, unarXive...; default the reader's name), by which
# a model's test metrics can be split.
SUBJECT = "subject"
COLLECTION = "collection"

# The score at or above which a sentence is called cite-worthy: the models' metrics and the check.
THRESHOLD = 0.5


def shard_key(source: str, shard: str) -> str:
    """The name of a shard's curated files: ``<reader>__<shard name>``, from a record's ``source``
    and ``shard``."""
    return f"{source}__{shard}"
