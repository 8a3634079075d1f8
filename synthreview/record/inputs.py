"""The input files of an opened record: which ones a raw-row view needs, and whether they are here.

A record holds every number of a review but none of its rows. The views that draw rows (the PCA
of the encoded rows, closest pairs, a column's values, trace heatmaps) need the input files
themselves; :func:`match_inputs` accepts a loaded review only when every input file of the
record is there, byte for byte (its sha256 equal to the record's, in the same role).
:func:`recorded_review` then names the loaded candidates as the record names them, and
:func:`encoded_projection` draws the PCA a live run stores, from those rows alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from synthreview.encoding import TabularEncoder
from synthreview.io.schema import Review
from synthreview.metrics.fidelity.features import pca_projection
from synthreview.options import ReviewOptions
from synthreview.sampling import sample_review

__all__ = [
    "InputMatch",
    "encoded_projection",
    "has_holdout",
    "input_line",
    "inputs_frame",
    "match_inputs",
    "recorded_review",
]

#: the most rows per source the PCA view draws (as a live run stores it)
PCA_POINTS = 1500


def input_line(entry: Mapping[str, Any]) -> str:
    """One input file as a page names it: ``name (role, sha256 0123456789ab...)``."""
    return f"{entry.get('name')} ({entry.get('role')}, sha256 {str(entry.get('sha256'))[:12]}...)"


def has_holdout(inputs: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the review had a holdout table (a fresh real sample) among its ``inputs``."""
    return any(entry.get("role") == "holdout" for entry in inputs)


def _identity(entry: Mapping[str, Any]) -> tuple[Any, ...]:
    return (entry.get("role"), entry.get("name"), entry.get("sha256"))


def _loaded(review: Review) -> list[tuple[str, str, str]]:
    """``(role, sha256, candidate name or role)`` of every table of ``review``."""
    found = [("real", review.real.sha256, "real")]
    if review.holdout is not None:
        found.append(("holdout", review.holdout.sha256, "holdout"))
    found += [("synthetic", t.sha256, name) for name, t in review.synthetic.items()]
    return found


@dataclass(frozen=True)
class InputMatch:
    """How a loaded review supplies the input files of a record.

    Attributes
    ----------
    missing : tuple of dict
        The record's inputs (name, role, rows, columns, sha256) no loaded file equals.
    names : dict of str to str
        Loaded candidate name -> the record's name for the same file (equal sha256).
    extra : tuple of str
        Loaded candidates the record does not hold (a raw-row view ignores them).
    """

    missing: tuple[Mapping[str, Any], ...]
    names: Mapping[str, str]
    extra: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether every input file of the record is loaded (equal sha256, same role)."""
        return not self.missing

    def sentence(self) -> str:
        """What is missing, in words (empty when nothing is)."""
        if not self.missing:
            return ""
        return "not loaded (no file with this sha256): " + "; ".join(
            input_line(entry) for entry in self.missing
        )


def match_inputs(inputs: Sequence[Mapping[str, Any]], review: Review | None) -> InputMatch:
    """Which of a record's ``inputs`` (``ReviewRecord.inputs``) the loaded ``review`` supplies.

    A file counts only when a loaded table of the same role has the same sha256: a row view of
    an opened record never draws rows of other data than the numbers it shows.
    """
    loaded = _loaded(review) if review is not None else []
    missing: list[Mapping[str, Any]] = []
    names: dict[str, str] = {}
    used: set[str] = set()
    for entry in inputs:
        found = next(
            (
                key
                for role, digest, key in loaded
                if role == entry.get("role") and digest == entry.get("sha256") and key not in used
            ),
            None,
        )
        if found is None:
            missing.append(entry)
            continue
        used.add(found)
        if entry.get("role") == "synthetic":
            names[found] = str(entry.get("name"))
    extra = tuple(n for n in (review.candidates if review is not None else ()) if n not in names)
    return InputMatch(missing=tuple(missing), names=names, extra=extra)


def recorded_review(review: Review, match: InputMatch) -> Review:
    """``review`` restricted to the record's candidates, named as the record names them.

    Raises
    ------
    ValueError
        ``match`` says an input file is missing (a raw-row view must not draw then).
    """
    if not match.ok:
        raise ValueError(f"match must supply every input file of the record; {match.sentence()}")
    synthetic = {match.names[n]: t for n, t in review.synthetic.items() if n in match.names}
    traces = None
    if review.traces is not None:
        traces = {
            match.names.get(key, key): value
            for key, value in review.traces.items()
            if key in ("real", "holdout") or key in match.names
        }
    return replace(review, synthetic=synthetic, traces=traces)


def encoded_projection(review: Review, *, options: ReviewOptions, seed: int) -> pd.DataFrame:
    """The PCA of the encoded rows (fitted on real only) that a live run stores for the
    Fidelity page, from a review's rows: the same samples, encoder and points.

    Parameters
    ----------
    review : Review
        A table review (the record's inputs, :func:`recorded_review`).
    options : ReviewOptions
        The record's options (``sample_rows``, ``person`` choose the samples).
    seed : int
        The record's seed.
    """
    if review.kind != "table":
        raise ValueError(f"review must be a table review; got kind {review.kind!r} instead")
    sampled, _ = sample_review(review, options.sample_rows, seed=seed, person=options.person)
    encoder = TabularEncoder(sampled.schema).fit(sampled.real.frame)
    sources = {"real": sampled.real.frame}
    if sampled.holdout is not None:
        sources["holdout"] = sampled.holdout.frame
    sources.update({name: table.frame for name, table in sampled.synthetic.items()})
    encoded = {name: encoder.transform(frame, name=name) for name, frame in sources.items()}
    others = {name: x for name, x in encoded.items() if name != "real"}
    return pca_projection(encoded["real"], others, max_points=PCA_POINTS, seed=seed)


def inputs_frame(inputs: Sequence[Mapping[str, Any]], match: InputMatch) -> pd.DataFrame:
    """The record's input files as the Data page lists them, each with whether it is loaded."""
    missing = {_identity(entry) for entry in match.missing}
    return pd.DataFrame(
        [
            {
                "name": entry.get("name"),
                "role": entry.get("role"),
                "rows": entry.get("rows"),
                "columns": entry.get("columns"),
                "sha256": str(entry.get("sha256")),
                "loaded (same sha256)": "no" if _identity(entry) in missing else "yes",
            }
            for entry in inputs
        ]
    )
