"""Utility of a synthetic table: the Urban Institute battery plus ML efficacy, with references.

:func:`evaluate_utility` is the utility section's entry point (``report.evaluate`` calls it once
per candidate). Every metric is computed for the candidate against the real (training) table
and, as its **holdout reference**, for the holdout table against the same training table, so a
reviewer sees how much of a gap sampling noise alone would cause.

Sources (``papers/``):

- 001, Urban Institute appendix "Metrics Descriptions", *General utility*: proportions, means,
  percentiles, k-marginal score, correlation MAE, discriminator ROC AUC; *Specific utility*:
  regression confidence-interval overlap.
- 003, Eiring (2022), §3.5 and appendix A: ML efficacy with AdaBoost, random forest and
  logistic regression (accuracy, ROC AUC, F1).

The metric functions live in :mod:`~synthreview.metrics.utility.marginals` (proportions, means,
percentiles, correlations), :mod:`~synthreview.metrics.utility.kmarginal`,
:mod:`~synthreview.metrics.utility.efficacy` (discriminator, ML efficacy) and
:mod:`~synthreview.metrics.utility.regression` (CI overlap) and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from synthreview.errors import ConfigError, attempt
from synthreview.io.schema import Schema
from synthreview.memo import Memo, remember
from synthreview.metrics.utility.answer_key import AnswerKeyReport, answer_keys
from synthreview.metrics.utility.constraints import (
    ConstraintReport,
    check_constraints,
    parse_constraints,
)
from synthreview.metrics.utility.efficacy import (
    DiscriminatorResult,
    MLEfficacy,
    discriminator_auc,
    frame_digest,
    ml_efficacy,
)
from synthreview.metrics.utility.kmarginal import KMarginalResult, k_marginal_score
from synthreview.metrics.utility.marginals import (
    CorrelationError,
    MeanErrors,
    PercentileErrors,
    ProportionErrors,
    check_columns,
    correlation_error,
    mean_errors,
    percentile_errors,
    proportion_errors,
)
from synthreview.metrics.utility.regression import (
    CIOverlap,
    ci_overlap,
    parse_formula,
    suggest_formula,
)
from synthreview.results import to_jsonable

__all__ = [
    "UtilityReference",
    "UtilityReport",
    "evaluate_utility",
]


@dataclass(frozen=True)
class UtilityReference:
    """The distribution metrics of one table against the real one (or ``None`` where failed).

    Used twice: inside :class:`UtilityReport` for the candidate, and as its
    ``holdout_reference`` for the holdout table.
    """

    proportions: ProportionErrors | None
    means: MeanErrors | None
    percentiles: PercentileErrors | None
    k_marginal: KMarginalResult | None
    k_marginal_binned: KMarginalResult | None
    correlation: CorrelationError | None
    discriminator: DiscriminatorResult | None
    ci_overlap: CIOverlap | None

    def summary(self) -> dict[str, Any]:
        """Headline numbers: ``k_marginal {1,2,3}``, ``correlation_mae``, ... (nan when absent)."""
        nan = float("nan")

        def get(obj: Any, attr: str) -> Any:
            return nan if obj is None else getattr(obj, attr)

        return {
            "k_marginal": dict(self.k_marginal.scores) if self.k_marginal else {},
            "k_marginal_binned": (
                dict(self.k_marginal_binned.scores) if self.k_marginal_binned else {}
            ),
            "correlation_mae": get(self.correlation, "mae"),
            "discriminator_auc": get(self.discriminator, "auc"),
            "ci_overlap": get(self.ci_overlap, "mean_overlap"),
            "proportion_error": get(self.proportions, "mean_error"),
            "proportion_error_by_group": get(self.proportions, "by_group_mean_error"),
            "mean_error": get(self.means, "mean_error"),
            "mean_error_by_group": get(self.means, "by_group_mean_error"),
            "percentile_error": get(self.percentiles, "mean_error"),
        }

    def to_dict(self) -> dict:
        """The headline numbers."""
        return to_jsonable(self.summary())


@dataclass(frozen=True)
class UtilityReport:
    """All utility metrics of one synthetic candidate.

    Attributes
    ----------
    candidate : UtilityReference
        Every distribution metric of the candidate against the real table.
    ml_efficacy : MLEfficacy or None
        TSTR vs TRTR on the holdout (None without a target or holdout; see ``skipped``).
    holdout_reference : UtilityReference or None
        The same distribution metrics for the holdout table against the real table.
    skipped : Mapping[str, str]
        Part -> why it was not computed.
    errors : Mapping[str, str]
        Part -> error message, for parts that failed (the rest still ran).
    groups : tuple of str
        Grouping columns of the by-group errors.
    answer_key : AnswerKeyReport or None
        The target and the named columns tested for an exact rule of the other columns
        (:mod:`synthreview.metrics.utility.answer_key`); None when no column was named.
    constraints : ConstraintReport or None
        Violation rates of the declared constraints
        (:mod:`synthreview.metrics.utility.constraints`); None when none were declared.
    """

    candidate: UtilityReference
    ml_efficacy: MLEfficacy | None
    holdout_reference: UtilityReference | None
    skipped: Mapping[str, str]
    errors: Mapping[str, str]
    groups: tuple[str, ...] = ()
    answer_key: AnswerKeyReport | None = None
    constraints: ConstraintReport | None = None

    def to_dict(self) -> dict:
        """``k_marginal {1,2,3}``, ``correlation_mae``, ``discriminator_auc``, ``ml_efficacy``
        (list of ``{model, metric, tstr, trtr}``), the other metrics, ``holdout_reference`` and
        ``details``."""
        out: dict[str, Any] = dict(self.candidate.summary())
        ml = self.ml_efficacy
        out["ml_efficacy"] = list(ml.scores) if ml else []
        out["ml_efficacy_task"] = (
            {"target": ml.target, "task": ml.task, "positive_class": ml.positive_class}
            if ml
            else None
        )
        ref = self.holdout_reference
        out["holdout_reference"] = ref.summary() if ref else None
        parts = ("k_marginal", "k_marginal_binned", "ci_overlap", "means", "percentiles")
        out["details"] = {p: getattr(self.candidate, p) for p in parts}
        out["groups"] = list(self.groups)
        out["answer_key"] = self.answer_key
        out["constraints"] = self.constraints
        out["skipped"] = dict(self.skipped)
        out["errors"] = dict(self.errors)
        return to_jsonable(out)


def _distribution_metrics(
    real: pd.DataFrame,
    other: pd.DataFrame,
    *,
    schema: Schema,
    groups: tuple[str, ...],
    formula: str | None,
    seed: int,
    errors: dict[str, str],
    person: str | None = None,
) -> UtilityReference:
    cat, num = schema.categorical, schema.numeric
    run = lambda name, fn: attempt(name, errors, fn)  # noqa: E731
    return UtilityReference(
        proportions=run(
            "proportions",
            lambda: proportion_errors(real, other, columns=cat, groups=groups),
        ),
        means=run("means", lambda: mean_errors(real, other, columns=num, groups=groups)),
        percentiles=run("percentiles", lambda: percentile_errors(real, other, columns=num)),
        k_marginal=run("k_marginal", lambda: k_marginal_score(real, other, columns=cat, seed=seed)),
        k_marginal_binned=(
            run(
                "k_marginal_binned",
                lambda: k_marginal_score(real, other, columns=cat, numeric=num, seed=seed),
            )
            if num
            else None
        ),
        correlation=run("correlation", lambda: correlation_error(real, other, columns=num)),
        discriminator=run(
            "discriminator",
            lambda: discriminator_auc(real, other, schema=schema, seed=seed, person=person),
        ),
        ci_overlap=(
            run("ci_overlap", lambda: ci_overlap(real, other, formula=formula, schema=schema))
            if formula
            else None
        ),
    )


def _holdout_reference(
    real, holdout, *, memo: Memo | None, **options
) -> tuple[UtilityReference, dict[str, str]]:
    """The holdout reference is the same for every candidate: computed once per review."""

    def compute() -> tuple[UtilityReference, dict[str, str]]:
        errors: dict[str, str] = {}
        return _distribution_metrics(real, holdout, errors=errors, **options), errors

    key = ("utility-reference", frame_digest(real), frame_digest(holdout))
    return remember(memo, (*key, repr(sorted(options.items(), key=str))), compute)


def _check_options(
    real: pd.DataFrame, schema: Schema, target: str | None, groups: Sequence[str]
) -> tuple[str, ...]:
    if isinstance(groups, str):
        groups = (groups,)
    for group in groups:
        if group not in schema.categorical:
            raise ConfigError(
                f"groups must be categorical columns {schema.categorical}; got {group!r}"
                + (" (numeric)." if group in schema.numeric else ".")
            )
    if target is not None and target not in schema.analysed:
        raise ConfigError(
            f"target must be one of the analysed columns {schema.analysed}; got {target!r}."
        )
    check_columns({"real": real}, schema.analysed)
    return tuple(dict.fromkeys(groups))


def evaluate_utility(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    holdout: pd.DataFrame | None,
    *,
    schema: Schema,
    target: str | None = None,
    groups: Sequence[str] = (),
    formula: str | None = None,
    seed: int = 0,
    memo: Memo | None = None,
    person: str | None = None,
    label_leak_columns: Sequence[str] = (),
    constraints: str | None = None,
) -> UtilityReport:
    """Every utility metric for one synthetic candidate, each with its holdout reference.

    Parameters
    ----------
    real : pandas.DataFrame
        The training (confidential, "gold standard") table.
    synthetic : pandas.DataFrame
        The candidate.
    holdout : pandas.DataFrame or None
        Real rows not used for training; without it the holdout reference and ML efficacy are
        skipped, with the reason in ``skipped``.
    schema : Schema
        Column kinds: ``schema.categorical`` and ``schema.numeric`` are analysed.
    target : str, optional
        Column for ML efficacy (classification if categorical, else regression).
    groups : sequence of str
        Categorical columns for the by-group proportion and mean errors (each on its own).
    formula : str, optional
        Regression for the CI overlap (see :mod:`synthreview.metrics.utility.regression`). ``None``
        uses :func:`suggest_formula` (the Adult default when its columns are present); ``""``
        turns the regression off.
    seed : int
        Seeds marginal sampling, the discriminator's sample and folds, and the models.
    person : str, optional
        The column naming each row's person (``--person``): the discriminator draws and folds
        whole people, and the TSTR/TRTR ratio's interval resamples holdout people
        (:mod:`synthreview.splits`).
    memo : Memo, optional
        The review's :class:`~synthreview.memo.Memo`: the holdout reference and the TRTR models
        are the same for every candidate and computed once per review.
    label_leak_columns : sequence of str, default=()
        Columns tested for an answer key besides ``target``
        (:mod:`synthreview.metrics.utility.answer_key`).
    constraints : str, optional
        The text of a constraints TOML file
        (:mod:`synthreview.metrics.utility.constraints`); None: nothing declared.

    Returns
    -------
    UtilityReport

    Raises
    ------
    ConfigError
        For an unknown or ill-typed target, group or formula.
    """
    groups = _check_options(real, schema, target, groups)
    skipped: dict[str, str] = {}
    if formula is None:
        formula = suggest_formula(schema)
        if formula is None:
            skipped["ci_overlap"] = "no regression formula given (option formula)."
    elif not formula.strip():
        formula = None
        skipped["ci_overlap"] = "the regression formula was left empty."
    if formula:
        parse_formula(formula, schema=schema, real=real)
    if not schema.numeric:
        skipped["k_marginal_binned"] = "no numeric columns to bin."
    options = dict(schema=schema, groups=groups, formula=formula, seed=seed, person=person)
    errors: dict[str, str] = {}
    candidate = _distribution_metrics(real, synthetic, errors=errors, **options)
    reference = None
    if holdout is None:
        skipped["holdout_reference"] = "no holdout table was given."
    else:
        reference, ref_errors = _holdout_reference(real, holdout, memo=memo, **options)
        errors.update({f"holdout_reference.{k}": v for k, v in ref_errors.items()})
    efficacy = None
    if target is None:
        skipped["ml_efficacy"] = "no target column was chosen (option target)."
    elif holdout is None:
        skipped["ml_efficacy"] = "no holdout table to test the models on."
    else:
        efficacy = attempt(
            "ml_efficacy",
            errors,
            lambda: ml_efficacy(
                real,
                synthetic,
                holdout,
                schema=schema,
                target=target,
                seed=seed,
                memo=memo,
                person=person,
            ),
        )
    keys = None
    tested = tuple(dict.fromkeys(([target] if target else []) + list(label_leak_columns)))
    if not tested:
        skipped["answer_key"] = "no target or label-leak column named (--label-leak-columns)."
    else:
        keys = attempt("answer_key", errors, lambda: answer_keys(
            real, synthetic, holdout=holdout, columns=tested, schema=schema, seed=seed,
        ))  # fmt: skip
    declared = None
    if not constraints:
        skipped["constraints"] = "no constraints declared (--constraints FILE.toml)."
    else:
        parsed = parse_constraints(constraints, columns=schema.analysed, numeric=schema.numeric)
        declared = attempt("constraints", errors, lambda: check_constraints(
            real, synthetic, holdout=holdout, constraints=parsed,
        ))  # fmt: skip
    return UtilityReport(
        candidate=candidate,
        ml_efficacy=efficacy,
        holdout_reference=reference,
        skipped=skipped,
        errors=errors,
        groups=groups,
        answer_key=keys,
        constraints=declared,
    )
