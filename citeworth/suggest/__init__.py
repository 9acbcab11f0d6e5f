"""Which entry to cite: ranking a draft's own bibliography (or the corpus' papers) for a sentence.

Modules: ``candidates`` (a draft's ``.bib`` / ``.bbl`` / ``thebibliography`` entries, printed
references, with the text the rankers read), ``bm25``, ``dense`` (the embedded MiniLM), ``authors``
(surnames written in the sentence), ``ranker`` (the signals and their fusion), ``corpus`` (the
pipeline's paper index as candidates, with the sentences that cite each paper) and ``draft`` (the
check command's ``--suggest``). Offline, on CPU.
"""

# Where a suggestion comes from: the draft's own bibliography or the corpus. Here, not in ``draft``,
# so that the check's report formats read them without importing the rankers (sklearn, bm25s).
BIBLIOGRAPHY, CORPUS = "bibliography", "corpus"
