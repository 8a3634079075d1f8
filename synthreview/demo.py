"""The bundled demo: real data, a holdout split and baseline candidates, ready to review.

``tables`` builds a review of the UCI Adult census table, ``traces`` one of a single person's
continuous glucose monitor recording cut into day traces; both ship compressed in
``synthreview/datasets/`` (attributions in its README), so the demo needs no download and
never reads anything outside the package. Candidates come from
:mod:`synthreview.generators`, each chosen because a reviewer should reach a different verdict:

* ``fresh_sample``: real people who are in neither the training nor the holdout table, i.e.
  what a perfect generator would produce: the release a reviewer should see pass;
* ``fresh_with_copies``: the same with 10 % of its rows replaced by training rows, the leak
  that curation (dropping exact copies) repairs: release after curation;
* ``copula`` / ``autoregressive``: fair baselines (a copula with empirical marginals repeats
  exact rare training values, which the singling-out risk sees);
* ``noisy_copy``: training records plus small noise, the privacy failure to catch;
* ``mode_collapse`` / ``motif_shuffle``: plausible but narrow, or stitched from real pieces.

``demo_files`` writes the same tables as CSV files, for the command line and its tests.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from synthreview import generators
from synthreview.io.schema import LoadedTable, Review
from synthreview.io.table_rules import number_text
from synthreview.io.tables import align, infer_schema, read_table
from synthreview.io.traces import Traces, align_traces, load_traces

ADULT_FILE = "adult.csv.gz"
#: a CTGAN sample made once by ``scripts/make_ctgan_candidate.py``, and the record of how
CTGAN_FILE = "adult_ctgan.csv.gz"
CTGAN_RECORD = "adult_ctgan.json"
CGM_FILE = "cgm_one_subject.csv.gz"
#: default demo size: responsive on a 2-core machine, large enough for stable metrics
DEMO_TRAIN_ROWS = 5_000
#: share of the CGM days kept as holdout
TRACE_HOLDOUT_SHARE = 0.3
#: add-noise sigma (in real standard deviations) of the ``noisy_copy`` table candidate; at 0.1
#: a candidate row lies ~0.2 from its source in the encoded space, against ~1.5 between real rows
NOISY_COPY_SIGMA = 0.1
#: share of the ``fresh_with_copies`` rows that are verbatim training rows: a leak a curation
#: removes (every copy is an exact match, so the audit flags exactly these rows)
LEAKED_SHARE = 0.1
#: add-noise sigma (mg/dL) of the ``noisy_copy`` trace candidate, about a CGM's own noise
NOISY_TRACE_SIGMA_MG_DL = 5.0


@dataclass(frozen=True)
class DemoFiles:
    """Paths of the demo files written by :func:`demo_files`.

    Attributes
    ----------
    real : Path
    holdout : Path
    synthetic : dict of str -> Path
        Candidate name -> file; the file stem is the candidate name.
    """

    real: Path
    holdout: Path
    synthetic: dict[str, Path]


def _dataset(filename: str):
    return resources.files("synthreview") / "datasets" / filename


def _dataset_bytes(filename: str) -> bytes:
    return _dataset(filename).read_bytes()


def _ctgan_for(train_sha256: str) -> LoadedTable | None:
    """The shipped CTGAN sample, if it was trained on exactly this training table."""
    if not (_dataset(CTGAN_FILE).is_file() and _dataset(CTGAN_RECORD).is_file()):
        return None
    if json.loads(_dataset(CTGAN_RECORD).read_text())["train_sha256"] != train_sha256:
        return None
    loaded = read_table(_dataset_bytes(CTGAN_FILE), name="ctgan", role="synthetic")
    return _table(loaded.frame, loaded.raw, name="ctgan", role="synthetic")


@functools.cache
def _adult() -> LoadedTable:
    # parsed once per process: the full table takes a couple of seconds to read and type
    return read_table(_dataset_bytes(ADULT_FILE), name="adult", role="real")


@functools.cache
def _cgm() -> Traces:
    return load_traces(_dataset_bytes(CGM_FILE), name="cgm")


def _number_text(numbers: np.ndarray) -> np.ndarray:
    """Numbers as a CSV would hold them (:func:`_tables.number_text`), missing values empty."""
    text = number_text(numbers)
    text[text == None] = ""  # noqa: E711 (element-wise comparison on an object array)
    return text


def _cell_text(values: pd.Series) -> pd.Series:
    """Cells of one column as a CSV would hold them; missing values empty."""
    if pd.api.types.is_numeric_dtype(values.dtype):
        return pd.Series(_number_text(values.to_numpy("float64", na_value=np.nan)), dtype="str")
    return values.astype("str").where(values.notna(), "")


def _csv_bytes(raw: pd.DataFrame) -> bytes:
    return raw.to_csv(index=False, lineterminator="\n").encode("utf-8")


def _table(frame: pd.DataFrame, raw: pd.DataFrame | None, *, name: str, role: str) -> LoadedTable:
    """A LoadedTable whose ``raw`` and ``sha256`` are those of the CSV ``demo_files`` writes."""
    frame = frame.reset_index(drop=True)
    raw = (
        pd.DataFrame({c: _cell_text(frame[c]) for c in frame.columns})
        if raw is None
        else raw.reset_index(drop=True)
    )
    return LoadedTable(
        name=name,
        role=role,
        frame=frame,
        raw=raw,
        sha256=hashlib.sha256(_csv_bytes(raw)).hexdigest(),
        source_format="csv",
        delimiter=",",
        encoding="utf-8",
    )


def _split(n_rows: int, n_first: int, n_second: int, rng: np.random.Generator):
    order = rng.permutation(n_rows)
    return np.sort(order[:n_first]), np.sort(order[n_first : n_first + n_second])


def tables(seed: int = 0, *, n_train: int | None = None, n_holdout: int | None = None) -> Review:
    """Review of the UCI Adult table: a seeded train / holdout split and four candidates.

    Parameters
    ----------
    seed : int
        Fixes the split and every generator; the same seed gives the same review.
    n_train : int, optional
        Training rows sampled from the 48,842; default ``DEMO_TRAIN_ROWS`` (5,000), which keeps
        the dashboard responsive on two CPU cores.
    n_holdout : int, optional
        Holdout rows, disjoint from the training rows; default ``n_train`` (the holdout
        reference is only comparable when holdout and synthetic have the same size), capped
        by the rows left over.

    Returns
    -------
    Review
        ``real`` (``adult_train``), ``holdout`` (``adult_holdout``) and the candidates
        ``copula``, ``noisy_copy``, ``mode_collapse``, ``fresh_sample`` and
        ``fresh_with_copies``, each with ``n_train``
        rows. With the default seed and sizes a fifth, ``ctgan``, is the shipped sample of a
        CTGAN model trained on exactly this training table (``scripts/make_ctgan_candidate.py``);
        for any other split it is left out, since that model may have seen holdout rows.
        Candidate ``raw`` tables and digests are those of the CSV files :func:`demo_files`
        writes.
    """
    adult = _adult()
    n_total = len(adult.frame)
    n_train = DEMO_TRAIN_ROWS if n_train is None else n_train
    if isinstance(n_train, bool) or not isinstance(n_train, (int, np.integer)):
        raise ValueError(f"n_train must be an integer; got {n_train!r} instead")
    if not 2 <= n_train <= n_total - 2:
        raise ValueError(f"n_train must be in [2, {n_total - 2}]; got {n_train} instead")
    n_holdout = min(n_train, n_total - n_train) if n_holdout is None else n_holdout
    if not 2 <= n_holdout <= n_total - n_train:
        raise ValueError(
            f"n_holdout must be in [2, {n_total - n_train}] for n_train={n_train}; "
            f"got {n_holdout} instead"
        )
    rng = np.random.default_rng(seed)
    train_rows, holdout_rows = _split(n_total, n_train, n_holdout, rng)
    # raw_rows: only the rows drawn, as written (``raw`` builds every cell of the dataset)
    real = _table(
        adult.frame.iloc[train_rows], adult.raw_rows(train_rows), name="adult_train", role="real"
    )
    holdout = _table(
        adult.frame.iloc[holdout_rows],
        adult.raw_rows(holdout_rows),
        name="adult_holdout",
        role="holdout",
    )
    schema = infer_schema(real.frame)
    seeds = rng.integers(2**31 - 1, size=4).tolist()
    train = real.frame
    candidates = {
        "copula": generators.gaussian_copula(train, schema=schema, seed=seeds[0]),
        "noisy_copy": generators.add_noise(
            train, schema=schema, sigma=NOISY_COPY_SIGMA, seed=seeds[2]
        ),
        "mode_collapse": generators.mode_collapse(train, schema=schema, seed=seeds[3]),
    }
    # a perfect generator's output: real rows outside both splits, drawn from a stream of its
    # own so the other candidates (and the shipped CTGAN sample's split) stay as they were
    fresh_rng = np.random.default_rng([seed, 1])
    rest = np.setdiff1d(np.arange(n_total), np.concatenate([train_rows, holdout_rows]))
    n_fresh = min(n_train, len(rest))
    if n_fresh >= 2:
        fresh = adult.frame.iloc[np.sort(fresh_rng.choice(rest, size=n_fresh, replace=False))]
        fresh = fresh.reset_index(drop=True)
        candidates["fresh_sample"] = fresh
        candidates["fresh_with_copies"] = _plant_copies(
            fresh, train, LEAKED_SHARE, seed=int(fresh_rng.integers(2**31 - 1))
        )
    synthetic = {
        name: _table(frame, None, name=name, role="synthetic") for name, frame in candidates.items()
    }
    ctgan = _ctgan_for(real.sha256)
    if ctgan is not None:
        synthetic["ctgan"] = ctgan
    return align(real, synthetic, holdout=holdout, schema=schema)


def _plant_copies(frame: pd.DataFrame, train: pd.DataFrame, share: float, *, seed: int):
    """``frame`` with ``share`` of its rows replaced by distinct verbatim training rows."""
    rng = np.random.default_rng(seed)
    n_copies = round(share * len(frame))
    slots = rng.choice(len(frame), size=n_copies, replace=False)
    sources = rng.choice(len(train), size=n_copies, replace=False)
    frame = frame.reset_index(drop=True).copy()
    frame.iloc[slots] = train.iloc[sources][frame.columns].to_numpy()
    return frame.astype(train.dtypes.to_dict())


def _day_traces(traces: Traces, name: str) -> Traces:
    """Name ``traces`` and give them the digest of the wide CSV ``demo_files`` writes."""
    named = replace(traces, name=name)
    return replace(named, sha256=hashlib.sha256(_csv_bytes(_trace_raw(named))).hexdigest())


def _trace_raw(traces: Traces) -> pd.DataFrame:
    """The wide CSV cells of ``traces``: ``id``, ``start``, one ``HH:MM`` column per step."""
    head = traces.to_frame()[["id", "start"]]
    steps = pd.DataFrame(_number_text(traces.values), columns=traces.step_labels(), dtype="str")
    return pd.concat([head.apply(_cell_text), steps], axis=1)


def traces(seed: int = 0) -> Review:
    """Review of one person's CGM day traces: a seeded split by day and three candidates.

    The bundled recording (2010-03-24 to 2010-10-10) is cut into day traces of 288 five-minute
    steps by :func:`synthreview.io.traces.load_traces` with its default gap rules (168 days are
    kept). A random 30 % of the days is the holdout; the generators see only the other days.

    Parameters
    ----------
    seed : int
        Fixes the split and every generator.

    Returns
    -------
    Review
        ``kind="traces"``; ``real`` (``cgm_train``), ``holdout`` (``cgm_holdout``) and the
        candidates ``motif_shuffle``, ``autoregressive`` and ``noisy_copy``, each with as many
        traces as ``real``. Generated values are rounded to 0.1 mg/dL so the CSV files of
        :func:`demo_files` hold them exactly.
    """
    days = _cgm()
    rng = np.random.default_rng(seed)
    n_holdout = round(TRACE_HOLDOUT_SHARE * days.n_traces)
    train_rows, holdout_rows = _split(days.n_traces, days.n_traces - n_holdout, n_holdout, rng)
    real = _day_traces(days.subset(train_rows), "cgm_train")
    holdout = _day_traces(days.subset(holdout_rows), "cgm_holdout")
    seeds = rng.integers(2**31 - 1, size=3).tolist()
    generated = {
        "motif_shuffle": generators.traces_motif_shuffle(real.values, seed=seeds[0]),
        "autoregressive": generators.traces_autoregressive(real.values, seed=seeds[1]),
        "noisy_copy": generators.traces_add_noise(
            real.values, sigma=NOISY_TRACE_SIGMA_MG_DL, seed=seeds[2]
        ),
    }
    candidates = {
        name: _day_traces(Traces.from_array(np.round(values, 1), name=name), name)
        for name, values in generated.items()
    }
    return align_traces(real, candidates, holdout=holdout)


def demo_files(out_dir: str | Path, *, kind: str = "tables", seed: int = 0) -> DemoFiles:
    """Write the demo's real, holdout and synthetic tables as CSV files to ``out_dir``.

    Tables are written with their cells as loaded (``<name>.csv``); traces in the wide format
    :func:`synthreview.io.traces.load_traces` reads back (``id``, ``start``, one ``HH:MM`` column
    per step). Each file's sha256 equals the digest the in-memory review of :func:`tables` or
    :func:`traces` reports for it.

    Parameters
    ----------
    out_dir : str or Path
        Created when missing; files of the same name are overwritten.
    kind : {"tables", "traces"}
    seed : int

    Returns
    -------
    DemoFiles
    """
    if kind not in ("tables", "traces"):
        raise ValueError(f"kind must be 'tables' or 'traces'; got {kind!r} instead")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    review = tables(seed) if kind == "tables" else traces(seed)
    if review.traces is not None:
        raws = {k: _trace_raw(t) for k, t in review.traces.items()}
        real_raw, holdout_raw = raws.pop("real"), raws.pop("holdout")
        names = {"real": "cgm_train", "holdout": "cgm_holdout"}
    else:
        raws = {k: t.raw for k, t in review.synthetic.items()}
        real_raw, holdout_raw = review.real.raw, review.holdout.raw
        names = {"real": review.real.name, "holdout": review.holdout.name}

    def write(raw: pd.DataFrame, stem: str) -> Path:
        path = out / f"{stem}.csv"
        path.write_bytes(_csv_bytes(raw))
        return path

    return DemoFiles(
        real=write(real_raw, names["real"]),
        holdout=write(holdout_raw, names["holdout"]),
        synthetic={name: write(raw, name) for name, raw in raws.items()},
    )
