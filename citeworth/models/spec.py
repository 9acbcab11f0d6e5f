"""The params of one cite-worthiness model: one mapping under ``train.catalog`` in params.yaml.

A model's ``kind`` picks its class (a discriminated union, ``AnyModelSpec``): every kind has the
common fields of ``ModelSpec`` plus the sections it reads (``tfidf``, ``crnn``, ``scratch``,
``context``, ``optim``). Giving a section that the kind does not read is an error, so a typo'd or
misplaced setting never silently does nothing.

Defaults are the paper's (Appendix C.6); the demo caps lengths, epochs and steps in params.yaml.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from citeworth.core.params import Params

SECTIONS = ("optim", "tfidf", "crnn", "scratch", "context")


class OptimParams(Params):
    """The torch training loop: AdamW + linear warmup/decay, early stopping on dev F1."""

    batch_size: int = 8
    """Items per optimizer step (before grad_accum)."""
    epochs: int = 3
    """Passes over the training data."""
    lr: float = 8.075e-6
    """AdamW's peak learning rate."""
    warmup_steps: int = 300
    """Steps of linear warmup, then linear decay."""
    weight_decay: float = 0.1
    """AdamW's weight decay."""
    grad_accum: int = 1
    """optimizer step every N batches (effective batch = batch_size * grad_accum)"""
    max_grad_norm: float = 1.0
    """Gradients clipped to this norm."""
    patience: int = 1
    """stop after this many dev evaluations without a better score"""
    select_on: Literal["f1", "pr_auc"] = "f1"
    """The dev score that picks the best weights and stops early: f1 (at the 0.5 threshold, the paper's)
    or pr_auc (average precision: threshold-free, so predicting every sentence cite-worthy scores no
    better than the positive rate; steadier on a small dev split).
    """
    eval_every: int = 0
    """optimizer steps between dev evaluations; 0 = at the end of each epoch"""
    max_steps: int | None = None
    """cap on optimizer steps over the whole run"""
    checkpoint_every: int = 200
    """optimizer steps between resumable checkpoints (and at every eval)"""
    eval_batch_size: int = 32
    """Items per batch when scoring."""
    device: str = "auto"
    """auto | cpu | cuda | cuda:N"""
    precision: Literal["auto", "bf16", "fp16", "fp32"] = "auto"
    """CUDA only (a CPU trains in fp32): auto = bf16 autocast where the GPU supports it, else fp16
    autocast with a gradient scaler; or bf16 | fp16 | fp32.
    """


class TfidfParams(Params):
    C: float = 0.1151
    """Inverse regularisation strength of the logistic regression."""
    class_weight: str | None = "balanced"
    """balanced | null"""
    ngram_max: int = 1
    """The longest n-gram."""
    min_df: int = 1
    """Ignore terms in fewer sentences than this."""
    max_features: int | None = None
    """The vocabulary's size limit (null: none)."""
    max_iter: int = 1000
    """The solver's iteration limit."""


class CrnnParams(Params):
    """Färber et al. (2018): convolution over word embeddings, then a recurrent layer."""

    vocab_size: int = 25000
    """subwords (BPE) learnt on the training split"""
    embedding_dim: int = 300
    """Subword embedding size."""
    filters: int = 100
    """Convolution filters per kernel size."""
    kernel_sizes: list[int] = Field(default_factory=lambda: [3, 4, 5])
    """Convolution widths (subwords)."""
    recurrent: Literal["lstm", "gru"] | None = "lstm"
    """lstm | gru | null (the plain CNN)"""
    hidden: int = 100
    """The recurrent layer's size."""
    dropout: float = 0.4
    """Dropout before the output layer."""
    oversample: bool = True
    """duplicate cite-worthy sentences until the classes balance"""


class ScratchParams(Params):
    """The Transformer trained from scratch (Appendix C.6); BPE vocabulary learnt on the train split."""

    vocab_size: int = 25000
    """Subwords (BPE) learnt on the training split."""
    d_model: int = 300
    """divisible by the head count"""
    layers: int = 5
    """Encoder layers."""
    heads: int = 3
    """Attention heads."""
    ff_dim: int = 128
    """The feed-forward layer's size."""
    dropout: float = 0.4
    """Dropout in every layer."""


class ContextParams(Params):
    """The contextual model (Longformer-Ctx): a paragraph, [SEP] after each sentence, a head per [SEP]."""

    window: int | None = None
    """tokens per input; null = the encoder's limit (4096 for Longformer)"""
    overlap: int = 2
    """sentences of context carried into the next window of a long paragraph"""
    head_hidden: int | None = None
    """the hidden layer's size; null = the encoder's hidden size"""
    dropout: float = 0.1
    """Dropout before the sentence head."""
    solo: bool = False
    """the Solo control: the same model, each sentence on its own"""
    pooling: Literal["sep", "mean"] = "sep"
    """A sentence's vector: the hidden state at its [SEP] (the paper's), or the mean over its tokens and
    its [SEP] ("mean": for encoders pretrained with mean pooling, e.g. the embedded MiniLM).
    """


class ModelSpec(Params):
    """The fields every model kind has; a catalog entry is validated as its kind's subclass."""

    kind: str
    """tfidf_lr | crnn | transformer | sentence | context: which model, and which sections it reads."""
    name: str = ""
    """set from the catalog key"""
    label: str = ""
    """the row name in Table 4 (default: the name)"""
    encoder: str = "embedded"
    """sentence / context: "embedded", a hub name or a local path"""
    max_length: int = 128
    """sentence-level kinds: tokens per sentence, specials included"""
    weighted_loss: bool = True
    """class-balanced cross-entropy (the paper's default)"""
    pu: bool = False
    """sentence: Elkan & Noto PU learning on top of the classifier"""
    max_train_sentences: int | None = Field(None, ge=1)
    """Train on a seeded sample of whole training paragraphs holding about this many sentences (a
    budget where the model cannot see every training sentence in time; the seed is the run's, so
    every model with the same budget and seed sees the same paragraphs); null: every paragraph."""
    max_dev_sentences: int | None = Field(None, ge=1)
    """Early stopping and the best-seed choice on such a sample of the dev paragraphs; null: all."""
    # The sections: None here; each kind's class declares the ones it reads, with their defaults.
    optim: None = None
    """The torch training loop."""
    tfidf: None = None
    """TF-IDF features and the logistic regression."""
    crnn: None = None
    """The CRNN's architecture."""
    scratch: None = None
    """The Transformer's architecture."""
    context: None = None
    """Windows, context and pooling of the contextual model."""

    @model_validator(mode="before")
    @classmethod
    def _sections_of_kind(cls, values: Any) -> Any:
        if isinstance(values, dict):
            read = [s for s in SECTIONS if cls.model_fields[s].annotation is not type(None)]
            if stray := sorted(s for s in SECTIONS if values.get(s) is not None and s not in read):
                raise ValueError(f"kind {values.get('kind')} does not read section(s) {stray}; "
                                 f"it reads {read or 'none'} (to switch kinds, set the others to null)")
        return values

    @model_validator(mode="after")
    def _pu(self) -> ModelSpec:
        if self.pu and self.kind != "sentence":
            raise ValueError("pu applies to kind sentence only")
        if self.pu and self.weighted_loss:
            raise ValueError("PU learning weights samples itself; set weighted_loss: false")
        return self


class TfidfSpec(ModelSpec):
    """TF-IDF features and a logistic regression (scikit-learn)."""

    kind: Literal["tfidf_lr"]
    tfidf: TfidfParams = Field(default_factory=TfidfParams)


class CrnnSpec(ModelSpec):
    """Färber et al.'s convolutional-recurrent network on BPE subwords."""

    kind: Literal["crnn"]
    crnn: CrnnParams = Field(default_factory=CrnnParams)
    optim: OptimParams = Field(default_factory=OptimParams)


class TransformerSpec(ModelSpec):
    """A Transformer encoder trained from scratch."""

    kind: Literal["transformer"]
    scratch: ScratchParams = Field(default_factory=ScratchParams)
    optim: OptimParams = Field(default_factory=OptimParams)


class SentenceSpec(ModelSpec):
    """A pretrained encoder fine-tuned on single sentences (optionally PU learning)."""

    kind: Literal["sentence"]
    optim: OptimParams = Field(default_factory=OptimParams)


class ContextSpec(ModelSpec):
    """A pretrained encoder over whole paragraphs, one head per sentence (or Solo)."""

    kind: Literal["context"]
    context: ContextParams = Field(default_factory=ContextParams)
    optim: OptimParams = Field(default_factory=OptimParams)


# Any catalog entry: the class is picked by its ``kind``.
AnyModelSpec = Annotated[TfidfSpec | CrnnSpec | TransformerSpec | SentenceSpec | ContextSpec,
                         Field(discriminator="kind")]
