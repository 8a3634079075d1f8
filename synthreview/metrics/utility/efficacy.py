"""Discriminator ROC AUC and machine-learning efficacy (train on synthetic, test on real).

- Discriminator: Urban Institute appendix, *General utility*, "Discriminator ROC AUC"
  (``papers/001``): a classifier tries to tell real from synthetic rows; 0.5 is ideal.
- ML efficacy: Eiring (2022), thesis §3.5 and appendix A (``papers/003``): AdaBoost, random
  forest and logistic regression trained on synthetic data (TSTR) and on the training data
  (TRTR), both tested on the holdout, scored by accuracy, ROC AUC and F1 (RMSE and R² for a
  numeric target). TRTR is the reference: what the real data would have given.
- The TSTR/TRTR ratio's uncertainty: a paired bootstrap of the test set (Efron & Tibshirani
  1993, ch. 13), both models' predictions on the same resample of the holdout, the resampled
  unit being the person when the review names one (the cluster bootstrap: a person's years
  are not independent test cases), else the row. A rare target (issue 34: ~11 positive people
  of a PSID panel) makes a single ratio swing by 20 %; the interval says by how much.

Rows are put in a canonical order (sorted by a content hash) before any seeded sampling or
fitting, so shuffling the rows of an input does not change a score.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import rankdata
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    AdaBoostClassifier,
    AdaBoostRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import (
    accuracy_score,
    f1_score,
    r2_score,
    roc_auc_score,
    root_mean_squared_error,
)
from sklearn.model_selection import cross_val_predict
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from synthreview.engine import single_threaded, thread_map
from synthreview.errors import ConfigError, DataError, UndefinedMetricWarning
from synthreview.io.schema import Schema
from synthreview.memo import Memo, remember
from synthreview.metrics.utility.marginals import categorical_values, check_columns
from synthreview.results import to_jsonable
from synthreview.splits import bootstrap_rows, cv_folds, draw_rows, units_of

CLASSIFICATION_METRICS = ("accuracy", "roc_auc", "f1")
REGRESSION_METRICS = ("rmse", "r2")
#: metrics whose TSTR/TRTR ratio gets a bootstrap interval (the threshold-free ones a rule reads)
INTERVAL_METRICS = ("roc_auc", "r2", "rmse")
#: test-set resamples of the ratio interval
N_RATIO_BOOTSTRAP = 200


def frame_digest(frame: pd.DataFrame) -> str:
    """Digest of a frame's full content and column names (row order ignored)."""
    rows = np.sort(pd.util.hash_pandas_object(frame, index=False).to_numpy())
    return hashlib.sha256(rows.tobytes() + repr(list(frame.columns)).encode()).hexdigest()


def canonical_order(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by a content hash, so row order in the input cannot change a result."""
    order = np.argsort(pd.util.hash_pandas_object(frame, index=False).to_numpy(), kind="stable")
    return frame.iloc[order].reset_index(drop=True)


def _features(frame: pd.DataFrame, schema: Schema, columns: list[str]) -> pd.DataFrame:
    cat = [c for c in columns if c in schema.categorical]
    num = [c for c in columns if c not in cat]
    out = frame[num].apply(pd.to_numeric, errors="coerce").astype(float)
    return pd.concat([out, categorical_values(frame, cat)], axis=1)[columns]


@dataclass(frozen=True)
class DiscriminatorResult:
    """Cross-validated ROC AUC of a classifier separating real from synthetic rows.

    Attributes
    ----------
    auc : float
        In [0, 1]; 0.5 is ideal (indistinguishable), 1 means every row is told apart.
    n_per_class : int
        Rows drawn from each table (balanced; with ``person`` the rows of whole people, up
        to this many per table).
    n_splits : int
        Folds of the stratified cross-validation.
    unit : {"row", "person"}
        What the sample and the folds divide: with a person column a person's rows are all in
        one fold, so the classifier never recognises a real person from the person's other rows.
    """

    auc: float
    n_per_class: int
    n_splits: int
    unit: str = "row"

    def to_dict(self) -> dict:
        """All fields."""
        return to_jsonable(self.__dict__)


def discriminator_auc(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    schema: Schema,
    max_rows: int = 10_000,
    n_splits: int = 5,
    seed: int = 0,
    person: str | None = None,
) -> DiscriminatorResult:
    """ROC AUC of gradient boosting telling real from synthetic rows, cross-validated.

    A balanced sample of ``min(len(real), len(synthetic), max_rows)`` rows per table is drawn
    with ``seed``; ``HistGradientBoostingClassifier`` (native categorical splits) predicts the
    source out of fold (``StratifiedKFold``), and the AUC is taken over the pooled predictions.
    Urban Institute appendix, *General utility*, "Discriminator ROC AUC".

    With ``person`` (a column of both tables naming each row's person; a synthetic table
    whose column is empty counts each row as its own person) whole people are drawn and the
    folds are ``StratifiedGroupKFold`` over people (:mod:`synthreview.splits`): with a
    person's rows in several folds the classifier learns the real *people* and tells a fresh
    sample of other people apart by them.

    Returns
    -------
    DiscriminatorResult
        ``auc`` in [0, 1]; 0.5 is ideal, lower (towards 0.5) is better.
    """
    columns = schema.analysed
    check_columns({"real": real, "synthetic": synthetic}, columns)
    n = min(len(real), len(synthetic), int(max_rows))
    if n < 2 * n_splits:
        warnings.warn(
            f"the discriminator needs at least {2 * n_splits} rows per table; got {n}.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        return DiscriminatorResult(auc=math.nan, n_per_class=n, n_splits=n_splits)
    rng = np.random.default_rng(seed)
    parts, people = [], []
    for side, frame in (("real", real), ("synthetic", synthetic)):
        kept = [*columns, person] if person is not None else columns
        ordered = canonical_order(frame[kept])
        ids = _person_ids(ordered, person, side)
        rows = draw_rows(rng, len(ordered), n, groups=ids)
        parts.append(ordered[columns].iloc[rows])
        people.append(None if ids is None else ids[rows])
    x = _features(pd.concat(parts, ignore_index=True), schema, columns)
    groups = None if person is None else np.concatenate(people)
    is_cat = np.array([c in schema.categorical for c in columns], dtype=bool)
    native = is_cat.copy()
    for j, column in enumerate(columns):
        if is_cat[j]:
            codes, uniques = pd.factorize(x[column], sort=True)
            x[column] = codes.astype(float)
            native[j] = len(uniques) <= 250  # HGB bins categories into at most 255 bins
    y = np.repeat([0, 1], [len(parts[0]), len(parts[1])])
    model = HistGradientBoostingClassifier(
        max_iter=100, early_stopping=False, categorical_features=native, random_state=seed
    )
    folds = list(cv_folds(y, n_splits=n_splits, seed=seed, groups=groups))
    # OpenMP threads spin-wait when cores are shared: 140 s instead of 2.7 s measured on a busy
    # 2-core machine, so the boosting runs single-threaded; the folds one after another (side
    # by side on two threads took 2.4-2.6 s instead of 1.9-2.0 s at 5,000 rows a class: the
    # boosting's split search is Python holding the GIL)
    with single_threaded("openmp"):
        proba = cross_val_predict(model, x.to_numpy(), y, cv=folds, method="predict_proba")
    return DiscriminatorResult(
        auc=float(roc_auc_score(y, proba[:, 1])),
        n_per_class=n,
        n_splits=n_splits,
        unit="row" if person is None else "person",
    )


def _person_ids(frame: pd.DataFrame, person: str | None, side: str) -> np.ndarray | None:
    """``side:id`` of every row (a row of an empty person column is its own person)."""
    if person is None:
        return None
    values = frame[person]
    ids = values.astype("string").fillna("").to_numpy(dtype=object).astype(str)
    own = np.char.add("row ", np.arange(len(frame)).astype(str))
    return np.char.add(f"{side}:", np.where(values.isna().to_numpy(), own, ids))


@dataclass(frozen=True)
class EfficacyScore:
    """One model and metric: trained on synthetic (TSTR) vs on real (TRTR), tested on holdout.

    Attributes
    ----------
    model, metric : str
    tstr, trtr : float
    ratio : float
        ``tstr / trtr`` (``trtr / tstr`` for RMSE, lower is better): 1 = as useful as real data.
    ratio_ci : tuple of float
        95 % paired-bootstrap percentile interval of ``ratio`` over resamples of the test
        set's ``unit`` (:data:`INTERVAL_METRICS` only; NaN otherwise).
    unit : {"row", "person"}
        What the bootstrap resampled.
    """

    model: str
    metric: str
    tstr: float
    trtr: float
    ratio: float = math.nan
    ratio_ci: tuple[float, float] = (math.nan, math.nan)
    unit: str = "row"

    def to_dict(self) -> dict:
        """All fields."""
        return to_jsonable(self.__dict__)


@dataclass(frozen=True)
class MLEfficacy:
    """Machine-learning efficacy of a synthetic table for one target column.

    Attributes
    ----------
    target : str
    task : {"classification", "regression"}
    positive_class : str or None
        Class scored by ROC AUC and F1 in binary tasks: the rarer class in the training data.
    scores : tuple of EfficacyScore
        accuracy, roc_auc, f1 in [0, 1] (higher is better), or rmse >= 0 (lower is better)
        and r2 <= 1 (higher is better); TSTR close to TRTR is ideal.
    n_test : int
        Holdout rows scored.
    """

    target: str
    task: str
    positive_class: str | None
    scores: tuple[EfficacyScore, ...]
    n_test: int

    def table(self) -> pd.DataFrame:
        """``model, metric, tstr, trtr`` as a frame."""
        return pd.DataFrame([s.__dict__ for s in self.scores])

    def to_dict(self) -> dict:
        """Target, task and the list of scores."""
        return to_jsonable(
            {
                "target": self.target,
                "task": self.task,
                "positive_class": self.positive_class,
                "scores": list(self.scores),
            }
        )


def _models(task: str, seed: int) -> dict[str, object]:
    # sizes measured on Adult (24k rows): 50 trees of depth <= 16 fit in ~2 s on one core, within
    # 0.003 accuracy of 100 unrestricted trees at a sixth of the time. One job: a forest
    # predicting on several threads sums its trees' probabilities in thread order, which
    # changed a multi-class TSTR score in the last digits between runs
    if task == "classification":
        return {
            "logistic_regression": LogisticRegression(max_iter=1000),
            "random_forest": RandomForestClassifier(
                n_estimators=50, max_depth=16, min_samples_leaf=5, n_jobs=1, random_state=seed
            ),
            "adaboost": AdaBoostClassifier(n_estimators=50, random_state=seed),
        }
    return {
        "linear_regression": LinearRegression(),
        "random_forest": RandomForestRegressor(
            n_estimators=50, max_depth=16, min_samples_leaf=5, n_jobs=1, random_state=seed
        ),
        "adaboost": AdaBoostRegressor(n_estimators=50, random_state=seed),
    }


def _preprocessing(schema: Schema, features: list[str]) -> ColumnTransformer:
    """The one pipeline used for TSTR and TRTR; it is fitted on each training set in turn."""
    num = [c for c in features if c not in schema.categorical]
    cat = [c for c in features if c in schema.categorical]
    parts = []
    if num:
        parts.append(
            ("numeric", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), num)
        )
    if cat:
        parts.append(
            ("categorical", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cat)
        )
    return ColumnTransformer(parts)


def _xy(frame: pd.DataFrame, schema: Schema, target: str, features: list[str], task: str):
    frame = canonical_order(frame[[*features, target]])
    if task == "classification":
        y = frame[target].astype("string")
    else:
        y = pd.to_numeric(frame[target], errors="coerce").astype(float)
    keep = y.notna().to_numpy()
    y = y[keep].astype(object if task == "classification" else float).to_numpy()
    return _features(frame.loc[keep], schema, features), y


def _fit_score(train, test, *, schema, target, features, task, positive, seed) -> dict:
    """``{(model, metric): value}`` for models fitted on ``train`` and scored on ``test``.

    ``(model, "scores")`` holds what the model predicted for each test row (the positive
    class's probability, every class's, or the regression's prediction; NaN when it could not
    be fitted): the ratio's bootstrap re-scores them on resamples of the test set.
    """
    x_train, y_train = _xy(train, schema, target, features, task)
    x_test, y_test = _xy(test, schema, target, features, task)
    metrics = CLASSIFICATION_METRICS if task == "classification" else REGRESSION_METRICS
    models = _models(task, seed)
    if task == "classification" and len(set(y_train)) < 2:
        for name in models:
            warnings.warn(
                f"'{target}' has a single class in a training set; {name} cannot be fitted.",
                UndefinedMetricWarning,
                stacklevel=3,
            )
        out = {(name, m): math.nan for name in models for m in metrics}
        return out | {(name, "scores"): None for name in models}

    def scores(item: tuple[str, object]) -> dict:
        name, model = item
        pipe = Pipeline([("prep", _preprocessing(schema, features)), ("model", clone(model))])
        return _scores(name, pipe, x_train, y_train, x_test, y_test, task=task, positive=positive)

    # the models' fits are independent: side by side on the engine's threads, each with one
    # BLAS/OpenMP thread (spin-waiting threads on shared cores made logistic regression 7.5 s
    # instead of 1.4 s on Adult, measured on a busy 2-core machine; and one thread per fit keeps
    # its rounding whatever the thread bound)
    out = {}
    for found in thread_map(scores, models.items()):
        out.update(found)
    return out


def _scores(name, pipe, x_train, y_train, x_test, y_test, *, task, positive) -> dict:
    """``{(name, metric): value}`` of ``pipe`` fitted on the training and scored on the test set."""
    out = {}
    if task == "regression":
        pipe.fit(x_train, y_train)
        pred = pipe.predict(x_test)
        out[(name, "rmse")] = float(root_mean_squared_error(y_test, pred))
        out[(name, "r2")] = float(r2_score(y_test, pred))
        out[(name, "scores")] = np.asarray(pred, np.float64)
        return out
    # classes as integer codes in sorted order (the order scikit-learn gives the labels):
    # the same fits, but AdaBoost's 50 trees no longer each sort an object array of labels
    # (a quarter of the utility section at 50,000 rows)
    labels, codes = np.unique(y_train, return_inverse=True)
    pipe.fit(x_train, codes)
    pred = labels[pipe.predict(x_test)]
    proba = pd.DataFrame(pipe.predict_proba(x_test), columns=labels[pipe.classes_])
    out[(name, "accuracy")] = float(accuracy_score(y_test, pred))
    if positive is not None:
        score = proba[positive] if positive in proba else np.zeros(len(y_test))
        out[(name, "roc_auc")] = float(roc_auc_score(y_test == positive, score))
        out[(name, "f1")] = float(f1_score(y_test == positive, pred == positive))
        out[(name, "scores")] = np.asarray(score, np.float64)
    else:
        labels = sorted(set(y_test))
        scores = proba.reindex(columns=labels, fill_value=0.0).to_numpy()
        scores = scores / np.clip(scores.sum(axis=1, keepdims=True), 1e-12, None)
        out[(name, "roc_auc")] = float(
            roc_auc_score(y_test, scores, multi_class="ovr", average="macro", labels=labels)
        )
        out[(name, "f1")] = float(f1_score(y_test, pred, average="macro"))
        out[(name, "scores")] = None  # macro one-vs-rest AUC: no interval (too slow per resample)
    return out


def _test_units(test: pd.DataFrame, person: str | None, target: str, features: list[str], task):
    """Person id of every scored test row in :func:`_xy`'s order; None: the row is the unit."""
    if person is None:
        return None
    frame = test[[*features, target]]
    order = np.argsort(pd.util.hash_pandas_object(frame, index=False).to_numpy(), kind="stable")
    y = frame[target].iloc[order]
    y = y.astype("string") if task == "classification" else pd.to_numeric(y, errors="coerce")
    ids = test[person].iloc[order].astype("string").fillna("").to_numpy(dtype=object)
    return ids[y.notna().to_numpy()].astype(str)


def _score(metric: str, y: np.ndarray, predicted: np.ndarray) -> float:
    """ROC AUC (``y`` boolean, Mann-Whitney with ties one half), R² or RMSE of a resample."""
    if metric == "roc_auc":
        n_pos = int(y.sum())
        n_neg = len(y) - n_pos
        if not n_pos or not n_neg:
            return math.nan
        ranks = rankdata(predicted)
        return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
    error = np.sum((y - predicted) ** 2)
    if metric == "rmse":
        return float(np.sqrt(error / len(y)))
    total = np.sum((y - y.mean()) ** 2)
    return float(1 - error / total) if total > 0 else math.nan


class _RankedScores:
    """One model's scores of the test rows, sorted once: the ROC AUC of any bootstrap
    resample from its row counts, equal to :func:`_score`'s to the last bit.

    :func:`_score` ranks every resample (``rankdata``: O(n log n), most of the interval's time).
    Its AUC is the Mann-Whitney U over the resample's (positive, negative) pairs, ties counted
    one half, divided by ``n_pos * n_neg``; a resample is the test rows with counts, so ``U`` is
    a sum over the tie groups of the scores, found in O(n). Both compute ``U`` exactly (a
    half-integer far below 2**53) and divide once, so the AUCs are the same floats.
    """

    def __init__(self, y: np.ndarray, predicted: np.ndarray) -> None:
        _, self.group = np.unique(predicted, return_inverse=True)  # tie groups, lowest first
        self.n_groups = int(self.group.max()) + 1 if len(self.group) else 0
        self.positive = np.asarray(y, bool)

    def auc(self, counts: np.ndarray) -> float:
        """AUC of the resample that holds test row ``i`` ``counts[i]`` times."""
        pos = np.bincount(self.group, weights=counts * self.positive, minlength=self.n_groups)
        neg = np.bincount(self.group, weights=counts * ~self.positive, minlength=self.n_groups)
        pos, neg = pos.astype(np.int64), neg.astype(np.int64)  # sums of counts: exact integers
        n_pos, n_neg = int(pos.sum()), int(neg.sum())
        if not n_pos or not n_neg:
            return math.nan
        below = np.cumsum(neg) - neg  # negatives scored below each tie group
        twice_u = int((pos * (2 * below + neg)).sum())
        return float((twice_u / 2) / (n_pos * n_neg))


def ratio_interval(
    metric: str,
    y: np.ndarray,
    tstr_predicted: np.ndarray,
    trtr_predicted: np.ndarray,
    *,
    groups: np.ndarray | None = None,
    n_bootstrap: int = N_RATIO_BOOTSTRAP,
    seed: int = 0,
) -> tuple[float, float]:
    """95 % paired-bootstrap percentile interval of the TSTR/TRTR ratio of ``metric``.

    Each resample draws the test set's units with replacement (people when ``groups`` names
    each row's person, else rows: :func:`synthreview.splits.bootstrap_rows`) and scores both
    models' predictions on the same resample, so what the two share (the test cases) cancels
    in the ratio (Efron & Tibshirani 1993, ch. 13). ``y`` is boolean (the positive class) for
    ``roc_auc``; the ratio is ``TRTR / TSTR`` for ``rmse`` (lower is better). NaN when fewer
    than 90 % of the resamples give a finite ratio (a class missing from most of them).
    """
    if metric not in INTERVAL_METRICS:
        raise ValueError(f"metric must be one of {list(INTERVAL_METRICS)}; got {metric!r} instead")
    y = np.asarray(y, bool if metric == "roc_auc" else np.float64)
    rng = np.random.default_rng([seed, 34])
    units = units_of(len(y), groups)  # grouped once for every resample
    ratios = np.full(n_bootstrap, math.nan)
    # ROC AUC from row counts over scores sorted once (the same floats as ranking each
    # resample); NaN scores rank as NaN, which only _score reproduces
    ranked = (
        (_RankedScores(y, tstr_predicted), _RankedScores(y, trtr_predicted))
        if metric == "roc_auc"
        and np.isfinite(tstr_predicted).all()
        and np.isfinite(trtr_predicted).all()
        else None
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        for b in range(n_bootstrap):
            rows = bootstrap_rows(rng, len(y), groups=units)
            if ranked is not None:
                counts = np.bincount(rows, minlength=len(y))
                tstr, trtr = ranked[0].auc(counts), ranked[1].auc(counts)
            else:
                tstr = _score(metric, y[rows], tstr_predicted[rows])
                trtr = _score(metric, y[rows], trtr_predicted[rows])
            num, den = (trtr, tstr) if metric == "rmse" else (tstr, trtr)
            if den > 0:
                ratios[b] = num / den
    finite = ratios[np.isfinite(ratios)]
    if len(finite) < 0.9 * n_bootstrap:
        return (math.nan, math.nan)
    low, high = np.percentile(finite, [2.5, 97.5])
    return (float(low), float(high))


def ml_efficacy(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    holdout: pd.DataFrame,
    *,
    schema: Schema,
    target: str,
    seed: int = 0,
    memo: Memo | None = None,
    person: str | None = None,
) -> MLEfficacy:
    """Train on synthetic, test on real (TSTR) next to train on real, test on real (TRTR).

    Logistic (or linear) regression, random forest and AdaBoost, each behind the same
    preprocessing (median imputation + standardisation of numeric columns, one-hot encoding
    of categorical columns with unknown levels ignored) fitted on its own training set, are
    trained on ``synthetic`` and on ``real`` and scored on ``holdout``. A categorical target is a
    classification (accuracy, ROC AUC and F1 of the rarer class when binary, macro one-vs-rest
    AUC and macro F1 otherwise); a numeric target is a regression (RMSE, R²). Eiring (2022),
    §3.5 and appendix A. Each ROC AUC, R² and RMSE ratio carries a 95 % paired-bootstrap
    interval over resamples of the holdout's units (:func:`ratio_interval`): people when
    ``person`` names the column of each row's person (``holdout`` must hold it), else rows.

    Returns
    -------
    MLEfficacy
        TSTR close to TRTR is ideal.
    """
    if target not in schema.analysed:
        raise ConfigError(
            f"target must be a numeric or categorical column; got {target!r} "
            f"(columns: {schema.analysed})."
        )
    features = [c for c in schema.analysed if c != target]
    if not features:
        raise ConfigError(f"ML efficacy needs at least one column besides the target {target!r}.")
    check_columns({"real": real, "synthetic": synthetic, "holdout": holdout}, schema.analysed)
    task = "classification" if target in schema.categorical else "regression"
    positive = None
    if task == "classification":
        counts = real[target].dropna().astype("string").value_counts()
        if len(counts) < 2:
            raise DataError(
                f"target {target!r} needs at least two classes in real; got {len(counts)}."
            )
        if len(counts) == 2:
            positive = str(counts.sort_index().sort_values(kind="stable").index[0])
    kwargs = dict(
        schema=schema, target=target, features=features, task=task, positive=positive, seed=seed
    )
    # each model's fit runs single-threaded (_fit_score)
    tstr = _fit_score(synthetic, holdout, **kwargs)
    trtr = remember(
        memo,
        ("trtr", frame_digest(real), frame_digest(holdout), repr(sorted(kwargs.items(), key=str))),
        lambda: _fit_score(real, holdout, **kwargs),
    )
    _, y_test = _xy(holdout, schema, target, features, task)
    if positive is not None:
        y_test = y_test == positive
    units = _test_units(holdout, person, target, features, task)
    unit = "row" if person is None else "person"
    scores = []
    for (m, k), v in tstr.items():
        if k == "scores":
            continue
        num, den = (trtr[(m, k)], v) if k == "rmse" else (v, trtr[(m, k)])
        ratio = num / den if den > 0 and not math.isnan(num) else math.nan
        ci = (math.nan, math.nan)
        predicted = tstr[(m, "scores")], trtr[(m, "scores")]
        if (
            k in INTERVAL_METRICS
            and not math.isnan(ratio)
            and all(p is not None for p in predicted)
        ):
            ci = ratio_interval(k, y_test, *predicted, groups=units, seed=seed)
        scores.append(EfficacyScore(m, k, v, trtr[(m, k)], ratio=ratio, ratio_ci=ci, unit=unit))
    return MLEfficacy(
        target=target,
        task=task,
        positive_class=positive,
        scores=tuple(scores),
        n_test=int(holdout[target].notna().sum()),
    )
