"""``TorchModel``: a trained torch module with its tokenizer and adapter, scoring and saving itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from citeworth.models import data, loop
from citeworth.models.base import TrainedModel
from citeworth.models.spec import ModelSpec

WEIGHTS_FILE = "model.safetensors"


class TorchModel(TrainedModel):
    def __init__(self, spec: ModelSpec, module: torch.nn.Module, adapter: loop.Adapter, tokenizer):
        super().__init__(spec)
        self.module, self.adapter, self.tokenizer = module, adapter, tokenizer
        self.device = loop.resolve_device(spec.optim.device)
        self.precision = loop.precision_for(self.device, spec.optim.precision)
        self.module.to(self.device)

    def predict_proba(self, records: list[dict]) -> np.ndarray:
        n_rows = len(data.sentences(records))
        items = self.adapter.items(records)
        return loop.predict_proba(self.module, self.adapter, items, n_rows, self.spec.optim.eval_batch_size,
                                  self.device, desc=f"score {self.spec.name}", precision=self.precision)

    def save_files(self, directory: Path) -> None:
        self.tokenizer.save_pretrained(directory)
        if hasattr(self.module, "save_pretrained"):
            self.module.save_pretrained(directory)
        else:
            weights = {k: v.contiguous() for k, v in self.module.state_dict().items()}
            save_file(weights, directory / WEIGHTS_FILE)

    @property
    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.module.parameters())


def load_state(module: torch.nn.Module, path: Path) -> torch.nn.Module:
    module.load_state_dict(load_file(path))
    return module
