"""The text toolkit every stage that reads sentences shares (curation, the related-work and silver
corpora, the exports, the quality gate, ``citeworth check``, predictions): sentence splitting
(``sentences``, with pysbd's patterns recompiled in ``pysbd_regex``), the citation patterns of the
paper's Appendix B (``citations``), citation anchors resolved to bibliography entries (``anchors``),
permissible section titles (``sections``) and the ten CiteWorth fields (``fields``), with their rule
files in ``data/``. It imports nothing of the stages that use it."""
