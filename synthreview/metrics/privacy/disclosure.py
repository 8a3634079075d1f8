"""Disclosure risk of named columns: attribute inference and ℓ-diversity of tree leaves.

Source: Urban Institute appendix "Disclosure risk" (``papers/001_*``): attribute inference
against a holdout benchmark and l-diversity of regression-tree nodes (Machanavajjhala et al.
2007). :mod:`synthreview.metrics.privacy.section` runs both inside ``evaluate_privacy`` and
re-exports
them.

Every tree here uses rpart's defaults, the CART implementation behind the Urban metrics:
``minsplit=20, minbucket=7, cp=0.01``; scikit-learn's ``min_impurity_decrease = 0.01 * var(y)``
applies the same rule (a split must cut the root's error by 1%).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from synthreview.encoding import TabularEncoder
from synthreview.engine import thread_map
from synthreview.errors import ConfigError
from synthreview.results import to_jsonable
from synthreview.splits import draw_rows


def _rpart_tree(y: np.ndarray, *, classify: bool, seed: int) -> Any:
    if classify:
        _, counts = np.unique(y, return_counts=True)
        p = counts / counts.sum()
        root = float(1.0 - np.sum(p**2))
        return DecisionTreeClassifier(
            min_samples_split=20, min_samples_leaf=7, min_impurity_decrease=0.01 * root,
            random_state=seed,
        )  # fmt: skip
    return DecisionTreeRegressor(
        min_samples_split=20, min_samples_leaf=7, min_impurity_decrease=0.01 * float(np.var(y)),
        random_state=seed,
    )  # fmt: skip


@dataclass(frozen=True)
class AttributeInferenceResult:
    """Attribute inference against the holdout benchmark (Urban appendix, ``001_*``).

    A tree learns ``sensitive`` from every other analysed column on the synthetic rows (and,
    as the benchmark, on as many holdout rows: "another random sample from the population") and
    predicts it for the training rows.

    Attributes
    ----------
    sensitive : str
    metric : {"rmse", "accuracy"}
        RMSE for a numeric column (lower = more precise inference = riskier), accuracy for a
        categorical one (higher = riskier).
    synthetic, holdout : float
        The metric for the attacker who trained on synthetic / on holdout rows.
    ratio : float
        ``synthetic / holdout``.
    risk_ratio : float
        Oriented so that > 1 means the synthetic data lets an attacker infer the attribute
        better than a fresh sample of the population would (1 = no added risk).
    n_train_rows, n_target_rows : int
    """

    sensitive: str
    metric: str
    synthetic: float
    holdout: float
    ratio: float
    risk_ratio: float
    n_train_rows: int
    n_target_rows: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return to_jsonable({f.name: getattr(self, f.name) for f in fields(self)})


def attribute_inference(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    holdout: pd.DataFrame,
    *,
    sensitive: str,
    encoder: TabularEncoder,
    seed: int = 0,
) -> AttributeInferenceResult:
    """Urban Institute attribute-inference test; see :class:`AttributeInferenceResult`."""
    schema = encoder.schema
    if sensitive not in schema.analysed:
        raise ConfigError(
            f"sensitive must be a numeric or categorical column; got {sensitive!r} "
            f"(analysed columns: {schema.analysed})"
        )
    classify = schema.kinds[sensitive] == "categorical"
    drop = set(encoder.groups[sensitive])
    keep = [i for i in range(len(encoder.feature_names)) if i not in drop]

    def xy(df: pd.DataFrame, name: str) -> tuple[np.ndarray, np.ndarray]:
        y = df[sensitive]
        ok = y.notna().to_numpy()
        x = encoder.transform(df, name=name)[ok][:, keep]
        y = y[ok].astype(str).to_numpy() if classify else pd.to_numeric(y[ok]).to_numpy(float)
        return x, y

    (xs, ys), (xh, yh), (xr, yr) = (
        xy(synthetic, "synthetic"),
        xy(holdout, "holdout"),
        xy(real, "real"),
    )
    n = min(len(ys), len(yh))
    if n < 20 or len(yr) == 0:
        raise ValueError(f"attribute inference needs >= 20 training rows per source; got {n}")
    rng = np.random.default_rng(seed)
    sources = [
        # equal sizes: a fair benchmark (drawn in this order, before any fit)
        (name, x, y, draw_rows(rng, len(y), n))
        for name, x, y in (("synthetic", xs, ys), ("holdout", xh, yh))
    ]

    def fit(source: tuple[str, np.ndarray, np.ndarray, np.ndarray]) -> float:
        _, x, y, rows = source
        model = _rpart_tree(y[rows], classify=classify, seed=seed).fit(x[rows], y[rows])
        pred = model.predict(xr)
        return float(np.mean(pred == yr) if classify else np.sqrt(np.mean((pred - yr) ** 2)))

    # the two trees are independent: side by side on the engine's threads
    values = dict(zip(("synthetic", "holdout"), thread_map(fit, sources), strict=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.float64(values["synthetic"]) / values["holdout"]
    return AttributeInferenceResult(
        sensitive=sensitive,
        metric="accuracy" if classify else "rmse",
        synthetic=values["synthetic"],
        holdout=values["holdout"],
        ratio=float(ratio),
        risk_ratio=float(ratio if classify else 1.0 / ratio),
        n_train_rows=n,
        n_target_rows=len(yr),
    )


@dataclass(frozen=True)
class LDiversityResult:
    """ℓ-diversity of regression-tree leaves on the synthetic data (Urban appendix, ``001_*``).

    For each numeric column a tree fitted on the synthetic rows predicts it from all other
    analysed columns; a leaf whose synthetic values take fewer than ``l`` distinct values
    pins the column down (Machanavajjhala et al. 2007) for whoever lands in it.

    Attributes
    ----------
    ell : int
        The ℓ of the definition.
    table : pandas.DataFrame
        One row per numeric column: ``column``, ``share_below_l`` (share of synthetic rows in
        leaves with < l distinct values, in [0, 1], lower is better), ``n_leaves``,
        ``n_leaves_below_l``.
    """

    ell: int
    table: pd.DataFrame = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """``{"l": ..., "columns": [{column, share_below_l, n_leaves, n_leaves_below_l}]}``."""
        return {"l": self.ell, "columns": to_jsonable(self.table)}


def l_diversity(
    synthetic: pd.DataFrame,
    *,
    encoder: TabularEncoder,
    ell: int = 10,
    seed: int = 0,
) -> LDiversityResult:
    """Share of synthetic values in low-diversity tree leaves, per numeric column."""
    if ell < 2:
        raise ConfigError(f"l_diversity must be an integer >= 2; got {ell}")
    x_all = encoder.transform(synthetic, name="synthetic")

    def column_row(col: str) -> dict[str, Any] | None:
        y = pd.to_numeric(synthetic[col], errors="coerce").to_numpy(float)
        ok = ~np.isnan(y)
        if ok.sum() < 20:
            return None
        drop = set(encoder.groups[col])
        x = x_all[ok][:, [i for i in range(x_all.shape[1]) if i not in drop]]
        tree = _rpart_tree(y[ok], classify=False, seed=seed).fit(x, y[ok])
        leaves = pd.DataFrame({"leaf": tree.apply(x), "y": y[ok]})
        distinct = leaves.groupby("leaf")["y"].nunique()
        low = distinct.index[distinct < ell]
        return {
            "column": col,
            "share_below_l": float(leaves["leaf"].isin(low).mean()),
            "n_leaves": len(distinct),
            "n_leaves_below_l": len(low),
        }

    # one independent tree per numeric column (the tree builder releases the GIL): side by
    # side on the engine's threads, in column order
    found = thread_map(column_row, encoder.schema.numeric)
    rows = [row for row in found if row is not None]
    columns = ["column", "share_below_l", "n_leaves", "n_leaves_below_l"]
    return LDiversityResult(ell=ell, table=pd.DataFrame(rows, columns=columns))
