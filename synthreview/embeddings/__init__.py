"""Evaluation embeddings: fitted on real rows, applied to every source.

:func:`fit_embedding` is the entry point the report calls. An embedding is registered in
``FITTERS`` by name; each fitter takes ``(x_real, *, seed, device, progress)`` and returns an
object following :class:`synthreview.embeddings.base.Embedding`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from synthreview.embeddings.base import Embedding
from synthreview.embeddings.lstm_autoencoder import LSTMAutoencoderEmbedding, fit_lstm_autoencoder
from synthreview.embeddings.one_class import OneClassConfig, OneClassEmbedding, fit_one_class
from synthreview.errors import ConfigError

Progress = Callable[[float, str], None]


@dataclass(frozen=True, eq=False)
class IdentityEmbedding:
    """The encoded features themselves; the centre is the mean of the real rows.

    Attributes
    ----------
    name : str
        ``"none"``.
    center : ndarray of shape (d,)
    """

    center: np.ndarray
    name: str = "none"

    def transform(self, x: np.ndarray) -> np.ndarray:
        """Return ``x`` as a float32 array of the real data's width."""
        arr = np.asarray(x, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[1] != len(self.center):
            raise ValueError(f"x must have shape (n, {len(self.center)}); got {arr.shape}")
        return arr


def fit_identity(
    x_real: np.ndarray, *, seed: int = 0, device: str = "cpu", progress: Progress | None = None
) -> IdentityEmbedding:
    """No learned embedding: metrics run on the encoded features, centred on the real mean."""
    del seed, device  # nothing random or device-bound to do
    x = np.asarray(x_real, dtype=np.float32)
    if x.ndim != 2 or len(x) < 1:
        raise ValueError(f"x_real must be a non-empty 2-d array; got shape {x.shape}")
    if progress is not None:
        progress(1.0, "no embedding: using the encoded features")
    return IdentityEmbedding(center=x.mean(axis=0, dtype=np.float64).astype(np.float32))


#: embedding name -> fitter; another embedding registers itself here with one line
FITTERS: dict[str, Callable[..., Embedding]] = {
    "oneclass": fit_one_class,
    "none": fit_identity,
    # takes raw (n, n_steps) mg/dL traces rather than encoded table rows
    "lstm_autoencoder": fit_lstm_autoencoder,
}


def fit_embedding(
    x_real: np.ndarray,
    *,
    method: str = "oneclass",
    seed: int = 0,
    device: str = "cpu",
    progress: Progress | None = None,
) -> Embedding:
    """Fit the evaluation embedding ``method`` on the encoded real rows.

    Parameters
    ----------
    x_real : ndarray of shape (n, d)
    method : str, default="oneclass"
        A key of ``FITTERS``: ``"oneclass"`` (Deep SVDD, Alaa et al. 2022 appendix) or
        ``"none"`` (identity; centre = mean of real) for encoded table rows;
        ``"lstm_autoencoder"`` (Alaa et al. 2022 appendix) for raw mg/dL traces.
    seed : int, default=0
    device : str, default="cpu"
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    Embedding
        Has ``.name``, ``.center`` and ``.transform(x)``.
    """
    if method not in FITTERS:
        raise ConfigError(f"embedding method must be one of {sorted(FITTERS)}; got {method!r}")
    return FITTERS[method](x_real, seed=seed, device=device, progress=progress)


__all__ = [
    "FITTERS",
    "Embedding",
    "IdentityEmbedding",
    "LSTMAutoencoderEmbedding",
    "OneClassConfig",
    "OneClassEmbedding",
    "fit_embedding",
    "fit_identity",
    "fit_lstm_autoencoder",
    "fit_one_class",
]
