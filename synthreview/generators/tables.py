"""Baseline generators: known-good and known-bad synthetic data for the demo and the tests.

Each generator fails (or succeeds) in one recognisable way, so a reviewer can see what every
section of a review reacts to:

==========================  ============================================================
``independent_marginals``   right 1-D marginals, no dependence between columns
``gaussian_copula``         marginals and rank correlations kept; a fair baseline
``add_noise``               training rows plus small noise: high fidelity, a privacy risk
``mode_collapse``           new rows from one cluster only: poor recall and coverage
``copy_rows``               training rows resampled: the memoriser every attack must catch
``traces_add_noise``        day traces plus noise (the add-noise hider on traces)
``traces_motif_shuffle``    4-hour chunks of real days recombined across days
``traces_autoregressive``   an AR(p) model of log glucose around the daily mean profile
==========================  ============================================================

Tables are ``pandas.DataFrame`` in, ``pandas.DataFrame`` out, with the columns and dtypes of
``real``; traces are ``(n_traces, n_steps)`` arrays in mg/dL. All randomness comes from
``seed`` through ``numpy.random.default_rng``: the same seed gives the same output.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.cluster import KMeans

from synthreview.encoding import TabularEncoder
from synthreview.errors import DataError
from synthreview.generators.traces import check_n
from synthreview.io.schema import Schema


def _check_table(real: pd.DataFrame, schema: Schema | None, n: int | None, *, min_rows=1) -> int:
    """Validate the common arguments and return the number of rows to generate."""
    if not isinstance(real, pd.DataFrame):
        raise TypeError(f"real must be a pandas DataFrame; got {type(real).__name__} instead")
    if len(real) < min_rows:
        raise DataError(f"real must have at least {min_rows} rows; got {len(real)} instead")
    if schema is not None:
        missing = [c for c in schema.columns if c not in real.columns]
        if missing:
            raise DataError(f"real is missing schema columns {missing}")
    return check_n(n, len(real))


def copy_rows(real: pd.DataFrame, *, n: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Resample training rows with replacement: a pure memoriser.

    Every synthetic row is an exact copy of a training row, so authenticity, distance to
    closest record and every membership attack should flag it; a policy that passes it is
    broken.

    Parameters
    ----------
    real : pandas.DataFrame
    n : int, optional
        Rows to generate; default ``len(real)``.
    seed : int

    Returns
    -------
    pandas.DataFrame
        ``n`` rows of ``real``, index reset.
    """
    n_out = _check_table(real, None, n)
    rng = np.random.default_rng(seed)
    return real.iloc[rng.integers(0, len(real), size=n_out)].reset_index(drop=True)


def independent_marginals(
    real: pd.DataFrame, *, schema: Schema, n: int | None = None, seed: int = 0
) -> pd.DataFrame:
    """Sample every column independently from its empirical distribution.

    Each 1-D marginal (missing values included, at their real rate) matches the real one up to
    sampling noise, while every dependence between columns is destroyed: the k-marginal score
    for k >= 2, correlation error, discriminator AUC and TSTR should all expose it.

    Parameters
    ----------
    real : pandas.DataFrame
    schema : Schema
        Checked against ``real``; every column of ``real`` is sampled the same way.
    n : int, optional
        Rows to generate; default ``len(real)``.
    seed : int

    Returns
    -------
    pandas.DataFrame
        Columns and dtypes of ``real``, ``n`` rows.
    """
    n_out = _check_table(real, schema, n)
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            col: real[col].iloc[rng.integers(0, len(real), size=n_out)].reset_index(drop=True)
            for col in real.columns
        }
    )


def gaussian_copula(
    real: pd.DataFrame, *, schema: Schema, n: int | None = None, seed: int = 0
) -> pd.DataFrame:
    """Gaussian copula over the analysed columns with empirical marginals.

    Every analysed column is ranked (categoricals by their sorted category order, missing values
    last, so missingness takes part in the dependence; ties get their mean rank) and turned into
    normal scores ``z = Phi^-1((rank - 1/2) / n)``, whose Pearson correlation matrix ``R`` is the
    copula's. New rows are drawn from ``N(0, R)`` and mapped back through each column's
    empirical quantile function, so every generated value is a value seen in that real column.
    Mean ranks rather than random tie-breaking keep the dependence of discrete and categorical
    columns from being diluted by tie noise. Identifier, datetime and constant columns are
    resampled from real rows independently of the rest.

    Parameters
    ----------
    real : pandas.DataFrame
        At least two rows.
    schema : Schema
    n : int, optional
        Rows to generate; default ``len(real)``.
    seed : int

    Returns
    -------
    pandas.DataFrame
        Columns and dtypes of ``real``, ``n`` rows.
    """
    n_out = _check_table(real, schema, n, min_rows=2)
    rng = np.random.default_rng(seed)
    columns = schema.analysed
    n_real = len(real)
    sorted_values: dict[str, pd.Series] = {}
    scores = np.empty((n_real, len(columns)))
    for j, col in enumerate(columns):
        if schema.kinds[col] == "numeric":
            key = pd.to_numeric(real[col], errors="coerce").to_numpy("float64", na_value=np.nan)
        else:
            text = real[col].astype("string").to_numpy(dtype=object, na_value=None)
            codes = {level: i for i, level in enumerate(sorted({v for v in text if v is not None}))}
            key = np.array([codes.get(v, np.nan) for v in text], dtype="float64")
        key = np.where(np.isnan(key), np.inf, key)  # missing values rank last, as one tie
        scores[:, j] = stats.norm.ppf((stats.rankdata(key) - 0.5) / n_real)
        order = np.argsort(key, kind="stable")
        sorted_values[col] = real[col].iloc[order].reset_index(drop=True)

    # a column of one value has no rank information: it gets no correlation with the others
    spread = scores.std(axis=0) > 0
    correlation = np.eye(len(columns))
    if spread.sum() > 1:
        correlation[np.ix_(spread, spread)] = np.corrcoef(scores[:, spread], rowvar=False)
    latent = rng.multivariate_normal(np.zeros(len(columns)), correlation, size=n_out, method="eigh")
    positions = np.minimum((stats.norm.cdf(latent) * n_real).astype(np.int64), n_real - 1)

    rows = rng.integers(0, n_real, size=n_out)
    out = {}
    for col in real.columns:
        if col in sorted_values:
            out[col] = sorted_values[col].iloc[positions[:, columns.index(col)]]
        else:
            out[col] = real[col].iloc[rows]
        out[col] = out[col].reset_index(drop=True)
    return pd.DataFrame(out)


def add_noise(
    real: pd.DataFrame,
    *,
    schema: Schema,
    sigma: float = 0.1,
    n: int | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """The Hide-and-Seek add-noise hider: training rows plus Gaussian noise.

    Each numeric value gets ``N(0, sigma^2)`` noise on the standardised scale (that is,
    ``sigma`` times the real column's standard deviation), as in the add-noise baseline of the
    NeurIPS 2020 Hide-and-Seek privacy challenge (paper 002, section 2.1, eq. 1). Values are
    clipped to the real column's range and integer-valued columns rounded; categorical and other
    columns are copied unchanged. With a small ``sigma`` every row stays next to its source row:
    high fidelity, and exactly the release a privacy review must stop.

    Parameters
    ----------
    real : pandas.DataFrame
        The training rows to hide.
    schema : Schema
        Only ``schema.numeric`` columns are perturbed.
    sigma : float, default 0.1
        Noise standard deviation in units of each column's real standard deviation, >= 0.
    n : int, optional
        Rows to generate. Default: every training row once, in input order (row ``i`` comes
        from real row ``i``). Fewer rows are drawn without replacement, more with replacement.
    seed : int

    Returns
    -------
    pandas.DataFrame
        Columns and dtypes of ``real``, ``n`` rows.
    """
    n_out = _check_table(real, schema, n)
    if not np.isfinite(sigma) or sigma < 0:
        raise ValueError(f"sigma must be a finite number >= 0; got {sigma!r} instead")
    rng = np.random.default_rng(seed)
    if n is None:
        source = np.arange(len(real))
    else:
        source = np.sort(rng.choice(len(real), size=n_out, replace=n_out > len(real)))
    out = real.iloc[source].reset_index(drop=True)
    for col in schema.numeric:
        reference = pd.to_numeric(real[col], errors="coerce").astype("float64")
        values = pd.to_numeric(out[col], errors="coerce").to_numpy("float64", na_value=np.nan)
        noisy = values + rng.normal(0.0, sigma * float(reference.std(ddof=0)), size=n_out)
        # clipped to the real range so values stay valid (no negative counts) and the only tell
        # left is proximity; integer-valued columns stay integer-valued
        noisy = np.clip(noisy, reference.min(), reference.max())
        if np.array_equal(reference.dropna(), reference.dropna().round()):
            noisy = np.round(noisy)
        out[col] = pd.Series(noisy).astype(real[col].dtype).to_numpy()
    return out


def mode_collapse(
    real: pd.DataFrame,
    *,
    schema: Schema,
    n: int | None = None,
    seed: int = 0,
    n_clusters: int = 8,
) -> pd.DataFrame:
    """Generate rows from the largest of ``n_clusters`` k-means clusters of the real data only.

    The classic GAN failure: every sample looks real (high precision) but only one mode of the
    data is produced, so beta-recall, coverage and the k-marginal score drop (paper 000,
    section 1: mode collapse). Clusters come from k-means on the ``TabularEncoder`` encoding
    fitted on ``real``; the rows of the largest cluster are then fed to
    :func:`gaussian_copula`, so the output is new rows rather than copies and the failure is
    one of diversity alone, not of privacy.

    Parameters
    ----------
    real : pandas.DataFrame
        At least ``n_clusters`` rows.
    schema : Schema
    n : int, optional
        Rows to generate; default ``len(real)``.
    seed : int
    n_clusters : int, default 8

    Returns
    -------
    pandas.DataFrame
        Columns and dtypes of ``real``, ``n`` rows.
    """
    if (
        isinstance(n_clusters, bool)
        or not isinstance(n_clusters, (int, np.integer))
        or n_clusters < 1
    ):
        raise ValueError(f"n_clusters must be an integer >= 1; got {n_clusters!r} instead")
    n_out = _check_table(real, schema, n, min_rows=max(n_clusters, 2))
    rng = np.random.default_rng(seed)
    encoded = TabularEncoder(schema).fit(real).transform(real, name="real")
    kmeans = KMeans(n_clusters=n_clusters, n_init=1, random_state=int(rng.integers(2**31 - 1)))
    labels = kmeans.fit_predict(encoded)
    sizes = np.bincount(labels, minlength=n_clusters)
    largest = int(np.argmax(sizes))
    if sizes[largest] < 2:
        raise DataError(f"the largest of {n_clusters} clusters of real has one row; use fewer")
    members = real.iloc[np.flatnonzero(labels == largest)].reset_index(drop=True)
    return gaussian_copula(members, schema=schema, n=n_out, seed=int(rng.integers(2**31 - 1)))
