"""Baseline generators: deliberately good and deliberately flawed candidates for tables and traces.

``tables`` holds the table generators (copies, marginals, copula, noise, mode collapse) and
``traces`` the glucose-trace ones; each is chosen because a reviewer should reach a different
verdict on it (see :mod:`synthreview.demo`).
"""

from __future__ import annotations

from synthreview.generators.tables import (
    add_noise,
    copy_rows,
    gaussian_copula,
    independent_marginals,
    mode_collapse,
)
from synthreview.generators.traces import (
    traces_add_noise,
    traces_autoregressive,
    traces_motif_shuffle,
)

__all__ = [
    "add_noise",
    "copy_rows",
    "gaussian_copula",
    "independent_marginals",
    "mode_collapse",
    "traces_add_noise",
    "traces_autoregressive",
    "traces_motif_shuffle",
]
