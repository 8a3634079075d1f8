"""What each release-policy rule reads from a candidate's ``to_dict()`` and how it says it.

Every rule reads its value by explicit keys from one section's ``to_dict()`` (the same JSON as
in ``report.json``, so a verdict can be recomputed from a filed report), never by guessing a
number under "value" / "score" / "auc". A :class:`RuleSpec` names the registry metric it judges
(its direction, range and ideal come from :mod:`synthreview.metrics.registry`), the *form* of
the judged quantity, the function that measures it and the sentence that explains it.

Forms
-----
``value``
    The metric itself; for a ``"closest"`` metric (discriminator AUC) the distance
    ``|value - ideal|``, so an AUC of 0.07 is judged as far from 0.5 as 0.93.
``shortfall``
    How much worse than the holdout reference (a fresh real sample) the candidate is, in the
    metric's units: ``reference - value`` for a higher-is-better metric. Without a holdout
    reference the metric's ideal stands in (stricter: real data never reaches it).
``times_chance``
    ``value / ideal`` for a lower-is-better metric whose chance level is ``ideal`` (the true
    positive rate at 1 % false positives: chance is 0.01, so 12 means twelve times chance).

Stages
------
Most rules read a section of the review (stage ``"review"``). Three read the release audit
(stage ``"audit"``), which the candidate mapping carries under ``"audit"`` once the audit ran
(:func:`synthreview.release.verdicts.audit_evidence`): ``audit_copies`` (rows the copy rules
flag beyond a fresh real sample), ``real_records`` (rows that equal a training or holdout
record beyond a fresh sample's coincidental rate) and ``reattack`` (membership attacks worse
after curation; it applies to a curated set only). A judgement without audit evidence leaves
the audit rules out rather than guessing them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from scipy.stats import norm

from synthreview.metrics.glucose.consensus import CONSENSUS_METRICS
from synthreview.metrics.privacy.epsilon import clopper_pearson
from synthreview.metrics.privacy.membership import ATTACK_LABELS
from synthreview.metrics.registry import get as metric_info

Form = Literal["value", "shortfall", "times_chance"]
FORMS: tuple[str, ...] = ("value", "shortfall", "times_chance")
Stage = Literal["review", "audit"]
STAGES: tuple[str, ...] = ("review", "audit")
#: ML-efficacy metrics where lower is better (the ratio is inverted: TRTR / TSTR)
_LOWER_IS_BETTER_METRICS = ("rmse", "forecast_rmse")
#: metric that decides the TSTR/TRTR ratio, first one present wins: R² before RMSE for a
#: continuous target, because a ratio of errors near zero is not lost usefulness (a fresh real
#: sample: RMSE 34 trained on real vs 124 on fresh rows reads 28 %, while R² is 0.993 vs 0.907)
_RATIO_METRICS = ("roc_auc", "r2", "rmse", "forecast_rmse", "accuracy")
#: R² ratios are read only where the real data explains this much of the target; below it a
#: ratio of two numbers near 0 means nothing and the RMSE ratio decides
MIN_TRTR_R2 = 0.1
#: discriminator AUC below 0.5 by more than this reads as "suspiciously indistinguishable": a
#: cross-validated classifier only scores far *below* chance when the same rows sit on both
#: sides of its folds, i.e. synthetic rows that are copies of real ones
SUSPICIOUS_AUC_MARGIN = 0.1
#: one-sided 95 % normal quantile
Z_ONE_SIDED_95 = 1.6448536269514722
#: two-sided 95 % normal quantile (half-width of a 95 % interval in standard errors)
Z_TWO_SIDED_95 = 1.959963984540054
#: family-wise confidence of the rules that take a maximum over several tests (attacks)
FAMILY_CONFIDENCE = 0.95
#: the false-positive rate of the TPR-at-low-FPR rule (its chance level)
CHANCE_FPR = 0.01


@dataclass(frozen=True)
class Measurement:
    """What a rule found in one candidate.

    Attributes
    ----------
    value : float
        The metric value (NaN when it could not be measured).
    reference : float
        The holdout reference of the metric (NaN when there is none).
    detail : str
        Which attack / model / marginal decided, or why nothing was measured.
    applicable : bool
        False when the rule does not apply to this kind of data at all (never a reason to
        withhold a release); a value that *should* exist but does not keeps this True.
    bound : float
        A confidence bound of ``value`` that the rule judges *instead of* the value, in the
        metric's units (NaN: the value itself is judged). The worst-of-K membership rules judge
        the highest per-attack lower bound corrected for the K attacks, so the verdict carries
        the noise of the maximum they take (issue 27) while ``value`` stays the headline.
    bound_text : str
        The bound in words with its number, as a meeting reads it after "judged on"
        (``"the 95 % lower bound 0.573 over 13 attacks (Bonferroni)"``); empty without a bound.
    """

    value: float
    reference: float = math.nan
    detail: str = ""
    applicable: bool = True
    bound: float = math.nan
    bound_text: str = ""


def number(x: Any) -> float:
    """A finite float, or NaN for None, bools, strings, inf and anything else."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return math.nan
    return float(x) if math.isfinite(x) else math.nan


def section_of(candidate: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """``candidate[name]``, or for traces ``candidate["glucose"][name]`` (fidelity, privacy)."""
    value = candidate.get(name)
    if not value and name in ("fidelity", "privacy"):
        value = (candidate.get("glucose") or {}).get(name)
    return value if isinstance(value, Mapping) else {}


def why_missing(candidate: Mapping[str, Any], section: str, what: str) -> str:
    """The reason a value of ``section`` is absent: the section's error, or ``what``."""
    errors = candidate.get("errors") or {}
    for name in (section, "glucose"):
        if name in errors:
            return f"the {name} section failed: {errors[name]}"
    part = section_of(candidate, section)
    if not part and section not in candidate:
        return f"the {section} section was not computed"
    return what


# --- measures ---------------------------------------------------------------------------------


def _attacks(c: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    attacks = section_of(c, "privacy").get("membership_inference") or []
    return [a for a in attacks if isinstance(a, Mapping)]


def family_z(n_tests: int, *, confidence: float = FAMILY_CONFIDENCE) -> float:
    """One-sided normal quantile at ``1 - (1 - confidence) / n_tests`` (Bonferroni)."""
    if n_tests < 1:
        raise ValueError(f"n_tests must be at least 1; got {n_tests} instead")
    return float(norm.ppf(1 - (1 - confidence) / n_tests))


def auc_lower_bound(attack: Mapping[str, Any], n_attacks: int) -> float:
    """One-sided lower bound of an attack's AUC at ``1 - 0.05 / n_attacks`` (Bonferroni).

    The standard error comes from the attack's stratified bootstrap 95 % interval
    (``auc_ci``: half its width over 1.96), or, without one, from Hanley & McNeil (1982) with
    the attack-set sizes (``n_members``, ``n_nonmembers``). NaN when neither is reported.
    """
    auc = number(attack.get("auc"))
    ci = attack.get("auc_ci")
    se = math.nan
    if isinstance(ci, (list, tuple)) and len(ci) == 2:
        low, high = number(ci[0]), number(ci[1])
        if high > low:
            se = (high - low) / (2 * Z_TWO_SIDED_95)
    n_m, n_o = number(attack.get("n_members")), number(attack.get("n_nonmembers"))
    if math.isnan(se) and n_m > 0 and n_o > 0:
        q1, q2 = auc / (2 - auc), 2 * auc**2 / (1 + auc)
        var = (auc * (1 - auc) + (n_m - 1) * (q1 - auc**2) + (n_o - 1) * (q2 - auc**2)) / (
            n_m * n_o
        )
        se = math.sqrt(max(var, 0.0))
    return auc - family_z(n_attacks) * se


def tpr_lower_bound(attack: Mapping[str, Any], n_attacks: int) -> float:
    """Lower bound of an attack's TPR at 1 % FPR beyond chance, Bonferroni over K attacks.

    The TPR (``tpr_at_fpr_1pct`` of ``n_members`` members, rounded to a count) is bounded from
    below and the 1 % FPR (of ``n_nonmembers``) from above, each by a one-sided Clopper-Pearson
    bound at ``1 - 0.05 / (2 K)``. The threshold that gives 1 % FPR on the non-members may
    give more on the population, and chance then gives that much TPR too, so the FPR upper
    bound's excess over 1 % is subtracted: ``TPR_lo - max(0, FPR_hi - 0.01)``. A few dozen
    non-members cannot resolve 1 % FPR at all (15 non-members: FPR_hi 0.33), and the bound
    says so instead of reading an attacker's luck at FPR 0 as a leak. Without
    ``n_nonmembers`` the TPR bound alone; NaN without ``n_members`` (an older report).
    """
    tpr, n_m = number(attack.get("tpr_at_fpr_1pct")), number(attack.get("n_members"))
    if math.isnan(tpr) or not n_m >= 1:
        return math.nan
    alpha = (1 - FAMILY_CONFIDENCE) / (2 * n_attacks)
    lower, _ = clopper_pearson(round(tpr * n_m), int(n_m), alpha)
    n_o = number(attack.get("n_nonmembers"))
    excess = 0.0
    if n_o >= 1:
        _, upper = clopper_pearson(round(CHANCE_FPR * n_o), int(n_o), alpha)
        excess = max(0.0, float(upper) - CHANCE_FPR)
    return float(lower) - excess


def _worst_attack(c: Mapping[str, Any], key: str) -> Measurement:
    """Highest ``key`` over the membership-inference attacks, judged on a corrected lower bound.

    ``value`` is the highest point value; ``bound`` the highest per-attack one-sided lower bound
    at ``1 - 0.05 / K`` over the K attacks that ran (Bonferroni: the maximum of K noisy
    attacks on a fresh sample sits far above each one's chance level, issue 27). The detail
    names the attack with the highest point value first, then the bound and why.
    """
    attacks = [a for a in _attacks(c) if not math.isnan(number(a.get(key)))]
    if not attacks:
        why = why_missing(c, "privacy", "no membership-inference attack ran (needs a holdout)")
        return Measurement(math.nan, detail=why)
    n = len(attacks)
    value, attack = max((number(a.get(key)), str(a.get("attack", "?"))) for a in attacks)
    lower = auc_lower_bound if key == "auc" else tpr_lower_bound
    bounds = [(lower(a, n), a) for a in attacks]
    bounds = [(b, a) for b, a in bounds if not math.isnan(b)]
    if not bounds:
        return Measurement(
            value, detail=f"{attack}; no interval in this report: judged on the point"
        )
    bound, best = max(bounds, key=lambda pair: pair[0])
    bound = max(bound, 0.0)  # a rate bounded below 0 is bounded at 0
    name = str(best.get("attack", "?"))
    what = "AUC" if key == "auc" else "TPR at 1 % FPR"
    point = number(best.get(key))
    parts = [f"{what} {point:.3f}"]
    if key == "auc":
        parts[0] += _interval({"ci": best.get("auc_ci")})
        reference = number(best.get("reference_auc"))
        if not math.isnan(reference):
            parts.append(f"holdout-only run {reference:.3f}")
    else:
        parts.append(f"{round(point * number(best.get('n_members')))} of "
                     f"{int(number(best.get('n_members')))} members")  # fmt: skip
        n_o = number(best.get("n_nonmembers"))
        if n_o >= 1:
            parts.append(f"less the 1 % FPR's upper bound beyond 1 % over {int(n_o)} non-members")
    per = 1 - (1 - FAMILY_CONFIDENCE) / (n if key == "auc" else 2 * n)
    detail = (
        f"{attack}; lower bound {bound:.3f} on {name} ({', '.join(parts)}) at "
        f"{100 * per:.2f} % per bound (Bonferroni over {n} attacks, family-wise 95 %)"
    )
    words = f"the 95 % lower bound {bound:.3f} over {n} attack{'s' * (n > 1)} (Bonferroni)"
    return Measurement(value, detail=detail, bound=bound, bound_text=words)


def person_column(c: Mapping[str, Any]) -> str | None:
    """The person column a person-level review named (``privacy.person_level``), or None.

    A person-level review whose person attacks failed or were skipped names it too (its
    ``errors`` / ``skipped`` entry), so its row-level rules are never judged in their place.
    """
    privacy = section_of(c, "privacy")
    person = privacy.get("person_level")
    if isinstance(person, Mapping):
        return str(person.get("column"))
    for part in ("errors", "skipped"):
        if (privacy.get(part) or {}).get("person_level"):
            return "(its person column)"
    return None


def _row_level(c: Mapping[str, Any], key: str) -> Measurement:
    """The row-level worst attack; shown, not judged, in a person-level review (issue 34).

    With several rows per person the row-level attacks score a person's row against a
    reference holding the person's other rows: they recognise the person, not a leak of the
    generator (a fresh sample of other people reached AUC 0.75 on a credit panel). The person
    rules (``person_mia_*``) judge people instead; the row figure stays in the record.
    """
    found = _worst_attack(c, key)
    column = person_column(c)
    if column is None or math.isnan(found.value):
        return found
    what = "AUC" if key == "auc" else "TPR at 1 % FPR"
    return Measurement(
        found.value,
        detail=f"{found.detail.partition('; ')[0]} {what} {found.value:.3f}; row-level, shown "
        "and not judged: the review "
        f"names the person column {column!r}, so membership is judged per person "
        "(person_mia_auc, person_mia_tpr_at_fpr_1pct)",
        applicable=False,
    )


def measure_mia_auc(c: Mapping[str, Any], k: int) -> Measurement:
    """Highest AUC over the membership-inference attacks (``membership_inference[*].auc``).

    Not judged in a person-level review (:func:`_row_level`).
    """
    return _row_level(c, "auc")


def measure_mia_tpr(c: Mapping[str, Any], k: int) -> Measurement:
    """Highest TPR at 1 % FPR over the attacks (``membership_inference[*].tpr_at_fpr_1pct``).

    Not judged in a person-level review (:func:`_row_level`).
    """
    return _row_level(c, "tpr_at_fpr_1pct")


def _worst_person_attack(c: Mapping[str, Any], key: str, bound: bool = False) -> Measurement:
    """Highest ``key`` over ``privacy.person_level.attacks``; n/a without a person column.

    ``bound``: judge the lower end of ``<key>_ci`` (the two-sided 95 % Clopper-Pearson
    interval, so a one-sided 97.5 % lower bound) instead of the point value.
    """
    privacy = section_of(c, "privacy")
    person = privacy.get("person_level")
    if not isinstance(person, Mapping):
        for part in ("errors", "skipped"):
            why = (privacy.get(part) or {}).get("person_level")
            if why:
                return Measurement(math.nan, detail=f"person-level review: {why}")
        if "privacy" in (c.get("errors") or {}) or not privacy:
            return Measurement(math.nan, detail=why_missing(c, "privacy", "no privacy section"))
        return Measurement(math.nan, detail="no person column given", applicable=False)
    found = []
    for a in person.get("attacks") or []:
        if not isinstance(a, Mapping):
            continue
        point, ci = number(a.get(key)), a.get(f"{key}_ci")
        value = number(ci[0]) if bound and isinstance(ci, (list, tuple)) and ci else point
        if not math.isnan(value):
            found.append((value, point, str(a.get("attack", "?"))))
    if not found:
        return Measurement(math.nan, detail="no membership attack could be judged per person")
    value, point, attack = max(found)
    where = f"{attack}, rows grouped by {person.get('column')!r}"
    if bound:
        where += f"; lower 95 % bound of {100 * point:.1f} %"
    if key != "auc":
        return Measurement(value, detail=where)
    # judged as mia_auc is (issue 27): the highest per-attack lower bound at 1 - 0.05/K, its
    # standard error from the bootstrap that resamples people (issue 34)
    attacks = [a for a in person.get("attacks") or []
               if isinstance(a, Mapping) and not math.isnan(number(a.get("auc")))]  # fmt: skip
    bounds = [b for b in (auc_lower_bound(a, len(attacks)) for a in attacks) if not math.isnan(b)]
    if not bounds:
        return Measurement(value, detail=where)
    lower = max(max(bounds), 0.0)
    where += (
        f"; judged on the lower bound {lower:.3f} (highest per-attack bound at "
        f"{100 * (1 - (1 - FAMILY_CONFIDENCE) / len(attacks)):.2f} %, Bonferroni over "
        f"{len(attacks)} attacks, people resampled)"
    )
    return Measurement(value, detail=where, bound=lower)


def measure_person_mia_auc(c: Mapping[str, Any], k: int) -> Measurement:
    """Highest person-level AUC (``privacy.person_level.attacks[*].auc``).

    Judged on the highest per-attack lower bound corrected for the K attacks, as ``mia_auc``;
    each attack's interval resamples people (:func:`synthreview.metrics.privacy.person.
    person_membership`).
    """
    return _worst_person_attack(c, "auc")


def measure_person_mia_tpr(c: Mapping[str, Any], k: int) -> Measurement:
    """Highest lower bound of the person-level TPR at 1 % FPR over the attacks.

    ``person_level.attacks[*].tpr_at_fpr_1pct_ci[0]``: judged with its noise (as the WP29
    rules are), since a few hundred non-member people put 1 % FPR on a handful of people.
    """
    return _worst_person_attack(c, "tpr_at_fpr_1pct", bound=True)


def measure_dcr_share(c: Mapping[str, Any], k: int) -> Measurement:
    """``privacy.dcr.share_closer_to_train``, judged on its one-sided 95 % lower bound.

    The share is a mean over ``n_synthetic`` rows of "closer to training than to the
    holdout"; under the null (nothing memorised) each is a fair coin, so the bound is
    ``share - 1.645 * 0.5 / sqrt(n)`` (the largest binomial standard error). 56 CGM days put a
    fresh sample's share at 0.5 +- 0.07: without the bound it warned on 2 of 3 splits (issue
    27); a verbatim copy (share about 1) still bounds above 0.85. A report without
    ``n_synthetic`` is judged on the point, and the detail says so.
    """
    dcr = section_of(c, "privacy").get("dcr") or {}
    value = number(dcr.get("share_closer_to_train"))
    if value != value:
        return Measurement(value, detail=why_missing(c, "privacy", "no DCR"))
    n = number(dcr.get("n_synthetic"))
    if not n >= 1:
        return Measurement(value, detail="no row count in this report: judged on the point")
    bound = max(0.0, value - Z_ONE_SIDED_95 * 0.5 / math.sqrt(n))
    detail = f"one-sided 95 % lower bound {bound:.3f} over {int(n)} synthetic rows"
    return Measurement(value, detail=detail, bound=bound, bound_text=f"the {detail}")


def _ci(entry: Mapping[str, Any], metric: str) -> tuple[float, float] | None:
    ci = (entry.get("ci") or {}).get(metric) if isinstance(entry.get("ci"), Mapping) else None
    if isinstance(ci, (list, tuple)) and len(ci) == 2:
        low, high = number(ci[0]), number(ci[1])
        if not (math.isnan(low) or math.isnan(high)):
            return low, high
    return None


def measure_fidelity(metric: str) -> Callable[[Mapping[str, Any], int], Measurement]:
    """``fidelity.<metric>`` with ``fidelity.holdout_reference.<metric>``, judged with the noise.

    The shortfall ``reference - value`` is judged on its one-sided 95 % lower bound
    ``reference - value - 1.645 * sqrt(se_c**2 + se_r**2)``: ``se_c`` is the candidate's
    bootstrap interval above its point over 1.96 (``fidelity.ci``), ``se_r`` the holdout
    reference's below its point (``holdout_reference.ci``), so a shortfall needs to exceed the
    noise of both samples (issue 27: a fresh sample of 15 CGM days read IRβ 0.28 against a
    reference of 0.63, whose intervals overlap). The bound is returned as ``value`` plus that
    margin, which the shortfall form subtracts from the reference. Without the candidate's
    interval the point is judged; without the reference's, the candidate's noise alone.
    """

    def measure(c: Mapping[str, Any], k: int) -> Measurement:
        fidelity = section_of(c, "fidelity")
        value = number(fidelity.get(metric))
        ref_entry = fidelity.get("holdout_reference") or {}
        reference = number(ref_entry.get(metric))
        if value != value:
            return Measurement(value, reference, why_missing(c, "fidelity", f"no {metric}"))
        ci, ref_ci = _ci(fidelity, metric), _ci(ref_entry, metric)
        if ci is None or math.isnan(reference):
            return Measurement(value, reference, "no interval in this report: judged on the point")
        se_c = max(ci[1] - value, 0.0) / Z_TWO_SIDED_95
        se_r = 0.0 if ref_ci is None else max(reference - ref_ci[0], 0.0) / Z_TWO_SIDED_95
        margin = Z_ONE_SIDED_95 * math.hypot(se_c, se_r)
        bound = value + margin
        parts = [f"95 % CI {ci[0]:.3f}-{ci[1]:.3f}"]
        if ref_ci is not None:
            parts.append(f"reference {reference:.3f}, 95 % CI {ref_ci[0]:.3f}-{ref_ci[1]:.3f}")
        else:
            parts.append(f"reference {reference:.3f} without an interval")
        detail = (
            f"{', '.join(parts)}; shortfall {reference - value:.3f} less its noise {margin:.3f} "
            f"(one-sided 95 %) = {reference - bound:.3f}"
        )
        words = f"the one-sided 95 % bound {bound:.3f} (the point plus both samples' noise)"
        return Measurement(value, reference, detail, bound=bound, bound_text=words)

    return measure


def _utility_reference(utility: Mapping[str, Any]) -> Mapping[str, Any]:
    reference = utility.get("holdout_reference")
    return reference if isinstance(reference, Mapping) else {}


def measure_discriminator(c: Mapping[str, Any], k: int) -> Measurement:
    """``utility.discriminator_auc`` with ``utility.holdout_reference.discriminator_auc``."""
    utility = section_of(c, "utility")
    value = number(utility.get("discriminator_auc"))
    reference = number(_utility_reference(utility).get("discriminator_auc"))
    detail = "" if value == value else why_missing(c, "utility", "no discriminator AUC")
    return Measurement(value, reference, detail)


def _k_score(scores: Any, k: int) -> float:
    if not isinstance(scores, Mapping):
        return math.nan
    return number(scores.get(str(k), scores.get(k)))


def measure_k_marginal(c: Mapping[str, Any], k: int) -> Measurement:
    """``utility.k_marginal_binned.<k>`` (every column), else ``utility.k_marginal.<k>``.

    The binned score sees numeric columns too (cut into quantile bins of the real data, see
    :mod:`synthreview.metrics.utility.kmarginal`); the categorical-only score is used when the
    table has no numeric column to bin.
    """
    utility = section_of(c, "utility")
    reference = _utility_reference(utility)
    for key, what in (("k_marginal_binned", "every column"), ("k_marginal", "categorical columns")):
        value = _k_score(utility.get(key), k)
        if not math.isnan(value):
            detail = f"{k}-way marginals over {what}"
            return Measurement(value, _k_score(reference.get(key), k), detail)
    why = why_missing(c, "utility", f"no {k}-way marginal (fewer than {k} columns)")
    return Measurement(math.nan, detail=why)


def measure_tstr_trtr_ratio(c: Mapping[str, Any], k: int) -> Measurement:
    """Worst model's TSTR / TRTR of ``utility.ml_efficacy[*]`` (or the glucose forecast RMSE).

    Classification: ROC AUC. Regression: R² (the share of the target's variance explained on
    the holdout, trained on synthetic over trained on real) for models whose TRTR R² is at
    least :data:`MIN_TRTR_R2`, else the inverted RMSE ratio ``TRTR / TSTR``.

    Judged with its noise (issue 34): each model's ratio carries a 95 % paired-bootstrap
    interval over the test set's units (``ratio_ci``: people in a person-level review, else
    rows), and the rule judges the lowest *upper* end over the models (``bound``), so a
    perfect generator is not failed by a ratio read from a handful of positive cases; a row
    without an interval (an older report, the glucose forecast) is judged on its point.
    """
    ratios: dict[str, list[tuple[float, str, float, tuple[float, float], str]]] = {}
    for row in section_of(c, "utility").get("ml_efficacy") or []:
        tstr, trtr = number(row.get("tstr")), number(row.get("trtr"))
        metric = str(row.get("metric", "")).lower()
        num, den = (trtr, tstr) if metric in _LOWER_IS_BETTER_METRICS else (tstr, trtr)
        if metric == "r2" and not trtr >= MIN_TRTR_R2:
            continue
        if den > 0 and not math.isnan(num):
            ci = row.get("ratio_ci")
            low, high = (number(ci[0]), number(ci[1])) if isinstance(ci, (list, tuple)) and \
                len(ci) == 2 else (math.nan, math.nan)  # fmt: skip
            upper = high if not math.isnan(high) else num / den
            unit = str(row.get("unit") or "row")
            ratios.setdefault(metric, []).append(
                (num / den, f"{row.get('model', '?')} {metric}", upper, (low, high), unit)
            )
    forecast = (c.get("glucose") or {}).get("forecast") or {}
    tstr, trtr = number(forecast.get("tstr_rmse")), number(forecast.get("trtr_rmse"))
    if tstr > 0 and not math.isnan(trtr):
        ratios.setdefault("forecast_rmse", []).append(
            (trtr / tstr, "glucose forecast rmse", trtr / tstr, (math.nan, math.nan), "row")
        )
    # one threshold-free metric decides: F1 and accuracy swing with the class balance of a small
    # test set (F1 = 0 when a model predicts no positive); R² (explained variance) for a
    # continuous target where real data explains at least MIN_TRTR_R2 of it, else RMSE
    metric = next((m for m in _RATIO_METRICS if m in ratios), None)
    if metric is None:
        utility = section_of(c, "utility")
        skipped = (utility.get("skipped") or {}).get("ml_efficacy")
        failed = (utility.get("errors") or {}).get("ml_efficacy")
        what = (
            f"ML efficacy failed: {failed}"
            if failed
            else f"no ML-efficacy result: {skipped}"
            if skipped
            else "no ML-efficacy result with a usable score"
        )
        section = "glucose" if "glucose" in c or "glucose" in (c.get("errors") or {}) else "utility"
        return Measurement(math.nan, detail=why_missing(c, section, what))
    found = ratios[metric]
    value, what = min((r[0], r[1]) for r in found)
    if all(math.isnan(r[3][1]) for r in found):
        return Measurement(value, detail=what)
    upper, judged, _, (low, high), unit = min((r[2], r[1], r[0], r[3], r[4]) for r in found)
    units = "people" if unit == "person" else "rows"
    detail = (
        f"{what}; judged on the upper end {upper:.3f} of the 95 % interval of {judged} "
        f"({low:.3f}-{high:.3f}, test {units} resampled)"
    )
    return Measurement(value, detail=detail, bound=upper)


def measure_consensus_shift(c: Mapping[str, Any], k: int) -> Measurement:
    """``glucose.consensus_shift``: the worst consensus metric's |d|, judged on its lower bound.

    ``value`` is the largest |d| over the consensus metrics (mean glucose, time in ranges, CV,
    GRI, ...; :mod:`synthreview.metrics.glucose.shift`), ``reference`` the holdout's
    (``holdout_reference``), ``bound`` the largest per-metric lower bound ``|d| - z se`` at
    ``1 - 0.05 / M`` over the M metrics compared (Bonferroni, as the worst-of-K attacks). The
    detail names the metric with the largest |d| first, then the bound and where it lies.
    """
    glucose = c.get("glucose")
    shift = glucose.get("consensus_shift") if isinstance(glucose, Mapping) else None
    shift = shift if isinstance(shift, Mapping) else {}
    value = number(shift.get("value"))
    reference = number(shift.get("holdout_reference"))
    if math.isnan(value):
        what = "no consensus shift (needs >= 2 traces per side with varying consensus metrics)"
        return Measurement(value, reference, why_missing(c, "glucose", what))
    metric, bound = str(shift.get("metric") or "?"), number(shift.get("lower"))
    n = number(shift.get("n_metrics"))
    if math.isnan(bound) or not n >= 1:
        return Measurement(
            value, reference, f"{metric}; no bound in this report: judged on the point"
        )
    confidence = number(shift.get("confidence"))
    confidence = FAMILY_CONFIDENCE if math.isnan(confidence) else confidence
    on = str(shift.get("lower_metric") or metric)
    d = number((shift.get("d") or {}).get(on))
    se = number((shift.get("se") or {}).get(on))
    detail = (
        f"{metric}; lower bound {bound:.3f} on {on} (d {d:+.3f}, se {se:.3f}) at "
        f"{100 * (1 - (1 - confidence) / n):.2f} % per bound (Bonferroni over {int(n)} "
        f"consensus metrics, family-wise {100 * confidence:.0f} %)"
    )
    words = f"the 95 % lower bound {bound:.2f} SD over {int(n)} consensus metrics (Bonferroni)"
    return Measurement(value, reference, detail, bound=bound, bound_text=words)


WP29Bound = Literal["point", "lower", "corrected"]


def _interval(entry: Mapping[str, Any]) -> str:
    ci = entry.get("ci")
    if isinstance(ci, (list, tuple)) and len(ci) == 2:
        low, high = number(ci[0]), number(ci[1])
        if not (math.isnan(low) or math.isnan(high)):
            return f", 95 % CI {low:.3f}-{high:.3f}"
    return ""


def measure_wp29(
    part: str, bound: WP29Bound = "point"
) -> Callable[[Mapping[str, Any], int], Measurement]:
    """``privacy.wp29.<part>``: its ``risk``, or a lower confidence bound of it.

    ``bound="lower"`` judges ``lower``, the one-sided 95 % lower bound of the risk, so an
    interval that includes 0 never warns (singling out with several columns: a fresh sample's
    0.06-0.09 always came with such an interval). ``bound="corrected"`` judges
    ``inference.corrected.lower``: the largest per-column lower bound at ``1 - 0.05 / K`` over
    the ``K`` secret columns (Bonferroni), since the maximum of ~20 noisy columns sharing the
    same targets is far above each column's risk (:class:`~synthreview.metrics.privacy.wp29.
    InferenceBound`). A report filed before the bounds existed is judged on its point risk,
    and the detail says so.
    """

    def measure(c: Mapping[str, Any], k: int) -> Measurement:
        wp29 = section_of(c, "privacy").get("wp29") or {}
        entry = wp29.get(part) if isinstance(wp29, Mapping) else None
        if not isinstance(entry, Mapping) or math.isnan(number(entry.get("risk"))):
            what = f"the privacy section reports no wp29.{part} risk"
            return Measurement(math.nan, detail=why_missing(c, "privacy", what))
        risk = number(entry.get("risk"))
        point = f"risk {risk:.3f}{_interval(entry)}"
        corrected = entry.get("corrected") if bound == "corrected" else None
        if isinstance(corrected, Mapping) and not math.isnan(number(corrected.get("lower"))):
            column, n = corrected.get("column"), corrected.get("n_columns")
            worst = entry.get("column")
            per = (entry.get("per_column") or {}).get(column)
            parts = [
                f"lower bound on {column!r} at {100 * number(corrected.get('confidence')):.2f} % "
                f"per column (Bonferroni over {n} columns, family-wise 95 %)"
            ]
            if isinstance(per, Mapping):
                parts.append(f"risk {number(per.get('risk')):.3f}{_interval(per)} on {column!r}")
            if worst != column:
                parts.append(f"worst point {point} on {worst!r}")
            return Measurement(number(corrected.get("lower")), detail="; ".join(parts))
        if bound != "point" and not math.isnan(number(entry.get("lower"))):
            return Measurement(
                number(entry.get("lower")), detail=f"one-sided 95 % lower bound; {point}"
            )
        note = "" if bound == "point" else "; no interval in this report: judged on the point"
        return Measurement(risk, detail=f"{point}{note}")

    return measure


def _audit(c: Mapping[str, Any], part: str) -> Mapping[str, Any] | None:
    audit = c.get("audit")
    entry = audit.get(part) if isinstance(audit, Mapping) else None
    return entry if isinstance(entry, Mapping) else None


def measure_audit_copies(c: Mapping[str, Any], k: int) -> Measurement:
    """``audit.copies.share`` judged on ``lower`` (its 95 % lower bound) vs the holdout's share."""
    copies = _audit(c, "copies")
    if copies is None:
        return Measurement(math.nan, detail="the audit did not report copy evidence")
    share, lower = number(copies.get("share")), number(copies.get("lower"))
    detail = f"{copies.get('flagged')} of {copies.get('n_rows')} rows flagged ({share:.1%})"
    words = f"the one-sided 95 % lower bound {lower:.1%} over {copies.get('n_rows')} rows"
    return Measurement(
        share, reference=number(copies.get("reference")), detail=detail, bound=lower,
        bound_text=words,
    )  # fmt: skip


def measure_real_records(c: Mapping[str, Any], k: int) -> Measurement:
    """``audit.real_records.share`` (rows equal to a real record) against the holdout's share.

    The candidate's share is judged on its one-sided 95 % Clopper-Pearson lower bound, and the
    reference on the one-sided 95 % upper bound of the holdout's coincidental share
    (``share + 1.645 * sqrt(share * (1 - share) / n_reference)``, normal approximation), so
    the noise of both sides is in the comparison: a table whose rows repeat by coincidence
    (a few categorical columns) does not warn on sampling noise, while a table without
    coincidental repeats (reference 0) keeps the candidate's bound alone. A report filed
    without ``n_reference`` is judged against the holdout's share itself.
    """
    found = _audit(c, "real_records")
    if found is None:
        return Measurement(
            math.nan, detail="the audit did not report real-record evidence (needs privacy)"
        )
    matched, share = found.get("matched"), number(found.get("share"))
    parts = [
        f"{found.get(key)} {what}"
        for key, what in (("in_training", "in training"), ("in_holdout", "in the holdout"))
        if found.get(key)
    ]
    where = f": {', '.join(parts)}" if parts else ""
    lower = number(found.get("lower"))
    detail = (
        f"{matched} rows ({share:.1%}) are records of the real/holdout data{where} "
        f"(one-sided 95 % lower bound {lower:.2%})"
    )
    reference, n_reference = number(found.get("reference")), number(found.get("n_reference"))
    if not math.isnan(reference) and n_reference > 0:
        upper = reference + Z_ONE_SIDED_95 * math.sqrt(reference * (1 - reference) / n_reference)
        detail += f"; a fresh real sample: {reference:.2%} (upper 95 % bound {upper:.2%})"
        reference = min(upper, 1.0)
    words = f"the one-sided 95 % lower bound {lower:.1%} over {found.get('n_rows')} rows"
    return Measurement(share, reference=reference, detail=detail, bound=lower, bound_text=words)


def measure_reattack(c: Mapping[str, Any], k: int) -> Measurement:
    """Number of attacks in ``audit.reattack.attacks`` that got worse after curation."""
    reattack = _audit(c, "reattack")
    if reattack is None:
        return Measurement(
            math.nan, detail="applies to a curated set (after curation)", applicable=False
        )
    attacks = [a for a in reattack.get("attacks") or [] if isinstance(a, Mapping)]
    if not attacks:
        note = str(reattack.get("note") or "")
        return Measurement(math.nan, detail=note or "the curated set was not attacked again")
    worse = [str(a.get("attack", "?")) for a in attacks if a.get("worse") is True]
    return Measurement(float(len(worse)), detail=", ".join(worse))


def measure_shadow_tpr(c: Mapping[str, Any], k: int) -> Measurement:
    """``privacy.shadow``: the lower end of the 95 % interval of the pooled shadow TPR at 1 % FPR.

    Judged on the Clopper-Pearson lower bound (``tpr.ci[0]``), so the few shadows per target
    do not warn on noise. A partial attack (its time limit stopped it) is reported, never
    judged: the value is then missing with the reason. Without a generator named the rule does
    not apply (``n/a`` whatever the policy's ``missing`` says).
    """
    shadow = section_of(c, "privacy").get("shadow")
    if not isinstance(shadow, Mapping):
        skipped = (section_of(c, "privacy").get("skipped") or {}).get("shadow")
        failed = (section_of(c, "privacy").get("errors") or {}).get("shadow")
        if failed:
            return Measurement(math.nan, detail=f"the shadow attack failed: {failed}")
        if skipped:  # no generator named: the rule does not apply (as person rules without one)
            return Measurement(math.nan, detail=str(skipped), applicable=False)
        return Measurement(math.nan, detail=why_missing(c, "privacy", "no shadow attack ran"))
    tpr = shadow.get("tpr") if isinstance(shadow.get("tpr"), Mapping) else {}
    ci = tpr.get("ci") if isinstance(tpr.get("ci"), (list, tuple)) else [None, None]
    point, lower = number(tpr.get("value")), number(ci[0] if len(ci) == 2 else None)
    targets = len(shadow.get("targets") or [])
    detail = (
        f"TPR {point:.3f} ({tpr.get('hits')} of {tpr.get('n')} shadows with their target, "
        f"95 % CI {lower:.3f}-{number(ci[1] if len(ci) == 2 else None):.3f}) over {targets} "
        f"targets of generator {shadow.get('generator')}"
    )
    if shadow.get("complete") is not True:
        note = shadow.get("note") or "the attack did not finish"
        return Measurement(math.nan, detail=f"partial, not judged ({note}); {detail}")
    return Measurement(lower, detail=detail)


def _verbatim_share(claim: Mapping[str, Any]) -> str:
    """How the family's α was split when the verbatim-copy event was one of the tested points
    (``metrics.privacy.dp_claim``: half for the event, half shared by the attacks' points)."""
    verbatim = claim.get("verbatim")
    if not isinstance(verbatim, Mapping):
        return ""
    unit = "people" if verbatim.get("unit") == "person" else "records"
    return (
        f": the attacks' thresholds share half of the 5 %, the other half is the event "
        f"'a training unit appears verbatim' ({verbatim.get('copied_members')} of "
        f"{verbatim.get('n_members')} training {unit} vs {verbatim.get('copied_nonmembers')} "
        f"of {verbatim.get('n_nonmembers')} holdout {unit})"
    )


def measure_dp_claim(c: Mapping[str, Any], k: int) -> Measurement:
    """``privacy.dp_claim.excess``: ε certified beyond the claim; n/a without a claim."""
    privacy = section_of(c, "privacy")
    claim = privacy.get("dp_claim")
    if not isinstance(claim, Mapping):
        failed = (privacy.get("errors") or {}).get("dp_claim")
        if failed:
            return Measurement(math.nan, detail=f"the claim test failed: {failed}")
        return Measurement(
            math.nan, detail="no claimed ε to test (--claimed-epsilon)", applicable=False
        )
    eps, delta = number(claim.get("claimed_epsilon")), number(claim.get("claimed_delta"))
    per = " per person (all of a person's rows one unit)" if claim.get("unit") == "person" else ""
    parts = [
        f"claimed ε = {eps:g}, δ = {delta:g}{per}",
        f"the attacks certify ε ≥ {number(claim.get('certified_epsilon')):.2f} "
        f"({claim.get('attack')}: TPR lower bound {number(claim.get('tpr_lower')):.3f} vs FPR "
        f"upper bound {number(claim.get('fpr_upper')):.3f}, Clopper-Pearson at 95 % "
        f"family-wise over {claim.get('n_tests')} operating points{_verbatim_share(claim)})",
    ]
    against = claim.get("contradicting") or []
    if against:
        parts.append(f"contradicted by {', '.join(str(a) for a in against)}")
    phantom = number(claim.get("phantom_share"))
    if not math.isnan(phantom):
        parts.append(
            f"phantom share {_pct(phantom)}: of the {claim.get('disclosures')} members flagged "
            "there, the share that non-members match at the same rate (Amin et al.)"
        )
    return Measurement(number(claim.get("excess")), detail="; ".join(parts))


def _not_named(c: Mapping[str, Any], section: str, part: str, what: str) -> Measurement:
    """Why ``section.<part>`` is absent: its error, n/a when the reviewer named nothing."""
    body = section_of(c, section)
    failed = (body.get("errors") or {}).get(part)
    if failed:
        return Measurement(math.nan, detail=f"{what} failed: {failed}")
    skipped = (body.get("skipped") or {}).get(part)
    if skipped:
        return Measurement(math.nan, detail=str(skipped), applicable=False)
    if not body or section in (c.get("errors") or {}):
        return Measurement(math.nan, detail=why_missing(c, section, f"no {what}"))
    # a report from before the check, or a section that never had the option: nothing named
    return Measurement(math.nan, detail=f"no {what} in this report", applicable=False)


def measure_qi_replay(c: Mapping[str, Any], k: int) -> Measurement:
    """``privacy.quasi_identifiers.balance`` judged on ``balance_bound`` (permutation test).

    The balance (:mod:`synthreview.metrics.privacy.quasi`) is the share of synthetic rows whose
    quasi-identifier combination is unique in training and absent from the holdout, minus the
    share unique in the holdout and absent from training (tables size-matched); the detail
    also gives the plain replay shares of candidate and holdout. Not applicable when the review
    names no quasi-identifiers.
    """
    qi = section_of(c, "privacy").get("quasi_identifiers")
    if not isinstance(qi, Mapping):
        return _not_named(c, "privacy", "quasi_identifiers", "the quasi-identifier check")
    value = number(qi.get("balance"))
    columns = ", ".join(str(q) for q in qi.get("quasi_identifiers") or [])
    share, n = number(qi.get("replay_share")), qi.get("n_synthetic")
    detail = (
        f"{qi.get('replayed')} of {n} synthetic rows ({_pct(share)}) carry the "
        f"quasi-identifiers ({columns}) of exactly one training person"
    )
    if math.isnan(value):
        return Measurement(value, detail=detail + "; no holdout to compare with")
    ref = number(qi.get("holdout_replay_share"))
    bound = number(qi.get("balance_bound"))
    detail += f" vs {_pct(ref)} of a fresh real sample; k-anonymity {qi.get('k_anonymity')}"
    if math.isnan(bound):
        return Measurement(value, detail=detail + "; no permutation bound: judged on the point")
    detail += (
        f"; balance {value:+.3f} (unique in training and absent from the holdout minus the "
        f"reverse, {qi.get('balance_rows')} rows each side) less its 97.5 % permutation "
        f"quantile = {bound:+.3f} (p = {number(qi.get('balance_p_value')):.3f})"
    )
    words = f"the balance less its 97.5 % permutation quantile, {bound:+.3f}"
    return Measurement(value, detail=detail, bound=bound, bound_text=words)


def measure_label_leak(c: Mapping[str, Any], k: int) -> Measurement:
    """``utility.answer_key``: the highest leak over the tested columns, naming its rule.

    Not applicable when neither a target nor a label-leak column was named.
    """
    keys = section_of(c, "utility").get("answer_key")
    if not isinstance(keys, Mapping):
        return _not_named(c, "utility", "answer_key", "the answer-key check")
    found = [
        key for key in keys.get("keys") or []
        if isinstance(key, Mapping) and not math.isnan(number(key.get("leak")))
    ]  # fmt: skip
    if not found:
        skipped = keys.get("skipped") or {}
        if not keys.get("keys") and isinstance(skipped, Mapping) and skipped:
            why = "; ".join(f"{col}: {reason}" for col, reason in skipped.items())
            return Measurement(math.nan, detail=f"no column could be tested ({why})",
                               applicable=False)  # fmt: skip
        return Measurement(math.nan, detail="no tested column has a holdout to compare with")
    worst = max(found, key=lambda key: number(key.get("leak")))
    detail = (
        f"{worst.get('column')}: a depth-{worst.get('depth')} tree errs on "
        f"{_pct(number(worst.get('error')))} of candidate rows vs "
        f"{_pct(number(worst.get('holdout_error')))} of a fresh real sample; rule found: "
        f"{worst.get('rule')}"
    )
    return Measurement(number(worst.get("leak")), detail=detail)


def measure_constraints(c: Mapping[str, Any], k: int) -> Measurement:
    """``utility.constraints``: the worst constraint's violation share beyond training's.

    Each constraint's candidate share is bounded below by a one-sided Clopper-Pearson bound at
    ``1 - 0.05 / K`` over the K constraints (Bonferroni), less the training table's share;
    the rule judges the highest such bound. Not applicable without declared constraints.
    """
    declared = section_of(c, "utility").get("constraints")
    if not isinstance(declared, Mapping):
        return _not_named(c, "utility", "constraints", "the constraints check")
    checks = [
        x for x in declared.get("checks") or []
        if isinstance(x, Mapping) and number(x.get("rows")) >= 1
    ]  # fmt: skip
    if not checks:
        return Measurement(math.nan, detail="no candidate row is judged by any constraint")
    alpha = (1 - FAMILY_CONFIDENCE) / len(checks)
    found = []
    for x in checks:
        real = number(x.get("real_rate"))
        real = 0.0 if math.isnan(real) else real
        bad, rows = int(number(x.get("violations"))), int(number(x.get("rows")))
        lower, _ = clopper_pearson(bad, rows, alpha)
        found.append((float(lower) - real, number(x.get("rate")) - real, x, real))
    bound, point, worst, real = max(found, key=lambda f: (f[0], f[1]))
    broken = sum(1 for _, p, _, _ in found if p > 0)
    detail = (
        f"{worst.get('name')} ({worst.get('description')}): {worst.get('violations')} of "
        f"{worst.get('rows')} candidate rows break it ({_pct(number(worst.get('rate')))}) vs "
        f"{_pct(real)} of training rows; {broken} of {len(found)} constraints broken beyond "
        f"training; lower bound {bound:.3f} (Clopper-Pearson, Bonferroni over {len(found)})"
    )
    words = f"the one-sided 95 % lower bound {bound:.3f} over {len(found)} constraints"
    return Measurement(point, detail=detail, bound=bound, bound_text=words)


def measure_group_mia_tpr(c: Mapping[str, Any], k: int) -> Measurement:
    """``privacy.groups.results``: the worst group's TPR at 1 % FPR over every attack.

    Each (group, attack) TPR is bounded below as the population rule bounds an attack
    (:func:`tpr_lower_bound`: Clopper-Pearson on the group's members, less the 1 % FPR's
    upper bound on its non-members beyond 1 %), Bonferroni over all groups x attacks; the
    rule judges the highest bound. Not applicable without grouping columns.
    """
    groups = section_of(c, "privacy").get("groups")
    if not isinstance(groups, Mapping):
        return _not_named(c, "privacy", "groups", "the per-group membership check")
    results = [
        r for r in groups.get("results") or []
        if isinstance(r, Mapping) and not math.isnan(number(r.get("tpr_at_fpr_1pct")))
    ]  # fmt: skip
    if not results:
        return Measurement(math.nan, detail="no group had members and non-members to attack")
    n = len(results)
    bounds = [(max(tpr_lower_bound(r, n), 0.0), r) for r in results]
    bound, worst = max(bounds, key=lambda pair: (pair[0], number(pair[1].get("tpr_at_fpr_1pct"))))
    value = max(number(r.get("tpr_at_fpr_1pct")) for r in results)
    pooled = {col: g for col, g in (groups.get("pooled") or {}).items() if g}
    # with --person the groups count people (one score per person), never a person's rows
    units = " (people)" if groups.get("unit") == "person" else " (rows)"
    detail = (
        f"{worst.get('column')} = {worst.get('group')}, {worst.get('attack')}: TPR "
        f"{number(worst.get('tpr_at_fpr_1pct')):.3f} on {worst.get('n_members')} members and "
        f"{worst.get('n_nonmembers')} non-members{units}; lower bound {bound:.3f} "
        f"(Clopper-Pearson, Bonferroni over {n} group x attack tests)"
    )
    if pooled:
        detail += "; pooled into 'other' (below {} rows a side): {}".format(
            groups.get("min_rows"),
            "; ".join(f"{col}: {', '.join(map(str, g))}" for col, g in pooled.items()),
        )
    words = f"the 95 % lower bound {bound:.3f} over {n} group x attack tests (Bonferroni)"
    return Measurement(value, detail=detail, bound=bound, bound_text=words)


# --- sentences ----------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %" if abs(x) >= 0.1 or x == 0 else f"{100 * x:.1f} %"


def _ref(m: Measurement, fmt: str, what: str = "a fresh real sample") -> str:
    return "" if math.isnan(m.reference) else f" vs {format(m.reference, fmt)} for {what}"


def _judged_on(m: Measurement, unit: Callable[[float], str]) -> str:
    """``"; judged on the lower bound ..."`` when the rule judges a bound, else the note."""
    _, _, rest = m.detail.partition("; ")
    if math.isnan(m.bound):
        return f"; {rest}" if rest else ""
    rest = rest.replace(f"lower bound {m.bound:.3f}", f"lower bound {unit(m.bound)}", 1)
    return f"; judged on the {rest}"


def say_mia_auc(m: Measurement) -> str:
    attack = m.detail.partition("; ")[0]
    attack = ATTACK_LABELS.get(attack, attack)  # the room reads words; note keeps the id
    return (
        f"the best membership attack ({attack}) reaches AUC {m.value:.2f} (0.5 = guessing)"
        + _judged_on(m, lambda x: f"{x:.3f}")
    )


def say_mia_tpr(m: Measurement) -> str:
    attack = m.detail.partition("; ")[0]
    attack = ATTACK_LABELS.get(attack, attack)  # the room reads words; note keeps the id
    return (
        f"an attacker ({attack}) identifies {_pct(m.value)} of training rows at 1 % false "
        "alarms (chance: 1 %)" + _judged_on(m, lambda x: f"{x:.3f} ({x / 0.01:.1f}x chance)")
    )


def say_person_mia_auc(m: Measurement) -> str:
    return (
        f"judging each person's rows together, the best membership attack ({m.detail}) reaches "
        f"AUC {m.value:.2f} (0.5 = guessing)"
    )


def say_person_mia_tpr(m: Measurement) -> str:
    return (
        f"an attacker ({m.detail}) identifies at least {_pct(m.value)} of training people at "
        "1 % false alarms among unseen people (chance: 1 %)"
    )


def say_dcr(m: Measurement) -> str:
    bound = "" if math.isnan(m.bound) else f"; judged on the {m.detail}"
    return (
        f"{_pct(m.value)} of synthetic rows are closer to a training row than to any holdout "
        f"row (50 % expected){bound}"
    )


def say_fidelity(label: str, what: str) -> Callable[[Measurement], str]:
    def say(m: Measurement) -> str:
        noise = f" ({m.detail})" if m.detail else ""  # the noise, or why the point is judged
        return f"{what}: {label} {m.value:.2f}{_ref(m, '.2f')}{noise}"

    return say


def say_discriminator(m: Measurement) -> str:
    if m.value < 0.5 - SUSPICIOUS_AUC_MARGIN:
        return (
            f"discriminator AUC {m.value:.2f} is far below 0.5: suspiciously indistinguishable "
            "(copies of real rows?)"
        )
    return f"a classifier tells synthetic from real rows with AUC {m.value:.2f}{_ref(m, '.2f')}"


def say_k_marginal(m: Measurement) -> str:
    return (
        f"joint distributions: {m.detail} score {m.value:.0f}"
        f"{_ref(m, '.0f', 'real data')} (of 1000)"
    )


def say_tstr(m: Measurement) -> str:
    return (
        f"a model trained on synthetic data reaches {_pct(m.value)} of what real data gives "
        f"(worst: {m.detail})"
    )


def _consensus_label(metric: str) -> str:
    label = CONSENSUS_METRICS.get(metric, (metric, "", ""))[0]
    return label[:1].lower() + label[1:] if label[1:2].islower() else label


def say_consensus_shift(m: Measurement) -> str:
    metric = m.detail.partition("; ")[0]
    judged = _judged_on(m, lambda x: f"{x:.2f} SD")
    on = judged.partition(" SD on ")[2].partition(" (")[0]
    if on:  # the room reads words; the note keeps the metric's id
        judged = judged.replace(f" SD on {on} (", f" SD on {_consensus_label(on)} (", 1)
    return (
        f"{_consensus_label(metric)} differs from the training traces by {m.value:.1f} SD "
        f"(0 = the same){_ref(m, '.1f')}{judged}"
    )


def say_wp29(what: str) -> Callable[[Measurement], str]:
    def say(m: Measurement) -> str:
        return (
            f"{what} succeeds for at least {_pct(m.value)} more people than against "
            f"non-members ({m.detail})"
            if m.detail.startswith(("lower", "one-sided"))
            else f"{what} succeeds for {_pct(m.value)} more people than against non-members "
            f"({m.detail})"
        )

    return say


def say_dp_claim(m: Measurement) -> str:
    verdict = "the evidence contradicts the claim" if m.value > 0 else "consistent with the claim"
    return f"{verdict}: {m.detail}"


def say_qi_replay(m: Measurement) -> str:
    return f"{m.detail.partition('; balance')[0]} (balance {m.value:+.3f}, 0 = a fresh sample)"


def say_label_leak(m: Measurement) -> str:
    exact = "an exact rule" if m.value >= 0.999 else "close to a rule"
    if m.value < 0.5:
        exact = "no sharper rule than in real data"
    return f"answer key: {exact} ({m.detail})"


def say_constraints(m: Measurement) -> str:
    return f"declared constraints: {m.detail}"


def say_group_mia_tpr(m: Measurement) -> str:
    return (
        f"in the most exposed group an attacker identifies {_pct(m.value)} of its training members "
        f"at 1 % false alarms (chance: 1 %): {m.detail}"
    )


def say_audit_copies(m: Measurement) -> str:
    if math.isnan(m.reference):
        return f"copies of training rows: {m.detail}; no holdout to compare with"
    return f"copies of training rows: {m.detail} vs {m.reference:.1%} of a fresh real sample"


def say_real_records(m: Measurement) -> str:
    if math.isnan(m.reference):
        return f"{m.detail}; no holdout to compare with"
    if "fresh real sample:" in m.detail:
        return f"{m.detail} by coincidence"
    return f"{m.detail} vs {m.reference:.1%} of a fresh real sample by coincidence"


def say_reattack(m: Measurement) -> str:
    if m.value > 0:
        return (
            "after curation these attacks got worse beyond their before-interval (widened for "
            f"the number of attacks compared, Bonferroni): {m.detail}"
        )
    return "no attack got worse after curation"


def say_shadow_tpr(m: Measurement) -> str:
    return (
        f"trained with and without a target record, the generator lets a shadow-model attacker "
        f"spot at least {_pct(m.value)} of the targets at 1 % false alarms (chance: 1 %; "
        f"{m.detail})"
    )


@dataclass(frozen=True)
class RuleSpec:
    """How one rule measures and explains its value.

    Attributes
    ----------
    name : str
        Rule name in the policy file (``[rules.NAME]``).
    metric : str
        Registry name of the metric judged (direction, range and ideal come from there).
    form : {"value", "shortfall", "times_chance"}
        How the judged quantity is derived from the metric (module docstring).
    description : str
        What the judged quantity is, for tables and the policy file.
    measure : callable
        ``measure(candidate_dict, k) -> Measurement``.
    say : callable
        ``say(measurement) -> str``: one plain-language sentence about a measured value.
    stage : {"review", "audit"}
        ``"audit"``: the rule reads the release audit's evidence (module docstring).
    """

    name: str
    metric: str
    form: Form
    description: str
    measure: Callable[[Mapping[str, Any], int], Measurement]
    say: Callable[[Measurement], str]
    stage: Stage = "review"

    def __post_init__(self) -> None:
        info = metric_info(self.metric)  # an unregistered metric fails at import
        if self.form not in FORMS:
            raise ValueError(f"form must be one of {FORMS}; got {self.form!r} instead")
        if self.stage not in STAGES:
            raise ValueError(f"stage must be one of {STAGES}; got {self.stage!r} instead")
        if self.form == "times_chance" and not (info.direction == "lower" and info.ideal > 0):
            raise ValueError(f"{self.name}: times_chance needs a lower metric with chance > 0")

    def judged(self, m: Measurement) -> float:
        """The quantity the thresholds apply to (NaN when unmeasured).

        Lower is better unless :attr:`higher_is_better`.
        """
        info = metric_info(self.metric)
        if math.isnan(m.value):
            return math.nan
        if not math.isnan(m.bound):
            m = replace(m, value=m.bound)
        if self.form == "times_chance":
            return m.value / info.ideal
        if self.form == "shortfall":
            reference = info.ideal if math.isnan(m.reference) else m.reference
            if info.direction == "closest":
                return abs(m.value - info.ideal) - abs(reference - info.ideal)
            return reference - m.value if info.direction == "higher" else m.value - reference
        if info.direction == "closest":
            return abs(m.value - info.ideal)
        return m.value

    @property
    def higher_is_better(self) -> bool:
        """Whether the *threshold* numbers in the policy are higher-is-better.

        Only a plain ``value`` rule on a higher-is-better metric (the TSTR/TRTR ratio) keeps the
        metric's own orientation in the policy file; every other form is a "how far from good"
        quantity where lower is better.
        """
        return self.form == "value" and metric_info(self.metric).direction == "higher"


def _spec(*args: Any) -> tuple[str, RuleSpec]:
    spec = RuleSpec(*args)
    return spec.name, spec


#: every rule a policy may configure, in report order
SPECS: dict[str, RuleSpec] = dict(
    [
        _spec(
            "mia_auc",
            "mia_auc",
            "value",
            "membership-inference ROC AUC (worst attack)",
            measure_mia_auc,
            say_mia_auc,
        ),
        _spec(
            "mia_tpr_at_fpr_1pct",
            "mia_tpr_at_fpr_1pct",
            "times_chance",
            "worst attack's true-positive rate at 1 % false positives, in multiples of chance",
            measure_mia_tpr,
            say_mia_tpr,
        ),
        _spec(
            "person_mia_auc",
            "person_mia_auc",
            "value",
            "person-level membership-inference ROC AUC (worst attack; needs --person)",
            measure_person_mia_auc,
            say_person_mia_auc,
        ),
        _spec(
            "person_mia_tpr_at_fpr_1pct",
            "person_mia_tpr_at_fpr_1pct",
            "times_chance",
            "worst attack's person-level true-positive rate at 1 % false positives (lower 95 % "
            "Clopper-Pearson bound), in multiples of chance (needs --person)",
            measure_person_mia_tpr,
            say_person_mia_tpr,
        ),
        _spec(
            "dcr_share",
            "dcr_share",
            "value",
            "share of synthetic rows closer to training than holdout",
            measure_dcr_share,
            say_dcr,
        ),
        _spec(
            "authenticity_gap",
            "authenticity",
            "shortfall",
            "authenticity below the holdout reference",
            measure_fidelity("authenticity"),
            say_fidelity("authenticity", "rows not copied from training"),
        ),
        _spec(
            "ip_alpha",
            "ip_alpha",
            "shortfall",
            "IPα shortfall vs the holdout reference",
            measure_fidelity("ip_alpha"),
            say_fidelity("IPα", "realism"),
        ),
        _spec(
            "ir_beta",
            "ir_beta",
            "shortfall",
            "IRβ shortfall vs the holdout reference",
            measure_fidelity("ir_beta"),
            say_fidelity("IRβ", "variety covered"),
        ),
        _spec(
            "consensus_shift",
            "consensus_shift_error",
            "value",
            "largest standardized shift of a consensus metric (mean glucose, time in ranges, "
            "CV, GRI, ...) from the training traces, in SD (Bonferroni lower bound over "
            "the metrics)",
            measure_consensus_shift,
            say_consensus_shift,
        ),
        _spec(
            "discriminator_auc",
            "discriminator_auc",
            "value",
            "|discriminator ROC AUC - 0.5|",
            measure_discriminator,
            say_discriminator,
        ),
        _spec(
            "k_marginal",
            "k_marginal_binned",
            "shortfall",
            "k-marginal score below the holdout reference (points of 1000)",
            measure_k_marginal,
            say_k_marginal,
        ),
        _spec(
            "tstr_trtr_ratio",
            "tstr_trtr_ratio",
            "value",
            "TSTR / TRTR (worst model)",
            measure_tstr_trtr_ratio,
            say_tstr,
        ),
        *(
            _spec(
                f"wp29_{part}",
                f"wp29_{part}",
                "value",
                f"WP29 {part.replace('_', ' ')} risk"
                + {
                    "point": "",
                    "lower": " (one-sided 95 % lower bound)",
                    "corrected": " (worst column's lower bound, Bonferroni over the columns)",
                }[bound],
                measure_wp29(part, bound),
                say_wp29(text),
            )
            for part, bound, text in (
                ("singling_out_univariate", "point", "singling out one person with one column"),
                (
                    "singling_out_multivariate",
                    "lower",
                    "singling out one person with several columns",
                ),
                ("linkability", "point", "linking a person's records"),
                ("inference", "corrected", "inferring a secret column"),
            )
        ),
        _spec(
            "shadow_tpr_at_fpr_1pct",
            "shadow_tpr_at_fpr_1pct",
            "times_chance",
            "shadow-model attack on the generator: lower 95 % bound of the TPR at 1 % FPR, in "
            "multiples of chance",
            measure_shadow_tpr,
            say_shadow_tpr,
        ),
        _spec(
            "dp_claim",
            "dp_claim_excess",
            "value",
            "ε certified by the attacks beyond the claimed ε (Clopper-Pearson, Bonferroni over "
            "attacks x operating points)",
            measure_dp_claim,
            say_dp_claim,
        ),
        _spec(
            "group_mia_tpr_at_fpr_1pct",
            "group_mia_tpr_at_fpr_1pct",
            "times_chance",
            "worst group's true-positive rate at 1 % false positives over every attack (lower "
            "bound, Bonferroni over groups x attacks), in multiples of chance (needs --groups)",
            measure_group_mia_tpr,
            say_group_mia_tpr,
        ),
        _spec(
            "qi_replay",
            "qi_replay_excess",
            "value",
            "share of synthetic rows singling out one training person on the quasi-identifiers "
            "beyond what they single out in a fresh sample (lower 95 % bound; needs "
            "--quasi-identifiers)",
            measure_qi_replay,
            say_qi_replay,
        ),
        _spec(
            "label_leak",
            "label_leak",
            "value",
            "1 - shallow-tree error on the candidate / on a fresh real sample, worst of the target "
            "and the named columns (1 = an exact rule real data do not obey)",
            measure_label_leak,
            say_label_leak,
        ),
        _spec(
            "constraint_violations",
            "constraint_violation_excess",
            "value",
            "worst declared constraint's violation share beyond training's (one-sided 95 % "
            "Clopper-Pearson lower bound, Bonferroni over the constraints; needs --constraints)",
            measure_constraints,
            say_constraints,
        ),
        _spec(
            "audit_copies",
            "audit_copy_share",
            "shortfall",
            "rows flagged as copies beyond a fresh real sample (95 % lower bound)",
            measure_audit_copies,
            say_audit_copies,
            "audit",
        ),
        _spec(
            "real_records",
            "real_record_share",
            "shortfall",
            "rows equal to a training or holdout record beyond a fresh real sample "
            "(95 % lower bound)",
            measure_real_records,
            say_real_records,
            "audit",
        ),
        _spec(
            "reattack",
            "reattack_worse",
            "value",
            "attacks worse after curation than their before-curation interval "
            "(Bonferroni over the attacks compared)",
            measure_reattack,
            say_reattack,
            "audit",
        ),
    ]
)
