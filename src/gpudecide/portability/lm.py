"""The model the export test trains: a small causal language model in plain PyTorch (SPEC E3).

A few pre-norm transformer blocks (causal self-attention + MLP) over a learned token and
position embedding, no weight tying (so every tensor is stored once in safetensors), and a
synthetic token stream generated from the seed: a fixed random Markov chain over the
vocabulary, so the loss really falls and nothing is downloaded. Sizes run from ~100k
(`tiny`) to ~1B (`1b`) parameters through `SIZE_PRESETS`.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from gpudecide.portability.config import Dims

__all__ = [
    "Block",
    "CausalLM",
    "SyntheticTokens",
    "count_parameters",
]


class Block(nn.Module):
    """Pre-norm transformer block: causal multi-head attention, then a 4x MLP."""

    def __init__(self, dims: Dims) -> None:
        super().__init__()
        self.n_heads = dims.n_heads
        self.ln1 = nn.LayerNorm(dims.d_model)
        self.qkv = nn.Linear(dims.d_model, 3 * dims.d_model)
        self.proj = nn.Linear(dims.d_model, dims.d_model)
        self.ln2 = nn.LayerNorm(dims.d_model)
        self.fc = nn.Linear(dims.d_model, 4 * dims.d_model)
        self.out = nn.Linear(4 * dims.d_model, dims.d_model)
        self.drop = nn.Dropout(dims.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        shape = (b, t, self.n_heads, c // self.n_heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.drop(self.proj(att.transpose(1, 2).reshape(b, t, c)))
        y: torch.Tensor = x + self.drop(self.out(F.gelu(self.fc(self.ln2(x)))))
        return y


class CausalLM(nn.Module):
    """Token + position embedding, `n_layers` blocks, final norm, untied output head."""

    def __init__(self, dims: Dims) -> None:
        super().__init__()
        if dims.d_model % dims.n_heads:
            raise ValueError(f"d_model {dims.d_model} is not a multiple of n_heads {dims.n_heads}")
        self.dims = dims
        self.tok = nn.Embedding(dims.vocab_size, dims.d_model)
        self.pos = nn.Embedding(dims.seq_len, dims.d_model)
        self.drop = nn.Dropout(dims.dropout)
        self.blocks = nn.ModuleList(Block(dims) for _ in range(dims.n_layers))
        self.ln_f = nn.LayerNorm(dims.d_model)
        self.head = nn.Linear(dims.d_model, dims.vocab_size, bias=False)
        self.apply(_init)
        # GPT-2's scaled init of residual projections keeps deep stacks stable.
        for name, p in self.named_parameters():
            if name.endswith(("proj.weight", "out.weight")):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * dims.n_layers))

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Logits of shape (batch, time, vocab)."""
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.drop(self.tok(idx) + self.pos(pos))
        for block in self.blocks:
            x = block(x)
        logits: torch.Tensor = self.head(self.ln_f(x))
        return logits


def _init(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.normal_(module.weight, 0.0, 0.02)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.normal_(module.weight, 0.0, 0.02)


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


class SyntheticTokens:
    """A deterministic token set: `n_sequences` walks of a random Markov chain (no download).

    Each token has 4 likely successors drawn from the seed, so a model can learn the chain
    and the loss falls from ln(vocab) towards ln(4) ~ 1.39. Sequences are `2 * seq_len`
    long; a training step crops a window from each (see `batch`).
    """

    def __init__(self, vocab_size: int, seq_len: int, seed: int, n_sequences: int = 512) -> None:
        gen = np.random.Generator(np.random.PCG64(seed))
        successors = gen.integers(0, vocab_size, size=(vocab_size, 4))
        length = 2 * seq_len
        data = np.empty((n_sequences, length + 1), dtype=np.int64)
        data[:, 0] = gen.integers(0, vocab_size, size=n_sequences)
        choice = gen.integers(0, 4, size=(n_sequences, length))
        for t in range(length):
            data[:, t + 1] = successors[data[:, t], choice[:, t]]
        self.data = torch.from_numpy(data)
        self.seq_len = seq_len

    def batch(
        self, indices: np.ndarray, offset: int, device: torch.device
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Inputs and next-token targets of the chosen sequences, cropped at `offset`."""
        rows = self.data[torch.from_numpy(indices)]
        window = rows[:, offset : offset + self.seq_len + 1]
        return window[:, :-1].to(device), window[:, 1:].to(device)
