"""Torch plumbing shared by the small recurrent models (trace embedding, forecaster, seeker).

Each of them trains the same way: inside a forked global torch random state (callers' streams
stay put), with a fixed number of intra-op threads, seeded from the caller's numpy generator;
then Adam over seeded mini-batch permutations with the gradient norm clipped at 1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import torch
from torch import nn


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run a block with ``n`` torch intra-op threads (``None``: leave the setting) and restore it.

    The recurrent models here are small (70 hidden units); their per-step matrix products are
    too small to gain from threads, and on a busy machine spinning threads cost more than they
    bring. Measured on the shared 2-core machine (load ~8), one forward and backward pass of
    the autoencoder on a 64 x 96 batch: 0.31 s with 1 thread, 2.9 s with 2.
    """
    previous = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


@contextmanager
def seeded_torch(rng: np.random.Generator, num_threads: int | None) -> Iterator[None]:
    """Fork the global torch RNG, seed it from ``rng`` and use ``num_threads`` threads inside.

    The seed is drawn from ``rng`` on entry, so the same generator state gives the same weight
    initialisation; the caller's global torch random state is restored on exit.
    """
    with torch.random.fork_rng(devices=[]), torch_threads(num_threads):
        torch.manual_seed(int(rng.integers(2**31)))
        yield


class Adam:
    """Adam (Kingma & Ba 2015), step for step as ``torch.optim.Adam``'s single-tensor path.

    With ``weight_decay`` the decay is decoupled (Loshchilov & Hutter 2019), as in
    ``torch.optim.AdamW``.

    Constructing any ``torch.optim`` optimizer imports ``torch._dynamo`` (its decorators
    disable the compiler lazily), which costs 1.3 s per process on the reference machine and
    4.5-7 s while other work runs (measured: ``foreach``/``fused`` flags do not avoid it, nor
    does SGD). The update below is the same sequence of tensor operations as torch's default
    on the CPU (``tests/test_training.py`` holds the parameters bitwise equal after several
    steps), so every seeded result stays the same.
    """

    def __init__(
        self,
        params,
        *,
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ):
        self.params = [p for p in params if p.requires_grad]
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.weight_decay = weight_decay
        self.exp_avg = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]
        self.steps = [0] * len(self.params)

    def zero_grad(self) -> None:
        """Drop the gradients (``set_to_none``, torch's default)."""
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """One Adam update of every parameter that has a gradient."""
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            grad, exp_avg, exp_avg_sq = p.grad, self.exp_avg[i], self.exp_avg_sq[i]
            self.steps[i] += 1
            step = self.steps[i]
            if self.weight_decay:
                p.mul_(1 - self.lr * self.weight_decay)
            exp_avg.lerp_(grad, 1 - self.beta1)
            exp_avg_sq.mul_(self.beta2).addcmul_(grad, grad, value=1 - self.beta2)
            bias_correction1 = 1 - self.beta1**step
            bias_correction2_sqrt = (1 - self.beta2**step) ** 0.5
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(self.eps)
            p.addcdiv_(exp_avg, denom, value=-(self.lr / bias_correction1))


def train_minibatches(
    model: nn.Module,
    loss_of: Callable[[torch.Tensor], torch.Tensor],
    n_rows: int,
    *,
    rng: np.random.Generator,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    device: str = "cpu",
    on_epoch: Callable[[int], None] | None = None,
) -> list[float]:
    """Adam on ``loss_of(batch_indices)`` over ``epochs`` seeded permutations of ``n_rows`` rows.

    The gradient norm is clipped at 1. ``on_epoch(epoch)`` (0-based) runs after every epoch.

    Returns
    -------
    list of float
        The row-weighted mean training loss of each epoch.
    """
    optimizer = Adam(model.parameters(), lr=learning_rate)
    losses = []
    for epoch in range(epochs):
        model.train()
        order = torch.as_tensor(rng.permutation(n_rows), device=device)
        total = 0.0
        for start in range(0, n_rows, batch_size):
            batch = order[start : start + batch_size]
            optimizer.zero_grad()
            loss = loss_of(batch)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            total += float(loss.detach()) * len(batch)
        losses.append(total / n_rows if n_rows else float("nan"))
        if on_epoch is not None:
            on_epoch(epoch)
    return losses


def in_batches(
    fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, *, batch_size: int, device: str
) -> torch.Tensor:
    """``fn`` over non-empty ``x`` one batch at a time on ``device``, without gradients.

    The results are moved to the CPU and concatenated along the first axis.
    """
    with torch.no_grad():
        return torch.cat(
            [fn(x[i : i + batch_size].to(device)).cpu() for i in range(0, len(x), batch_size)]
        )
