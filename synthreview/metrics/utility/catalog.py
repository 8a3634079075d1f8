"""Utility metrics as the reviewer sees them, bound to their functions.

See :mod:`synthreview.metrics.info`. Each bound function reads two tables and their schema and
returns the number the utility section reports under ``key`` (k = 2 for the k-marginals).
"""

from __future__ import annotations

import pandas as pd

from synthreview.io.schema import Schema
from synthreview.metrics.info import MetricInfo
from synthreview.metrics.utility.efficacy import discriminator_auc, ml_efficacy
from synthreview.metrics.utility.kmarginal import k_marginal_score
from synthreview.metrics.utility.marginals import (
    correlation_error,
    mean_errors,
    percentile_errors,
    proportion_errors,
)
from synthreview.metrics.utility.regression import ci_overlap

_URBAN = "Urban Institute, appendix Metrics Descriptions, General utility"
_FRESH = "the same metric for the holdout table against the training table: sampling noise alone"


def k_marginal_2(real, synthetic, *, holdout=None, schema: Schema, seed: int = 0) -> float:
    """The 2-marginal score over the categorical columns."""
    result = k_marginal_score(real, synthetic, columns=schema.categorical, k=(2,), seed=seed)
    return result.scores[2]


def k_marginal_binned_2(real, synthetic, *, holdout=None, schema: Schema, seed: int = 0) -> float:
    """The 2-marginal score over every column, numeric ones cut into quantile bins."""
    result = k_marginal_score(
        real, synthetic, columns=schema.categorical, numeric=schema.numeric, k=(2,), seed=seed
    )
    return result.scores[2]


def correlation_mae(real, synthetic, *, holdout=None, schema: Schema, seed: int = 0) -> float:
    """Mean absolute difference of the numeric columns' Pearson correlations."""
    return correlation_error(real, synthetic, columns=schema.numeric).mae


def discriminator_roc_auc(real, synthetic, *, holdout=None, schema: Schema, seed: int = 0) -> float:
    """Cross-validated ROC AUC of gradient boosting telling real from synthetic rows."""
    return discriminator_auc(real, synthetic, schema=schema, seed=seed).auc


def linear_formula(schema: Schema) -> str:
    """``first numeric ~ every other analysed column``: the CI-overlap formula of a binding."""
    numeric = list(schema.numeric)
    if not numeric or len(schema.analysed) < 2:
        raise ValueError(
            f"schema must hold a numeric column and another analysed column for a regression; "
            f"got {list(schema.analysed)} instead"
        )
    terms = [c for c in schema.analysed if c != numeric[0]]
    return f"{numeric[0]} ~ {' + '.join(terms)}"


def mean_ci_overlap(real, synthetic, *, holdout=None, schema: Schema, seed: int = 0) -> float:
    """Mean CI overlap of :func:`linear_formula`'s regression coefficients."""
    return ci_overlap(real, synthetic, formula=linear_formula(schema), schema=schema).mean_overlap


def proportion_error(real, synthetic, *, holdout=None, schema: Schema, seed: int = 0) -> float:
    """Mean absolute difference of category shares."""
    return proportion_errors(real, synthetic, columns=schema.categorical).mean_error


def mean_error(real, synthetic, *, holdout=None, schema: Schema, seed: int = 0) -> float:
    """Mean relative difference of numeric column means."""
    return mean_errors(real, synthetic, columns=schema.numeric).mean_error


def percentile_error(real, synthetic, *, holdout=None, schema: Schema, seed: int = 0) -> float:
    """Mean relative difference of numeric columns' minimum, deciles and maximum."""
    return percentile_errors(real, synthetic, columns=schema.numeric).mean_error


def tstr_trtr_ratio(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    holdout: pd.DataFrame,
    schema: Schema,
    seed: int = 0,
) -> float:
    """Worst model's TSTR / TRTR ROC AUC, the first categorical column as the target.

    The release rule reads the same ratio from ``utility.ml_efficacy`` (R² or RMSE for a
    numeric target, :func:`synthreview.judgement.rules.measure_tstr_trtr_ratio`).
    """
    if holdout is None or not schema.categorical:
        raise ValueError(
            "tstr_trtr_ratio needs a holdout table and a categorical target column; got "
            f"holdout={'none' if holdout is None else 'a table'} and categorical columns "
            f"{list(schema.categorical)} instead"
        )
    result = ml_efficacy(
        real, synthetic, holdout, schema=schema, target=schema.categorical[0], seed=seed
    )
    return min(s.tstr / s.trtr for s in result.scores if s.metric == "roc_auc")


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
        function=k_marginal_2,
        rules=("k_marginal",),  # when no numeric column can be binned
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
        function=k_marginal_binned_2,
        rules=("k_marginal",),
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
        function=correlation_mae,
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
        function=discriminator_roc_auc,
        # identical rows on both sides of the folds push the AUC far below 0.5 (copies)
        identical="worst",
        rules=("discriminator_auc",),
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
        function=mean_ci_overlap,
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
        function=proportion_error,
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
        function=mean_error,
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
        function=percentile_error,
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
        function=tstr_trtr_ratio,
        rules=("tstr_trtr_ratio",),
    ),
    MetricInfo(
        name="label_leak",
        section="utility",
        label="answer key (label leak)",
        direction="lower",
        range=(-float("inf"), 1.0),
        ideal=0.0,
        key="answer_key.leak",
        citation="SynthAudit (answer keys inflate train-on-synthetic scores); Breiman et al. "
        "(1984), CART (the shallow tree)",
        meaning="1 - (error of a depth-3 tree predicting the column on the candidate) / (its "
        "error on a fresh real sample): 1 = the column is an exact rule of other columns in "
        "the candidate but not in real data",
        holdout_meaning="the tree's error on the holdout is the denominator: real data's own "
        "exactness",
        fmt=".2f",
        unbound="needs the target or the columns the reviewer names (tests/test_disclosure.py)",
        rules=("label_leak",),
    ),
    MetricInfo(
        name="constraint_violation_excess",
        section="utility",
        label="declared constraints broken",
        direction="lower",
        range=(-1.0, 1.0),
        ideal=0.0,
        key="constraints.checks[*].{rate,real_rate}",
        citation="SDV constraints; SDMetrics constraint validity (rows obeying the owner's rules)",
        meaning="the worst declared constraint's share of candidate rows that break it, beyond "
        "the share of training rows that break it",
        holdout_meaning="the training (and holdout) rows' own violation rate: a rule real data "
        "break too is not the generator's fault",
        fmt=".3f",
        unbound="needs the reviewer's constraints file (tests/test_disclosure.py)",
        rules=("constraint_violations",),
    ),
)
