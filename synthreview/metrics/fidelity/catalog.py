"""Fidelity metrics as the reviewer sees them, bound to their functions.

See :mod:`synthreview.metrics.info`. The bound functions embed both tables with the
:class:`~synthreview.encoding.TabularEncoder` fitted on the real rows (a review embeds them with
the one-class network instead; the metrics are the same functions of the embedded rows).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from synthreview.encoding import TabularEncoder
from synthreview.io.schema import Schema
from synthreview.metrics.fidelity.prdc import prdc
from synthreview.metrics.fidelity.section import evaluate_fidelity
from synthreview.metrics.info import MetricInfo

_ALAA = "Alaa et al. (2022), How Faithful is your Synthetic Data?"
_NAEEM = f"{_ALAA}, baselines (Naeem et al. 2020, density and coverage; k = 5, appendix C)"
_FRESH = "what a fresh real sample scores against the training data: the level to aim for"


def _embedded(
    real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema
) -> tuple[np.ndarray, np.ndarray]:
    encoder = TabularEncoder(schema).fit(real)
    return encoder.transform(real, name="real"), encoder.transform(synthetic, name="synthetic")


def _alpha_beta(score: str) -> Callable[..., float]:
    """``score`` of :func:`evaluate_fidelity` (no bootstrap) on the encoded tables."""

    def compute(real, synthetic, *, holdout=None, schema=None, seed=0) -> float:
        real_z, synthetic_z = _embedded(real, synthetic, schema)
        return getattr(evaluate_fidelity(real_z, synthetic_z, seed=seed, n_bootstrap=0), score)

    compute.__name__ = compute.__qualname__ = f"{score}_score"
    return compute


def _prdc(score: str) -> Callable[..., float]:
    """``score`` of :func:`prdc` (k = 5) on the encoded tables."""

    def compute(real, synthetic, *, holdout=None, schema=None, seed=0) -> float:
        return getattr(prdc(*_embedded(real, synthetic, schema), k=5), score)

    compute.__name__ = compute.__qualname__ = f"prdc_{score}"
    return compute


METRICS: tuple[MetricInfo, ...] = (
    MetricInfo(
        name="ip_alpha",
        section="fidelity",
        label="IPα",
        direction="higher",
        range=(0.0, 1.0),
        ideal=1.0,
        key="ip_alpha",
        citation=f"{_ALAA}, §3.2 (α-Precision, integrated over α)",
        meaning="how realistic the synthetic rows are: the share of them lying where typical "
        "real rows lie, averaged over every typicality level α",
        holdout_meaning=_FRESH,
        function=_alpha_beta("ip_alpha"),
        rules=("ip_alpha",),
    ),
    MetricInfo(
        name="ir_beta",
        section="fidelity",
        label="IRβ",
        direction="higher",
        range=(0.0, 1.0),
        ideal=1.0,
        key="ir_beta",
        citation=f"{_ALAA}, §3.2 (β-Recall, integrated over β)",
        meaning="how much of the real data's variety the synthetic rows cover (low = modes "
        "dropped)",
        holdout_meaning=_FRESH,
        suspicious_above_holdout=True,
        function=_alpha_beta("ir_beta"),
        rules=("ir_beta",),
    ),
    MetricInfo(
        name="authenticity",
        section="fidelity",
        label="authenticity",
        direction="higher",
        range=(0.0, 1.0),
        ideal=1.0,
        key="authenticity",
        citation=f"{_ALAA}, §3.2 (Authenticity: a hypothesis test for data copying)",
        meaning="share of synthetic rows that are not closer to a training row than that row's "
        "own nearest real neighbour (low = copies of training rows)",
        holdout_meaning="authenticity of genuinely new people; real data is never 1.0, so "
        "compare with this, not with 1",
        function=_alpha_beta("authenticity"),
        identical="worst",  # identical rows are copies
        rules=("authenticity_gap",),
    ),
    MetricInfo(
        name="prdc_precision",
        section="fidelity",
        label="precision (k-NN)",
        direction="higher",
        range=(0.0, 1.0),
        ideal=1.0,
        key="prdc.precision",
        citation=_NAEEM,
        meaning="share of synthetic rows inside some real row's k-nearest-neighbour ball",
        holdout_meaning=_FRESH,
        function=_prdc("precision"),
    ),
    MetricInfo(
        name="prdc_recall",
        section="fidelity",
        label="recall (k-NN)",
        direction="higher",
        range=(0.0, 1.0),
        ideal=1.0,
        key="prdc.recall",
        citation=_NAEEM,
        meaning="share of real rows inside some synthetic row's k-nearest-neighbour ball",
        holdout_meaning=_FRESH,
        suspicious_above_holdout=True,
        function=_prdc("recall"),
    ),
    MetricInfo(
        name="prdc_density",
        section="fidelity",
        label="density",
        direction="closest",
        range=(0.0, float("inf")),
        ideal=1.0,
        key="prdc.density",
        citation=_NAEEM,
        meaning="how many real neighbourhoods a synthetic row sits in, over k; 1 = as crowded "
        "as real data, above 1 = piled up on dense regions",
        holdout_meaning=_FRESH,
        function=_prdc("density"),
    ),
    MetricInfo(
        name="prdc_coverage",
        section="fidelity",
        label="coverage",
        direction="higher",
        range=(0.0, 1.0),
        ideal=1.0,
        key="prdc.coverage",
        citation=_NAEEM,
        meaning="share of real rows whose neighbourhood holds at least one synthetic row",
        holdout_meaning=_FRESH,
        suspicious_above_holdout=True,
        function=_prdc("coverage"),
    ),
)
