"""English stop words: scikit-learn's ``ENGLISH_STOP_WORDS`` (the Glasgow Information Retrieval
Group's list), the words BM25 and BibTeX keys skip. Kept as a file (``english_stop_words.txt``) so
that an author's install needs no scikit-learn; a test checks it is scikit-learn's list."""

from __future__ import annotations

from importlib import resources

STOP_WORDS = frozenset(resources.files("citeworth.text").joinpath("english_stop_words.txt")
                       .read_text("utf-8").split())
