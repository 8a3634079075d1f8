"""One-Class (Deep SVDD) evaluation embedding for tabular data.

Alaa et al. (2022), §4 "Precision and Recall classifiers" and appendix "One-Class embedding":
a feed-forward network Φ is trained on the *real* rows only with the soft-boundary Deep SVDD
objective of Ruff et al. (2018, Eq. 3),

    min_{R, Φ}  R² + 1/(ν n) Σ_i max(0, ‖Φ(x_i) − c‖² − R²)   (+ weight decay through AdamW),

so that the real data is squeezed into a small hypersphere around the fixed centre c and its
α-supports become concentric balls around c. Appendix choices, all kept here: ν = 0.01,
c = 1 (a vector of ones), no bias terms and ReLU activations (both against hypersphere
collapse, Ruff et al. Propositions 2–3), 3 hidden layers of 32 units, a 25-dimensional
representation, AdamW with weight decay 1e-2, an 80/20 train/validation split of the real data
and the model kept at its lowest validation loss (early stopping).

As in Ruff et al.'s reference code, R is not a gradient parameter: it stays 0 for the first
``warm_up_epochs`` epochs and is then set after every mini-batch to the (1 − ν)-quantile of the
batch's distances, which is the minimiser of the objective over R for fixed Φ.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from synthreview.training import Adam, torch_threads

Progress = Callable[[float, str], None]


def _network(n_features: int, hidden: tuple[int, ...], rep_dim: int, generator: torch.Generator):
    sizes = [n_features, *hidden]
    layers: list[nn.Module] = []
    # nn.Linear draws default weights from the global RNG; fork it so callers' streams stay put
    with torch.random.fork_rng(devices=[]):
        for n_in, n_out in itertools.pairwise(sizes):
            layers += [nn.Linear(n_in, n_out, bias=False), nn.ReLU()]
        layers.append(nn.Linear(sizes[-1], rep_dim, bias=False))
    net = nn.Sequential(*layers)
    with torch.no_grad():  # re-initialise from our generator: the seed alone decides the weights
        for module in net:
            if isinstance(module, nn.Linear):
                nn.init.kaiming_uniform_(module.weight, a=math.sqrt(5), generator=generator)
    return net


@dataclass(eq=False)
class OneClassEmbedding:
    """A fitted Deep SVDD network; ``transform`` maps encoded rows to the evaluation space.

    Attributes
    ----------
    name : str
        ``"oneclass"``.
    center : ndarray of shape (rep_dim,)
        The fixed centre c (ones).
    radius : float
        Soft-boundary radius R at the kept epoch.
    network : torch.nn.Module
        The trained network (CPU, eval mode).
    train_loss, validation_loss : tuple of float
        Loss per epoch, for diagnostics.
    best_epoch : int
        Epoch whose weights were kept (lowest validation loss).
    config : OneClassConfig
        The settings it was trained with.
    """

    center: np.ndarray
    radius: float
    network: nn.Module = field(repr=False)
    train_loss: tuple[float, ...] = ()
    validation_loss: tuple[float, ...] = ()
    best_epoch: int = 0
    config: OneClassConfig | None = None
    name: str = "oneclass"

    def transform(self, x: np.ndarray, *, batch_size: int = 65_536) -> np.ndarray:
        """Embed ``x`` (encoded with the encoder fitted on real) into ``(n, rep_dim)`` float32."""
        arr = np.asarray(x, dtype=np.float32)
        expected = self.network[0].in_features
        if arr.ndim != 2 or arr.shape[1] != expected:
            raise ValueError(f"x must have shape (n, {expected}); got {arr.shape}")
        out = np.empty((len(arr), len(self.center)), dtype=np.float32)
        # one intra-op thread, as in training: how torch splits a product across threads
        # changes its float32 rounding (a 3-thread review embedded rows up to 3.6e-7 apart
        # from a 2-thread one and moved α-Precision in the 5th digit), and the review must not
        # depend on the thread count; a 32-unit network gains nothing from threads anyway
        with torch_threads(1), torch.no_grad():
            for start in range(0, len(arr), batch_size):
                chunk = torch.from_numpy(np.ascontiguousarray(arr[start : start + batch_size]))
                out[start : start + len(chunk)] = self.network(chunk).numpy()
        return out


def _soft_boundary_loss(dist: torch.Tensor, radius: float, nu: float) -> torch.Tensor:
    excess = torch.clamp(dist - radius**2, min=0.0)
    return radius**2 + excess.mean() / nu


def _quantile(values: torch.Tensor, q: float) -> float:
    rank = min(len(values), max(1, math.ceil(q * len(values))))
    return float(torch.kthvalue(values, rank).values)


@dataclass(frozen=True)
class OneClassConfig:
    """Architecture, objective and optimisation of the Deep SVDD embedding.

    Defaults follow the paper's appendix for tabular data (3 × 32 hidden units, d_z = 25,
    ν = 0.01, c = 1, AdamW with weight decay 1e-2, 80/20 split). Epochs are few because the
    validation loss of 50k rows settles within about ten; ``batch_size`` ``None`` means a tenth
    of the training rows within [32, 1024], so small tables still get ten updates per epoch.
    """

    hidden: tuple[int, ...] = (32, 32, 32)
    rep_dim: int = 25
    nu: float = 0.01
    center_value: float = 1.0
    max_epochs: int = 20
    warm_up_epochs: int = 2
    patience: int = 3
    batch_size: int | None = None
    learning_rate: float = 3e-3
    weight_decay: float = 1e-2
    validation_share: float = 0.2


def fit_one_class(
    x_real: np.ndarray,
    *,
    seed: int = 0,
    device: str = "cpu",
    progress: Progress | None = None,
    config: OneClassConfig = OneClassConfig(),
) -> OneClassEmbedding:
    """Train the Deep SVDD evaluation embedding on the real rows.

    Parameters
    ----------
    x_real : ndarray of shape (n, d)
        Encoded real rows (e.g. :class:`synthreview.encoding.TabularEncoder` output); n ≥ 10.
    seed : int, default=0
        Seeds the split, the initial weights and the mini-batch order; on CPU the same seed
        gives the same network.
    device : str, default="cpu"
        Torch device used for training; the returned network lives on the CPU.
    progress : callable, optional
        ``progress(fraction, message)`` after every epoch.
    config : OneClassConfig
        Training stops after ``config.patience`` epochs without a lower validation loss and
        keeps the weights of the best epoch.

    Returns
    -------
    OneClassEmbedding
    """
    x = np.asarray(x_real, dtype=np.float32)
    if x.ndim != 2 or len(x) < 10 or x.shape[1] < 1:
        raise ValueError(f"x_real must be a 2-d array with at least 10 rows; got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("x_real contains NaN or infinite values; encode missing values first")
    # a 32-unit MLP gains nothing from intra-op threads, and on a shared 2-core machine two
    # spinning OpenMP threads made each step 10-50x slower (measured 3.5 ms vs 340 ms per step);
    # one thread also keeps the weights independent of the review's thread count
    with torch_threads(1):
        return _fit(x, seed=seed, device=device, progress=progress, cfg=config)


def _fit(x: np.ndarray, *, seed: int, device: str, progress, cfg: OneClassConfig):
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(int(rng.integers(2**31)))
    order = rng.permutation(len(x))
    n_val = max(1, round(cfg.validation_share * len(x)))
    val_x = torch.from_numpy(x[order[:n_val]]).to(device)
    train_x = torch.from_numpy(x[order[n_val:]]).to(device)
    batch_size = cfg.batch_size or min(1024, max(32, len(train_x) // 10))
    center = torch.full((cfg.rep_dim,), float(cfg.center_value), device=device)
    nu, max_epochs, warm_up = cfg.nu, cfg.max_epochs, cfg.warm_up_epochs

    net = _network(x.shape[1], tuple(cfg.hidden), cfg.rep_dim, generator).to(device)
    optimizer = Adam(net.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    radius = 0.0
    best = (math.inf, 0, radius, {k: v.detach().clone() for k, v in net.state_dict().items()})
    train_hist: list[float] = []
    val_hist: list[float] = []
    for epoch in range(max_epochs):
        net.train()
        perm = torch.randperm(len(train_x), generator=generator).to(device)
        total = 0.0
        for start in range(0, len(train_x), batch_size):
            batch = train_x[perm[start : start + batch_size]]
            dist = ((net(batch) - center) ** 2).sum(dim=1)
            loss = _soft_boundary_loss(dist, radius, nu)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(batch)
            if epoch >= warm_up:
                radius = _quantile(dist.detach().sqrt(), 1.0 - nu)
        net.eval()
        with torch.no_grad():
            val_dist = ((net(val_x) - center) ** 2).sum(dim=1)
            val_loss = float(_soft_boundary_loss(val_dist, radius, nu))
        train_hist.append(total / len(train_x))
        val_hist.append(val_loss)
        # R is 0 during warm-up, so only losses measured with the final R-rule are comparable
        if epoch >= min(warm_up, max_epochs - 1) and val_loss < best[0]:
            state = {k: v.detach().clone() for k, v in net.state_dict().items()}
            best = (val_loss, epoch, radius, state)
        if progress is not None:
            progress((epoch + 1) / max_epochs, f"One-Class embedding: epoch {epoch + 1}")
        if epoch - best[1] >= cfg.patience and epoch >= warm_up:
            break
    net.load_state_dict(best[3])
    net = net.to("cpu").eval()
    if progress is not None:
        progress(1.0, "One-Class embedding trained")
    return OneClassEmbedding(
        center=np.full(cfg.rep_dim, float(cfg.center_value), dtype=np.float32),
        radius=float(best[2]),
        network=net,
        train_loss=tuple(train_hist),
        validation_loss=tuple(val_hist),
        best_epoch=int(best[1]),
        config=cfg,
    )
