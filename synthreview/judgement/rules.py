"""How each release-policy rule measures its value from a candidate's ``to_dict()``.

Every function takes the candidate's JSON (live or read back from ``report.json``) and the
``policy.Rule`` being applied, and returns ``(value, holdout reference, note)``, with NaN for what
was not measured. ``synthreview.judgement.policy.RULES`` maps rule names to these functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from synthreview.judgement.policy import Rule

_LOWER_IS_BETTER_METRICS = ("rmse", "forecast_rmse")
#: metric that decides the TSTR/TRTR ratio, first one present wins
_RATIO_METRICS = ("roc_auc", "rmse", "forecast_rmse", "accuracy")


def as_number(x: Any) -> float:
    if isinstance(x, bool):
        return math.nan
    if isinstance(x, (int, float)):
        return float(x) if math.isfinite(x) else math.nan
    if isinstance(x, Mapping):
        for key in ("value", "score", "auc", "mean", "synthetic"):
            if key in x:
                return as_number(x[key])
    return math.nan


def _reference(x: Any) -> float:
    return as_number(x.get("holdout_reference")) if isinstance(x, Mapping) else math.nan


def section_of(candidate: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = candidate.get(name)
    if not value and name in ("fidelity", "privacy"):
        value = (candidate.get("glucose") or {}).get(name)
    return value if isinstance(value, Mapping) else {}


Measured = tuple[float, float, str]  # value, reference, note


def measure_mia_auc(c: Mapping[str, Any], rule: Rule) -> Measured:
    attacks = section_of(c, "privacy").get("membership_inference") or []
    aucs = [(as_number(a.get("auc")), a.get("attack", "?")) for a in attacks]
    aucs = [(v, name) for v, name in aucs if not math.isnan(v)]
    if not aucs:
        return math.nan, math.nan, "no membership-inference attack ran (privacy section, holdout)"
    value, attack = max(aucs)
    return value, math.nan, f"worst attack: {attack}"


def measure_dcr_share(c: Mapping[str, Any], rule: Rule) -> Measured:
    dcr = section_of(c, "privacy").get("dcr") or {}
    return as_number(dcr.get("share_closer_to_train")), math.nan, ""


def measure_gap(metric: str, label: str) -> Callable[[Mapping[str, Any], Rule], Measured]:
    def measure(c: Mapping[str, Any], rule: Rule) -> Measured:
        fidelity = section_of(c, "fidelity")
        value = as_number(fidelity.get(metric))
        reference = as_number((fidelity.get("holdout_reference") or {}).get(metric))
        if math.isnan(reference):
            return 1.0 - value, math.nan, f"no holdout reference: gap to the ideal 1.0 ({label})"
        return reference - value, reference, f"{label} {value:.4g} vs holdout {reference:.4g}"

    return measure


def _utility_reference(utility: Mapping[str, Any], metric: str) -> Any:
    reference = utility.get("holdout_reference")
    return reference.get(metric) if isinstance(reference, Mapping) else None


def measure_discriminator_auc(c: Mapping[str, Any], rule: Rule) -> Measured:
    utility = section_of(c, "utility")
    raw = utility.get("discriminator_auc")
    return as_number(raw), as_number(_utility_reference(utility, "discriminator_auc")), ""


def measure_k_marginal(c: Mapping[str, Any], rule: Rule) -> Measured:
    utility = section_of(c, "utility")
    scores = utility.get("k_marginal") or {}
    raw = scores.get(str(rule.k), scores.get(rule.k)) if isinstance(scores, Mapping) else None
    note = "" if raw is not None else f"no {rule.k}-marginal (needs ≥ {rule.k} categorical columns)"
    ref_scores = _utility_reference(utility, "k_marginal") or {}
    reference = ref_scores.get(str(rule.k)) if isinstance(ref_scores, Mapping) else None
    return as_number(raw), as_number(reference), note


def measure_tstr_trtr_ratio(c: Mapping[str, Any], rule: Rule) -> Measured:
    ratios: dict[str, list[tuple[float, str]]] = {}
    for row in section_of(c, "utility").get("ml_efficacy") or []:
        tstr, trtr = as_number(row.get("tstr")), as_number(row.get("trtr"))
        metric = str(row.get("metric", "")).lower()
        num, den = (trtr, tstr) if metric in _LOWER_IS_BETTER_METRICS else (tstr, trtr)
        if den > 0 and not math.isnan(num):
            ratios.setdefault(metric, []).append((num / den, f"{row.get('model', '?')} {metric}"))
    forecast = (c.get("glucose") or {}).get("forecast") or {}
    tstr, trtr = as_number(forecast.get("tstr_rmse")), as_number(forecast.get("trtr_rmse"))
    if tstr > 0 and not math.isnan(trtr):
        ratios.setdefault("forecast_rmse", []).append((trtr / tstr, "glucose forecast rmse"))
    # one threshold-free metric decides: F1 and accuracy swing with the class balance of a small
    # test set (F1 = 0 when a model predicts no positive), and R² ratios are meaningless near 0
    metric = next((m for m in _RATIO_METRICS if m in ratios), None)
    if metric is None:
        return math.nan, math.nan, "no ML-efficacy result (set a target column)"
    value, what = min(ratios[metric])
    return value, math.nan, f"worst: {what}"
