"""How records become a model's inputs, without torch: items, windows and padded arrays.

The torch adapters (``sentence.SentenceAdapter``, ``context.ContextAdapter``) and an exported model
run by ONNX Runtime (``citeworth.models.exported``) build their inputs here, so a sentence is cut,
windowed and pooled the same way in training, in ``citeworth check`` and in an author's install.

- a sentence model's item: ``[CLS] sentence [SEP]``, cut to ``max_length`` (the closing token kept);
- a context model's item: a window of whole sentences, ``[CLS] s1 [SEP] s2 [SEP] ...``; a paragraph
  longer than the window is split into overlapping windows and each sentence is scored in the window
  where it has the most context (``plan_windows``, ``window_owners``);
- ``*_arrays``: a batch of items as padded int64 arrays, the names the networks take.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

BUCKET_BATCHES = 50  # batches per length bucket when shuffling: little padding, still random


@dataclass
class Item:
    """One tokenized model input: a sentence, or a window of a paragraph."""

    input_ids: list[int]
    labels: list[int]
    weights: list[float]
    index: list[int]
    extra: dict[str, Any] = field(default_factory=dict)


def length_batches(items: list[Item], batch_size: int, rng: np.random.Generator | None) -> list[list[int]]:
    """Index batches of similar length; shuffled buckets when ``rng`` is given, sorted otherwise."""
    lengths = np.array([len(item.input_ids) for item in items])
    if rng is None:
        order = np.argsort(lengths, kind="stable")
        return [order[i : i + batch_size].tolist() for i in range(0, len(order), batch_size)]
    order = rng.permutation(len(items))
    bucket = batch_size * BUCKET_BATCHES
    batches = []
    for start in range(0, len(order), bucket):
        chunk = order[start : start + bucket]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches.extend(chunk[i : i + batch_size].tolist() for i in range(0, len(chunk), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def pad_arrays(rows: Sequence[Sequence[int]], value: int) -> tuple[np.ndarray, np.ndarray]:
    """Right-padded ids and the attention mask (int64)."""
    width = max(len(r) for r in rows)
    ids = np.full((len(rows), width), value, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
        mask[i, : len(row)] = 1
    return ids, mask


def sentence_items(ids: list[list[int]], labels: np.ndarray, weights: np.ndarray,
                   max_length: int) -> tuple[list[Item], int]:
    """One item per sentence (``ids`` with the special tokens), cut to ``max_length`` keeping the
    closing special token ([SEP] / </s>); and how many were cut."""
    truncated = 0
    items = []
    for i, row in enumerate(ids):
        if len(row) > max_length:
            row, truncated = row[: max_length - 1] + row[-1:], truncated + 1
        items.append(Item(row, [int(labels[i])], [float(weights[i])], [i]))
    return items, truncated


def sentence_arrays(items: Sequence[Item], pad_id: int) -> dict[str, np.ndarray]:
    ids, mask = pad_arrays([item.input_ids for item in items], pad_id)
    return {"input_ids": ids, "attention_mask": mask}


def plan_windows(lengths: list[int], budget: int, overlap: int) -> list[tuple[int, int]]:
    """Sentence ranges ``[start, end)`` covering all sentences, each fitting ``budget`` tokens.

    A sentence costs its tokens plus its [SEP]. A window after the first starts up to ``overlap``
    sentences before the previous window's end (context), but never so early that the first new
    sentence would not fit. A sentence that cannot fit even alone gets a window of its own.
    """
    cost = [n + 1 for n in lengths]
    windows: list[tuple[int, int]] = []
    start = 0
    while start < len(cost):
        end, used = start, 0
        while end < len(cost) and used + cost[end] <= budget:
            used += cost[end]
            end += 1
        end = max(end, start + 1)  # too long alone: its own (truncated) window
        windows.append((start, end))
        if end == len(cost):
            break
        nxt = end
        while nxt > max(start + 1, end - overlap) and sum(cost[nxt - 1 : end + 1]) <= budget:
            nxt -= 1
        start = nxt
    return windows


def window_owners(windows: list[tuple[int, int]], n: int) -> list[int]:
    """For each sentence, the window that scores it: most context on its scarcer side, then the earliest."""
    owners = []
    for i in range(n):
        candidates = [(min(i - a, b - 1 - i), -w) for w, (a, b) in enumerate(windows) if a <= i < b]
        owners.append(-max(candidates)[1])
    return owners


@dataclass(frozen=True)
class Windows:
    """How a context model reads paragraphs: ``window`` tokens at most, ``overlap`` sentences carried
    into the next window, ``solo``: every sentence alone (the Solo control)."""

    window: int
    overlap: int
    solo: bool
    cls_id: int
    sep_id: int

    def items(self, tokens: list[list[int]], sizes: Sequence[int], labels: np.ndarray,
              weights: np.ndarray) -> tuple[list[Item], dict]:
        """Items covering every sentence: ``tokens``, each sentence's ids without special tokens,
        paragraph after paragraph (``sizes``: sentences per paragraph); and the windows' stats."""
        items, offset, split, truncated = [], 0, 0, 0
        for n in sizes:
            lengths = [len(t) for t in tokens[offset : offset + n]]
            windows = [(i, i + 1) for i in range(n)] if self.solo else plan_windows(
                lengths, self.window - 1, self.overlap)
            split += len(windows) > 1 and not self.solo
            owners = window_owners(windows, n)
            for w_idx, (a, b) in enumerate(windows):
                owned = [k for k in range(a, b) if owners[k] == w_idx]
                item, cut = self._item(tokens, offset, a, b, owned, labels, weights)
                items.append(item)
                truncated += cut
            offset += n
        stats = {"windows": len(items), "paragraphs_split": int(split), "sentences_truncated": truncated}
        return items, stats

    def _item(self, tokens, offset, a, b, owned, labels, weights) -> tuple[Item, int]:
        ids, starts, seps, cut = [self.cls_id], [], [], 0
        room = self.window - 2  # [CLS] and the sentence's own [SEP]
        for k in range(a, b):
            sentence = tokens[offset + k]
            if len(sentence) > room:
                sentence, cut = sentence[:room], cut + 1
            starts.append(len(ids))
            ids.extend(sentence)
            ids.append(self.sep_id)
            seps.append(len(ids) - 1)
        rows = [offset + k for k in owned]
        item = Item(ids, [int(labels[r]) for r in rows], [float(weights[r]) for r in rows], rows,
                    {"starts": starts, "seps": seps, "owned": [k - a for k in owned]})
        return item, cut


def context_arrays(items: Sequence[Item], pad_id: int, pooling: str,
                   longformer: bool) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """A batch of windows as the context network takes it, and the rows of its output (one per
    [SEP], item then position order) that are scored: the sentences each window owns."""
    ids, mask = pad_arrays([item.input_ids for item in items], pad_id)
    sep_batch, sep_pos, starts, select, row = [], [], [], [], 0
    for b, item in enumerate(items):
        sep_batch.extend([b] * len(item.extra["seps"]))
        sep_pos.extend(item.extra["seps"])
        starts.extend(item.extra["starts"])
        select.extend(row + k for k in item.extra["owned"])
        row += len(item.extra["seps"])
    arrays = {"input_ids": ids, "attention_mask": mask, "sep_batch": np.array(sep_batch, dtype=np.int64),
              "sep_pos": np.array(sep_pos, dtype=np.int64)}
    if pooling == "mean":
        arrays["span_start"] = np.array(starts, dtype=np.int64)
    if longformer:
        global_mask = np.zeros_like(ids)
        global_mask[:, 0] = 1
        global_mask[arrays["sep_batch"], arrays["sep_pos"]] = 1
        arrays["global_attention_mask"] = global_mask
    return arrays, np.array(select, dtype=np.int64)
