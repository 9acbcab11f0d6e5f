"""``ModelSpec``: the params of one cite-worthiness model, one mapping under ``train.catalog`` in params.yaml.

One dataclass covers every model kind; each kind reads the common fields plus its own section
(``tfidf``, ``crnn``, ``scratch``, ``context``). Giving a section that the kind does not read is an
error, so a typo'd or misplaced setting never silently does nothing.

Defaults are the paper's (Appendix C.6); the demo caps lengths, epochs and steps in params.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from citeworth.core.params import ParamsError

KINDS = ("tfidf_lr", "crnn", "transformer", "sentence", "context")
PRECISIONS = ("auto", "bf16", "fp16", "fp32")
POOLINGS = ("sep", "mean")
SELECT_ON = ("f1", "pr_auc")


def _one_of(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ParamsError(f"{name} is {value!r}; choose one of {', '.join(choices)}")
# Which kind-specific sections each kind reads (``optim`` is read by every torch model).
SECTIONS = {
    "tfidf_lr": {"tfidf"},
    "crnn": {"crnn", "optim"},
    "transformer": {"scratch", "optim"},
    "sentence": {"optim"},
    "context": {"context", "optim"},
}


@dataclass
class OptimParams:
    """The torch training loop: AdamW + linear warmup/decay, early stopping on dev F1."""

    batch_size: int = 8
    epochs: int = 3
    lr: float = 8.075e-6
    warmup_steps: int = 300
    weight_decay: float = 0.1
    grad_accum: int = 1  # optimizer step every N batches (effective batch = batch_size * grad_accum)
    max_grad_norm: float = 1.0
    patience: int = 1  # stop after this many dev evaluations without a better score
    # The dev score that picks the best weights and stops early: f1 (at the 0.5 threshold, the
    # paper's) or pr_auc (average precision: threshold-free, so predicting every sentence
    # cite-worthy scores no better than the positive rate; steadier on a small dev split).
    select_on: str = "f1"
    eval_every: int = 0  # optimizer steps between dev evaluations; 0 = at the end of each epoch
    max_steps: int | None = None  # cap on optimizer steps over the whole run
    checkpoint_every: int = 200  # optimizer steps between resumable checkpoints (and at every eval)
    eval_batch_size: int = 32
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    # CUDA only (a CPU trains in fp32): auto = bf16 autocast where the GPU supports it, else fp16
    # autocast with a gradient scaler; or bf16 | fp16 | fp32.
    precision: str = "auto"

    def __post_init__(self) -> None:
        _one_of("optim.precision", self.precision, PRECISIONS)
        _one_of("optim.select_on", self.select_on, SELECT_ON)


@dataclass
class TfidfParams:
    C: float = 0.1151
    class_weight: str | None = "balanced"
    ngram_max: int = 1
    min_df: int = 1
    max_features: int | None = None
    max_iter: int = 1000


@dataclass
class CrnnParams:
    """Färber et al. (2018): convolution over word embeddings, then a recurrent layer."""

    vocab_size: int = 25000  # subwords (BPE) learnt on the training split
    embedding_dim: int = 300
    filters: int = 100
    kernel_sizes: list[int] = field(default_factory=lambda: [3, 4, 5])
    recurrent: str | None = "lstm"  # lstm | gru | null (the plain CNN)
    hidden: int = 100
    dropout: float = 0.4
    oversample: bool = True  # duplicate cite-worthy sentences until the classes balance


@dataclass
class ScratchParams:
    """The Transformer trained from scratch (Appendix C.6); BPE vocabulary learnt on the train split."""

    vocab_size: int = 25000
    d_model: int = 300  # divisible by the head count
    layers: int = 5
    heads: int = 3
    ff_dim: int = 128
    dropout: float = 0.4


@dataclass
class ContextParams:
    """The contextual model (Longformer-Ctx): a paragraph, [SEP] after each sentence, a head per [SEP]."""

    window: int | None = None  # tokens per input; null = the encoder's limit (4096 for Longformer)
    overlap: int = 2  # sentences of context carried into the next window of a long paragraph
    head_hidden: int | None = None  # the hidden layer's size; null = the encoder's hidden size
    dropout: float = 0.1
    solo: bool = False  # the Solo control: the same model, each sentence on its own
    # A sentence's vector: the hidden state at its [SEP] (the paper's), or the mean over its tokens
    # and its [SEP] ("mean": for encoders pretrained with mean pooling, e.g. the embedded MiniLM).
    pooling: str = "sep"

    def __post_init__(self) -> None:
        _one_of("context.pooling", self.pooling, POOLINGS)


@dataclass
class ModelSpec:
    kind: str
    name: str = ""  # set from the catalog key
    label: str = ""  # the row name in Table 4 (default: the name)
    encoder: str = "embedded"  # sentence / context: "embedded", a hub name or a local path
    max_length: int = 128  # sentence-level kinds: tokens per sentence, specials included
    weighted_loss: bool = True  # class-balanced cross-entropy (the paper's default)
    pu: bool = False  # sentence: Elkan & Noto PU learning on top of the classifier
    optim: OptimParams | None = None
    tfidf: TfidfParams | None = None
    crnn: CrnnParams | None = None
    scratch: ScratchParams | None = None
    context: ContextParams | None = None

    def __post_init__(self) -> None:
        where = f"model {self.name or '?'}"
        if self.kind not in KINDS:
            raise ParamsError(f"{where}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        given = {s for s in ("optim", "tfidf", "crnn", "scratch", "context") if getattr(self, s) is not None}
        stray = sorted(given - SECTIONS[self.kind])
        if stray:
            raise ParamsError(f"{where}: kind {self.kind} does not read section(s) {stray}")
        if self.pu and self.kind != "sentence":
            raise ParamsError(f"{where}: pu applies to kind sentence only")
        if self.pu and self.weighted_loss:
            raise ParamsError(f"{where}: PU learning weights samples itself; set weighted_loss: false")
        # Fill the sections this kind reads with their defaults.
        defaults = {"optim": OptimParams, "tfidf": TfidfParams, "crnn": CrnnParams,
                    "scratch": ScratchParams, "context": ContextParams}
        for section in SECTIONS[self.kind] - given:
            setattr(self, section, defaults[section]())
