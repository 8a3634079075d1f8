"""Metric functions, grouped by what they measure.

- fidelity: :func:`alpha_precision_curve`, :func:`beta_recall_curve`,
  :func:`authenticity_samples`, :func:`prdc`, :func:`feature_distances`
- privacy: :func:`gower_distances`, :func:`membership_inference`, :func:`evaluate_privacy`
- utility: :func:`k_marginal_score`, :func:`correlation_error`, :func:`discriminator_auc`,
  :func:`ci_overlap`, :func:`ml_efficacy`, ...
- glucose: :func:`glycemic_samples`, :func:`clarke_zones`, :func:`evaluate_glucose`

Each area also has one ``evaluate_*`` entry point that :func:`synthreview.evaluate` calls.
"""

from __future__ import annotations

from synthreview.metrics.fidelity.alpha_beta import (
    alpha_precision_curve,
    authenticity_samples,
    authenticity_score,
    beta_recall_curve,
)
from synthreview.metrics.fidelity.features import (
    feature_distances,
    pairwise_unique_combinations,
    pca_projection,
)
from synthreview.metrics.fidelity.prdc import PRDC, prdc
from synthreview.metrics.fidelity.section import FidelityReport, evaluate_fidelity
from synthreview.metrics.glucose.clarke import clarke_error_grid, clarke_zones
from synthreview.metrics.glucose.glycemic import compare_glycemic, glycemic_samples
from synthreview.metrics.glucose.motifs import motif_breadth
from synthreview.metrics.glucose.section import GlucoseReport, evaluate_glucose, prepare_glucose
from synthreview.metrics.privacy.attack_stats import AttackResult
from synthreview.metrics.privacy.gower import gower_distances, gower_nearest
from synthreview.metrics.privacy.membership import membership_inference
from synthreview.metrics.privacy.section import (
    PrivacyReport,
    evaluate_privacy,
    evaluate_privacy_arrays,
)
from synthreview.metrics.utility.efficacy import discriminator_auc, ml_efficacy
from synthreview.metrics.utility.kmarginal import k_marginal_score
from synthreview.metrics.utility.marginals import (
    correlation_error,
    mean_errors,
    percentile_errors,
    proportion_errors,
)
from synthreview.metrics.utility.regression import ci_overlap
from synthreview.metrics.utility.section import UtilityReport, evaluate_utility

__all__ = [
    "PRDC",
    "AttackResult",
    "FidelityReport",
    "GlucoseReport",
    "PrivacyReport",
    "UtilityReport",
    "alpha_precision_curve",
    "authenticity_samples",
    "authenticity_score",
    "beta_recall_curve",
    "ci_overlap",
    "clarke_error_grid",
    "clarke_zones",
    "compare_glycemic",
    "correlation_error",
    "discriminator_auc",
    "evaluate_fidelity",
    "evaluate_glucose",
    "evaluate_privacy",
    "evaluate_privacy_arrays",
    "evaluate_utility",
    "feature_distances",
    "glycemic_samples",
    "gower_distances",
    "gower_nearest",
    "k_marginal_score",
    "mean_errors",
    "membership_inference",
    "ml_efficacy",
    "motif_breadth",
    "pairwise_unique_combinations",
    "pca_projection",
    "percentile_errors",
    "prdc",
    "prepare_glucose",
    "proportion_errors",
]
