"""Roy & Mercer's silver-standard citation-linkage corpus: citing sentences paired with every sentence
of the paper they cite, labelled by cosine similarity at a cutoff tuned on a gold file, balanced per
citing sentence; and the siamese model trained on it (``citeworth.corpora.silver.siamese``)."""
