"""The convolutional recurrent baseline after Färber et al. (2018): subword embeddings, parallel
convolutions, then a recurrent layer (or max pooling for the plain CNN), then a linear classifier."""

from __future__ import annotations

import torch
from torch import nn

from citeworth.models.spec import CrnnParams


class CRNN(nn.Module):
    def __init__(self, vocab_size: int, pad_id: int, params: CrnnParams):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, params.embedding_dim, padding_idx=pad_id)
        self.convs = nn.ModuleList(
            nn.Conv1d(params.embedding_dim, params.filters, k, padding=k // 2) for k in params.kernel_sizes
        )
        features = params.filters * len(params.kernel_sizes)
        recurrent = {"lstm": nn.LSTM, "gru": nn.GRU, None: None}[params.recurrent]
        self.rnn = recurrent(features, params.hidden, batch_first=True) if recurrent else None
        self.dropout = nn.Dropout(params.dropout)
        self.classifier = nn.Linear(params.hidden if self.rnn else features, 2)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        mask = attention_mask.unsqueeze(-1).float()
        x = (self.embedding(input_ids) * mask).transpose(1, 2)  # (batch, embedding, time)
        width = input_ids.shape[1]
        h = torch.cat([torch.relu(conv(x))[..., :width] for conv in self.convs], dim=1).transpose(1, 2)
        if self.rnn is None:
            pooled = h.masked_fill(mask == 0, float("-inf")).max(dim=1).values
        else:
            # The state after each row's last real step: what a packed sequence's final state is (the
            # padding comes after it, and the layer runs forward), in operations ONNX can export.
            outputs, _ = self.rnn(h)
            last = attention_mask.sum(dim=1).clamp_min(1) - 1
            pooled = outputs[torch.arange(outputs.shape[0], device=outputs.device), last]
        return self.classifier(self.dropout(pooled))
