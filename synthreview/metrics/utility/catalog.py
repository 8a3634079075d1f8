"""Utility metrics as the reviewer sees them (pure data; see :mod:`synthreview.metrics.info`)."""

from __future__ import annotations

from synthreview.metrics.info import MetricInfo

_URBAN = "Urban Institute, appendix Metrics Descriptions, General utility"
_FRESH = "the same metric for the holdout table against the training table: sampling noise alone"

METRICS: tuple[MetricInfo, ...] = (
    MetricInfo(
        name="k_marginal",
        section="utility",
        label="k-marginal (categorical)",
        direction="higher",
        range=(0.0, 1000.0),
        ideal=1000.0,
        key="k_marginal.{k}",
        citation=f"{_URBAN}, k-marginal score (NIST CRC / SDNist total variation distance)",
        meaning="how well joint distributions of k categorical columns are kept: "
        "(1 - mean total variation distance) × 1000",
        holdout_meaning=_FRESH,
        fmt=".0f",
    ),
    MetricInfo(
        name="k_marginal_binned",
        section="utility",
        label="k-marginal (all columns)",
        direction="higher",
        range=(0.0, 1000.0),
        ideal=1000.0,
        key="k_marginal_binned.{k}",
        citation=f"{_URBAN}, k-marginal score; numeric columns binned as SDNist does",
        meaning="the k-marginal over every column, numeric ones cut into quantile bins of the "
        "real data, so joint structure of numbers is judged too",
        holdout_meaning=_FRESH,
        fmt=".0f",
    ),
    MetricInfo(
        name="correlation_mae",
        section="utility",
        label="correlation MAE",
        direction="lower",
        range=(0.0, 2.0),
        ideal=0.0,
        key="correlation_mae",
        citation=f"{_URBAN}, mean absolute error in pairwise correlation coefficients",
        meaning="mean absolute difference of Pearson correlations between numeric columns",
        holdout_meaning=_FRESH,
    ),
    MetricInfo(
        name="discriminator_auc",
        section="utility",
        label="discriminator AUC",
        direction="closest",
        range=(0.0, 1.0),
        ideal=0.5,
        key="discriminator_auc",
        citation=f"{_URBAN}, discriminator ROC AUC",
        meaning="how well a gradient-boosting model tells real from synthetic rows; 0.5 = "
        "indistinguishable, far below 0.5 is suspicious (copies of training rows)",
        holdout_meaning=_FRESH,
    ),
    MetricInfo(
        name="ci_overlap",
        section="utility",
        label="regression CI overlap",
        direction="higher",
        range=(-float("inf"), 1.0),
        ideal=1.0,
        key="ci_overlap",
        citation="Urban Institute, appendix Metrics Descriptions, Specific utility, "
        "regression confidence interval overlap",
        meaning="mean overlap of regression coefficients' confidence intervals; 1 = same "
        "conclusions, below 0 = a gap between them",
        holdout_meaning=_FRESH,
    ),
    MetricInfo(
        name="proportion_error",
        section="utility",
        label="proportion error",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.0,
        key="proportion_error",
        citation=f"{_URBAN}, absolute error for proportions",
        meaning="mean absolute difference of category shares",
        holdout_meaning=_FRESH,
    ),
    MetricInfo(
        name="mean_error",
        section="utility",
        label="mean error",
        direction="lower",
        range=(0.0, float("inf")),
        ideal=0.0,
        key="mean_error",
        citation=f"{_URBAN}, absolute proportion error for means",
        meaning="mean relative difference of numeric column means",
        holdout_meaning=_FRESH,
    ),
    MetricInfo(
        name="percentile_error",
        section="utility",
        label="percentile error",
        direction="lower",
        range=(0.0, float("inf")),
        ideal=0.0,
        key="percentile_error",
        citation=f"{_URBAN}, proportion error in percentiles",
        meaning="mean relative difference of the minimum, deciles and maximum of numeric columns",
        holdout_meaning=_FRESH,
    ),
    MetricInfo(
        name="tstr_trtr_ratio",
        section="utility",
        label="TSTR / TRTR",
        direction="higher",
        range=(0.0, float("inf")),
        ideal=1.0,
        key="ml_efficacy[*].{tstr,trtr}",
        citation="Eiring (2022), §2.3 and appendix A (ML efficacy: train on synthetic, test on "
        "real)",
        meaning="the worst model's test score when trained on synthetic data, over the same "
        "model trained on real data; 1 = as useful as the real data",
        holdout_meaning="TRTR is itself the reference: what the real training data achieves",
        fmt=".2f",
    ),
)
