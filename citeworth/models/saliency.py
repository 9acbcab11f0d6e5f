"""InputXGradient saliency (captum) for the most and least confident test sentences (§4's analysis).

A token's saliency is the L2 norm over the embedding dimension of input × gradient of
P(cite-worthy) for the explained sentence. For the context model the input is the sentence's
whole window, so context tokens get saliency too; the report lists the most salient ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from captum.attr import InputXGradient

from citeworth.core.schema import CITE_WORTHY, NOT_CITE_WORTHY
from citeworth.models import data
from citeworth.models.loop import logits_of
from citeworth.models.torch_model import TorchModel

TOP_TOKENS = 8


@dataclass
class Explanation:
    text: str
    label: int
    score: float
    tokens: list[str]  # the explained sentence's tokens
    saliency: list[float]  # per token, normalised to the input's maximum
    top_context: list[tuple[str, float]]  # the most salient tokens of the whole input


def supports_saliency(model) -> bool:
    return isinstance(model, TorchModel) and hasattr(model.module, "get_input_embeddings")


def pick_examples(scores: np.ndarray, k: int) -> dict[str, list[int]]:
    """Indices of the ``k`` most and ``k`` least confident predictions (distance from 0.5)."""
    confidence = np.abs(np.asarray(scores) - 0.5)
    order = np.argsort(-confidence, kind="stable")
    return {"most confident": order[:k].tolist(), "least confident": order[::-1][:k].tolist()}


def explain(model: TorchModel, records: list[dict], sentence_index: int) -> Explanation:
    record, local = _locate(records, sentence_index)
    items = model.adapter.items([record])
    item = next(it for it in items if local in it.index)
    row = item.index.index(local)
    batch = model.adapter.collate([item]).to(model.device)
    module = model.module.eval()
    ids = batch.inputs["input_ids"]
    embeds = module.get_input_embeddings()(ids).detach()
    rest = {k: v for k, v in batch.inputs.items() if k != "input_ids"}

    def p_cite(inputs_embeds: torch.Tensor) -> torch.Tensor:
        probe = batch.__class__({**rest, "inputs_embeds": inputs_embeds}, batch.labels, batch.weights,
                                batch.index, batch.select)
        return torch.softmax(logits_of(module, probe), dim=-1)[row : row + 1, 1]

    attribution = InputXGradient(p_cite).attribute(embeds)
    saliency = attribution.norm(dim=-1)[0].detach().cpu().numpy()
    saliency = saliency / max(float(saliency.max()), 1e-12)
    tokens = model.tokenizer.convert_ids_to_tokens(ids[0].tolist())
    start, end = _sentence_span(item, row, len(tokens))
    ranked = np.argsort(-saliency, kind="stable")[:TOP_TOKENS]
    with torch.no_grad():
        score = float(p_cite(embeds))
    return Explanation(
        text=record["samples"][local]["text"], label=data.label_of(record["samples"][local]), score=score,
        tokens=tokens[start:end], saliency=[round(float(s), 4) for s in saliency[start:end]],
        top_context=[(tokens[i], round(float(saliency[i]), 4)) for i in ranked],
    )


def _locate(records: list[dict], sentence_index: int) -> tuple[dict, int]:
    offset = 0
    for record in records:
        n = len(record["samples"])
        if sentence_index < offset + n:
            return record, sentence_index - offset
        offset += n
    raise IndexError(f"sentence {sentence_index} is beyond the {offset} sentences of the records")


def _sentence_span(item, row: int, n_tokens: int) -> tuple[int, int]:
    """Token range of the explained sentence: after the previous [SEP] (or [CLS]) up to its [SEP]."""
    seps = item.extra.get("seps")
    if not seps:
        return 1, n_tokens - 1  # [CLS] sentence [SEP]
    k = item.extra["owned"][row]
    return (seps[k - 1] + 1 if k else 1), seps[k]


def render_markdown(title: str, groups: dict[str, list[Explanation]]) -> str:
    lines = [f"# Saliency: {title}", "",
             "InputXGradient (captum), L2 norm over the embedding dimension, normalised per input; "
             "**bold** tokens have saliency ≥ 0.5.", ""]
    for group, explanations in groups.items():
        lines += [f"## {group.capitalize()} test sentences", ""]
        for i, ex in enumerate(explanations, 1):
            gold = CITE_WORTHY if ex.label else NOT_CITE_WORTHY
            pairs = zip(ex.tokens, ex.saliency, strict=True)
            shown = " ".join(f"**{t}**" if s >= 0.5 else t for t, s in pairs)
            top = ", ".join(f"`{t}` {s:.2f}" for t, s in ex.top_context)
            lines += [f"{i}. P(cite-worthy) = {ex.score:.3f}, gold: {gold}", "", f"   > {ex.text}", "",
                      f"   tokens: {shown}", "", f"   most salient in the input: {top}", ""]
    return "\n".join(lines)
