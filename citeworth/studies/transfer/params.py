"""The transfer stage's parameters (its ``params.yaml`` section)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from citeworth.core.params import Params
from citeworth.models.spec import OptimParams
from citeworth.studies.transfer.tasks import TaskSpec


class PretrainParams(Params):
    """Defaults are the paper's CiteBERT run (its public scripts); the demo caps data and steps."""

    max_length: int = 128
    """sub-word tokens per sentence, specials included"""
    max_sentences: int | None = None
    """training sentences drawn with a fixed seed (null: all)"""
    max_dev_sentences: int | None = None
    """dev sentences scored after training (null: all)"""
    mlm_probability: float = 0.15
    """Share of tokens masked."""
    mlm_weight: float = 1.0
    """Weight of the masked-LM loss."""
    cite_weight: float = 1.0
    """Weight of the cite-worthiness loss."""
    unmask_citation: bool = False
    """LMCite: the cite head reads the unmasked sentence (a 2nd pass)"""
    weighted_loss: bool = False
    """class-balanced cite loss (the paper's CiteBERT run used none)"""
    dropout: float = 0.1
    """Dropout of the cite head."""
    seed: int = 1000
    """Sampling, masking and weights."""
    optim: OptimParams = Field(default_factory=lambda: OptimParams(
        batch_size=32, epochs=10, lr=1.351e-6, warmup_steps=300, weight_decay=0.01))
    """The training loop."""


class FineTuneParams(Params):
    max_length: int = 128
    """sub-word tokens per input, specials included; longer inputs are truncated"""
    dropout: float = 0.1
    """Dropout of the task head."""
    optim: OptimParams = Field(default_factory=lambda: OptimParams(batch_size=32, epochs=3, lr=2e-5,
                                                                    warmup_steps=0, weight_decay=0.01))
    """No early stopping: every run trains its epochs; dev and test are scored at the end."""


class DownstreamParams(Params):
    data_root: Path = Path("raw/demo/demo-v2/github/allenai/scibert/data")
    """The SciBERT benchmark's data/ folder as the download stage lays it out (or a mirror's copy)."""
    tasks: list[TaskSpec] = Field(default_factory=lambda: [TaskSpec("sci-cite"), TaskSpec("citation_intent")])
    """The SciBERT benchmark tasks fine-tuned on."""
    seeds: list[int] = Field(default_factory=lambda: [1, 2, 3, 4, 5])
    """Each (task, variant) is fine-tuned once per seed."""
    finetune: FineTuneParams = Field(default_factory=FineTuneParams)
    """The fine-tuning recipe."""


class TransferParams(Params):
    encoder: str = "embedded"
    """the Base model: "embedded", a hub name (SciBERT) or a local path"""
    data_dir: Path
    """the CiteWorth dataset: train.jsonl / dev.jsonl"""
    variants: list[str] = Field(default_factory=lambda: ["LM", "Cite", "LMCite"])
    """The pretrained variants: LM (masked LM), Cite (cite-worthiness), LMCite (both: CiteBERT)."""
    pretrain: PretrainParams = Field(default_factory=PretrainParams)
    """Continued pretraining of each variant."""
    downstream: DownstreamParams = Field(default_factory=DownstreamParams)
    """Fine-tuning Base and each variant on the benchmark tasks."""
    models_dir: Path
    """The pretrained variants."""
    runs_dir: Path
    """one JSON per (task, variant, seed) run"""
    metrics_path: Path
    """Every run's scores (JSON)."""
    table_path: Path
    """Table 6 (Markdown)."""
    threads: int | None = None
    """torch CPU threads (null: torch's default)"""
