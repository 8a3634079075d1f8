"""Registry-driven properties: every registered metric that can run on small data is checked for
its range, its value on identical data, and invariance to the order of input rows.

Each metric needs an entry in COMPUTE (a hook calling the real metric function) or in
NOT_CALLABLE (with the reason it cannot run on a small table here); a metric added to a catalog
without either fails ``test_every_registered_metric_is_covered``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from synthreview.errors import UndefinedMetricWarning
from synthreview.io.schema import Schema
from synthreview.io.traces import Traces
from synthreview.judgement.policy import HEADLINES
from synthreview.judgement.rules import SPECS
from synthreview.metrics.fidelity.prdc import prdc
from synthreview.metrics.fidelity.section import evaluate_fidelity
from synthreview.metrics.glucose.agp import agp_distance, agp_profile
from synthreview.metrics.glucose.motifs import motif_breadth
from synthreview.metrics.glucose.subjects import subject_privacy
from synthreview.metrics.info import MetricInfo
from synthreview.metrics.privacy.section import distance_to_closest_record, row_hashes
from synthreview.metrics.registry import REGISTRY, build_registry, for_section, get
from synthreview.metrics.utility.efficacy import discriminator_auc, ml_efficacy
from synthreview.metrics.utility.kmarginal import k_marginal_score
from synthreview.metrics.utility.marginals import (
    correlation_error,
    mean_errors,
    percentile_errors,
    proportion_errors,
)
from synthreview.metrics.utility.regression import ci_overlap

SCHEMA = Schema({"age": "numeric", "income": "numeric", "hours": "numeric",
                 "sex": "categorical", "job": "categorical"})  # fmt: skip


def _table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n).astype(float)
    sex = rng.choice(["F", "M"], n)
    return pd.DataFrame(
        {
            "age": age,
            "income": 1000 + 40 * age + rng.normal(0, 300, n) + 200 * (sex == "M"),
            "hours": rng.normal(38, 6, n).round(),
            "sex": sex,
            "job": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]),
        }
    )


def _encoded(frame: pd.DataFrame) -> np.ndarray:
    num = frame[SCHEMA.numeric].to_numpy(float)
    num = (num - np.array([49.0, 3000.0, 38.0])) / np.array([18.0, 800.0, 6.0])
    onehot = pd.get_dummies(frame[SCHEMA.categorical]).reindex(
        columns=["sex_F", "sex_M", "job_a", "job_b", "job_c"], fill_value=False
    )
    return np.hstack([num, onehot.to_numpy(float)])


def _fidelity(metric):
    def compute(real, synthetic):
        report = evaluate_fidelity(_encoded(real), _encoded(synthetic), n_bootstrap=0)
        return getattr(report, metric)

    return compute


def _prdc(metric):
    return lambda real, synthetic: getattr(prdc(_encoded(real), _encoded(synthetic), k=5), metric)


def _dcr(metric):
    def compute(real, synthetic):
        holdout = _table(200, 7)
        result = distance_to_closest_record(
            _encoded(real),
            _encoded(synthetic),
            _encoded(holdout),
            real_hashes=row_hashes(real),
            synthetic_hashes=row_hashes(synthetic),
            holdout_hashes=row_hashes(holdout),
        )
        return getattr(result, metric)

    return compute


def _k_marginal(binned):
    def compute(real, synthetic):
        numeric = SCHEMA.numeric if binned else ()
        cat = SCHEMA.categorical
        return k_marginal_score(real, synthetic, columns=cat, numeric=numeric).scores[2]

    return compute


def _tstr_ratio(real, synthetic):
    holdout = _table(150, 99)
    result = ml_efficacy(real, synthetic, holdout, schema=SCHEMA, target="sex")
    return min(s.tstr / s.trtr for s in result.scores if s.metric == "roc_auc")


def _traces(real, synthetic, metric):
    # the numeric columns as short "traces" in mg/dL, rounded so motifs repeat
    def traces(frame):
        return (frame[SCHEMA.numeric].to_numpy(float) / [1.0, 30.0, 1.0]).round(-1) + 70

    result = motif_breadth(traces(real), traces(synthetic), motif_length=2, tolerance_mg_dl=5)
    return getattr(result, metric)


def _agp(real, synthetic):
    # the numeric columns as 3-reading traces in mg/dL, pooled into the first 15-minute bin
    def traces(frame):
        return frame[SCHEMA.numeric].to_numpy(float) / [1.0, 30.0, 1.0] + 70

    return agp_distance(agp_profile(traces(real)), agp_profile(traces(synthetic)))


def _subject_auc(real, synthetic):
    # rows as windows, a (sex, job) group as the person; holdout persons carry other ids
    def traces(frame, prefix=""):
        ids = (prefix + frame["sex"] + frame["job"]).tolist()
        values = frame[SCHEMA.numeric].to_numpy(float) / [1.0, 30.0, 1.0] + 70
        return Traces.from_array(values, name=prefix or "t", source_ids=ids)

    holdout = traces(_table(200, 7), "h")
    return subject_privacy(traces(real), traces(synthetic), holdout).subject_auc


#: metric -> (compute(real, synthetic) -> float, what identical data gives: "ideal" / "worst")
COMPUTE = {
    "ip_alpha": (_fidelity("ip_alpha"), "ideal"),
    "ir_beta": (_fidelity("ir_beta"), "ideal"),
    "authenticity": (_fidelity("authenticity"), "worst"),  # identical rows are copies
    "prdc_precision": (_prdc("precision"), "ideal"),
    "prdc_recall": (_prdc("recall"), "ideal"),
    "prdc_density": (_prdc("density"), "ideal"),
    "prdc_coverage": (_prdc("coverage"), "ideal"),
    "dcr_share": (_dcr("share_closer_to_train"), "worst"),
    "exact_copy_share": (_dcr("exact_copy_share"), "worst"),
    "k_marginal": (_k_marginal(False), "ideal"),
    "k_marginal_binned": (_k_marginal(True), "ideal"),
    "correlation_mae": (
        lambda r, s: correlation_error(r, s, columns=SCHEMA.numeric).mae,
        "ideal",
    ),
    # identical rows on both sides of the folds push the AUC far below 0.5: the copy signature
    "discriminator_auc": (lambda r, s: discriminator_auc(r, s, schema=SCHEMA).auc, "copies"),
    "ci_overlap": (
        lambda r, s: ci_overlap(r, s, formula="income ~ age + sex", schema=SCHEMA).mean_overlap,
        "ideal",
    ),
    "proportion_error": (
        lambda r, s: proportion_errors(r, s, columns=SCHEMA.categorical).mean_error,
        "ideal",
    ),
    "mean_error": (lambda r, s: mean_errors(r, s, columns=SCHEMA.numeric).mean_error, "ideal"),
    "percentile_error": (
        lambda r, s: percentile_errors(r, s, columns=SCHEMA.numeric).mean_error,
        "ideal",
    ),
    "tstr_trtr_ratio": (_tstr_ratio, "ideal"),
    "motif_vm": (lambda r, s: _traces(r, s, "vm"), "ideal"),
    "motif_coverage": (lambda r, s: _traces(r, s, "coverage"), "ideal"),
    "motif_mse": (lambda r, s: _traces(r, s, "mse"), "ideal"),
    "agp_distance": (_agp, "ideal"),
    "subject_membership_auc": (_subject_auc, "worst"),  # identical windows: every person found
}
#: metric -> why it has no hook here
NOT_CALLABLE = {
    "mia_auc": "needs a holdout, a fitted encoder and an attack set (tests/test_privacy.py)",
    "mia_tpr_at_fpr_1pct": "as mia_auc",
    "mia_tpr_at_fpr_01pct": "as mia_auc",
    "mia_advantage": "as mia_auc",
    "epsilon_lower_bound": "derived from the membership attacks' scores (tests/test_privacy.py)",
    "attribute_inference_risk": "needs a holdout and a fitted encoder (tests/test_privacy.py)",
    "wp29_singling_out_univariate": "computed by the privacy section's WP29 attacks",
    "wp29_singling_out_multivariate": "computed by the privacy section's WP29 attacks",
    "wp29_linkability": "computed by the privacy section's WP29 attacks",
    "wp29_inference": "computed by the privacy section's WP29 attacks",
    "forecast_rmse": "trains a torch forecaster on traces (tests/test_glucose_engine.py)",
    "clarke_zone_a": "trains a torch forecaster on traces (tests/test_glucose_engine.py)",
    "forecast_mard": "trains a torch forecaster on traces (tests/test_glucose_parkes_agp.py)",
    "parkes_zone_a": "trains a torch forecaster on traces (tests/test_glucose_parkes_agp.py)",
    "audit_copy_share": "read from the release audit of a whole review (tests/test_audit.py)",
    "reattack_worse": "compares a review before and after curation (tests/test_audit.py)",
    "real_record_share": "read from the release audit of a whole review "
    "(tests/test_real_records.py)",
}
#: how close to the ideal identical data must come (sampling in the estimator aside)
TOLERANCE = {"prdc_density": 0.25, "tstr_trtr_ratio": 1e-9}


def test_every_registered_metric_is_covered():
    missing = sorted(set(REGISTRY) - set(COMPUTE) - set(NOT_CALLABLE))
    assert not missing, f"add a compute hook or a reason for {missing}"
    assert not (set(COMPUTE) | set(NOT_CALLABLE)) - set(REGISTRY)


@pytest.fixture(scope="module")
def data():
    return _table(200, 1), _table(200, 2)


def _value(name, real, synthetic):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return float(COMPUTE[name][0](real, synthetic))


@pytest.mark.parametrize("name", sorted(COMPUTE))
def test_value_within_registered_range(name, data):
    info = get(name)
    value = _value(name, *data)
    assert info.range[0] <= value <= info.range[1], (name, value)


@pytest.mark.parametrize("name", sorted(COMPUTE))
def test_identical_data_gives_the_registered_side(name, data):
    info, expected = get(name), COMPUTE[name][1]
    real = data[0]
    value = _value(name, real, real.copy())
    other = _value(name, *data)
    if expected == "ideal":
        # at the ideal, or at least as good as a different sample of the same population
        at_ideal = abs(value - info.ideal) <= TOLERANCE.get(name, 1e-6)
        assert at_ideal or not info.better(other, value), (name, value, other)
    elif expected == "worst":
        assert info.better(other, value), (name, value, other)
    else:  # the discriminator's copy signature: far below 0.5, which the policy must not reward
        assert value < 0.4, value


@pytest.mark.parametrize("name", sorted(COMPUTE))
def test_row_order_changes_nothing(name, data):
    real, synthetic = data
    rng = np.random.default_rng(5)
    shuffled_real = real.iloc[rng.permutation(len(real))].reset_index(drop=True)
    shuffled_syn = synthetic.iloc[rng.permutation(len(synthetic))].reset_index(drop=True)
    a = _value(name, real, synthetic)
    b = _value(name, shuffled_real, shuffled_syn)
    assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (name, a, b)


def test_registry_lookups_and_duplicates():
    assert get("ip_alpha").section == "fidelity"
    assert for_section("utility")[0].name == "k_marginal"
    with pytest.raises(KeyError, match="must be one of the registered metrics"):
        get("ipalpha")
    with pytest.raises(KeyError, match="section must be one of"):
        for_section("privcy")
    info = get("ip_alpha")
    with pytest.raises(ValueError, match="metric names must be unique"):
        build_registry([info], [info])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"direction": "up"}, "direction must be one of"),
        ({"section": "quality"}, "section must be one of"),
        ({"range": (1.0, 0.0)}, "range must be"),
        ({"ideal": 2.0}, "range must be"),
    ],
)
def test_metric_info_validates(kwargs, match):
    base = dict(vars(get("ip_alpha")))
    base.update(kwargs)
    with pytest.raises(ValueError, match=match):
        MetricInfo(**base)


def test_every_rule_and_headline_names_a_registered_metric():
    for spec in SPECS.values():
        assert spec.metric in REGISTRY
    assert set(HEADLINES) <= set(REGISTRY) | {"authenticity"}
    for info in REGISTRY.values():
        assert info.meaning and info.holdout_meaning and info.citation, info.name
        assert info.format(0.5) != "n/a" and info.format(float("nan")) == "n/a"
