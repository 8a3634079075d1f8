"""Fidelity metrics as the reviewer sees them (pure data; see :mod:`synthreview.metrics.info`)."""

from __future__ import annotations

from synthreview.metrics.info import MetricInfo

_ALAA = "Alaa et al. (2022), How Faithful is your Synthetic Data?"
_NAEEM = f"{_ALAA}, baselines (Naeem et al. 2020, density and coverage; k = 5, appendix C)"
_FRESH = "what a fresh real sample scores against the training data: the level to aim for"

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
    ),
)
