"""The protocol every evaluation embedding follows."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedding(Protocol):
    """A fitted map from encoded rows (or traces) to the space the fidelity metrics use.

    Attributes
    ----------
    name : str
        ``"oneclass"``, ``"none"``, ``"lstm_autoencoder"``, ...
    center : ndarray of shape (d,)
        The centre of the real data's support in the embedded space.
    """

    name: str
    center: np.ndarray

    def transform(self, x: np.ndarray) -> np.ndarray:
        """Embed ``x`` into an ``(n, d)`` float32 array."""
        ...
