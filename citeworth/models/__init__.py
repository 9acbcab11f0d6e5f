"""Cite-worthiness models: baselines (TF-IDF + LR, CRNN, Transformer from scratch) and encoder models."""
