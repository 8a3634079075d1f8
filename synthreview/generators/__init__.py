"""Baseline generators: deliberately good and deliberately flawed candidates for tables and traces.

``tables`` holds the table generators (copies, marginals, copula, noise, mode collapse) and
``traces`` the glucose-trace ones; each is chosen because a reviewer should reach a different
verdict on it (see :mod:`synthreview.demo`). ``plugin`` loads a generator under review, a
``fit_sample(train, n, seed)`` callable named ``module:function``, for the shadow-model attack;
``builtin`` holds two with that signature (a memoriser and the Gaussian copula).
"""

from __future__ import annotations

from synthreview.generators.builtin import copula, memorise
from synthreview.generators.plugin import check_generated, load_generator
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
    "check_generated",
    "copula",
    "copy_rows",
    "gaussian_copula",
    "independent_marginals",
    "load_generator",
    "memorise",
    "mode_collapse",
    "traces_add_noise",
    "traces_autoregressive",
    "traces_motif_shuffle",
]
