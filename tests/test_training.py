"""The hand-written Adam equals torch.optim.Adam / AdamW bitwise and avoids torch._dynamo."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from torch import nn

from synthreview.training import Adam


def _fit(make_optimizer, steps=7):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = make_optimizer(model.parameters())
    x, y = torch.randn(32, 5), torch.randn(32, 1)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
def test_adam_equals_torch_bitwise(weight_decay):
    if weight_decay:
        want = _fit(lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=weight_decay))
    else:
        want = _fit(lambda p: torch.optim.Adam(p, lr=0.01))
    got = _fit(lambda p: Adam(p, lr=0.01, weight_decay=weight_decay))
    for a, b in zip(got, want, strict=True):
        assert torch.equal(a, b)


@pytest.mark.slow
def test_adam_does_not_import_dynamo():
    code = (
        "import sys, torch\n"
        "from synthreview.training import Adam\n"
        "Adam(torch.nn.Linear(2, 2).parameters(), lr=0.1).step()\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
