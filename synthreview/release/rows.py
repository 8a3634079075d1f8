"""Evidence on every row of a review whose statistics were estimated on samples.

Above ``ReviewOptions.sample_rows`` rows the sections of a review see random samples of the
tables (:mod:`synthreview.sampling`), so their per-row results cover only the sampled rows,
and a near copy of a training row outside the real sample would go unseen. The audit of such a
review therefore takes its evidence from :func:`every_row_evidence`, which judges **every**
synthetic row against **every** training row:

* exact copies of training rows and of holdout records: row hashes of the analysed columns
  (:func:`synthreview.metrics.privacy.section.row_hashes`), O(n), over the full tables, with
  their holdout references (a holdout row that equals a training row, or another holdout row)
  over the full holdout;
* the authenticity ratio, the distance to and position of the nearest training row, and the
  columns to blame (:func:`synthreview.release.evidence.copy_evidence`) in the encoder space
  of the review: exact up to :data:`EXACT_PAIRS` row pairs, above through a faiss IVF index
  whose candidates are re-measured in float64, its 1-NN recall measured against the exact
  search on :data:`RECALL_CHECKED` queries during the run (below
  :data:`synthreview.neighbors.RECALL_FLOOR` it searches wider; see
  :func:`every_row_evidence` for what that recall means for the flags); what was measured is
  in :attr:`RowEvidence.search` and goes into the record;
* the α-level of every row in the evaluation embedding, against the centre distances of the
  real sample the embedding was fitted on.

The every-row searches run with their own engine (threads bounded). Inside a Dask cluster
(:func:`synthreview.engine.on_cluster`) the exact ones run there as blocks of training rows, one
per worker, merged exactly (:mod:`synthreview.distributed`), so the evidence equals the
in-process one; an approximate index is built and searched on the client.

The holdout reference of the calibrated rules is the holdout *sample* (its rows measured
against every training row, the same statistic as the synthetic rows'): at 50,000 rows its
1 % quantile rests on 500 rows. Not available on every row: the paper's authenticity flag
in the embedding (the audit refuses the ``paper`` mode on a sampled review) and the distance
to the nearest holdout row (``holdout_distance`` is left empty).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from synthreview.engine import Engine, available_cores, current_engine, using
from synthreview.errors import ConfigError
from synthreview.io.persons import person_ids, synthetic_person_ids
from synthreview.io.schema import Review
from synthreview.metrics.fidelity.alpha_beta import alpha_levels, distance_to
from synthreview.metrics.privacy.person import PersonLevel
from synthreview.metrics.privacy.section import DCRResult, row_hashes
from synthreview.release.evidence import CopyEvidence, copy_evidence
from synthreview.review import Report

__all__ = ["RowEvidence", "every_row_evidence"]

#: reference rows x query rows up to which the every-row searches are exact: the grouped
#: exact search of 100,000 x 100,000 encoded rows took as long as the IVF index with its
#: recall check (38 s on 2 cores), and an exact million x million pass about an hour
EXACT_PAIRS = 200_000 * 200_000
#: queries of each approximate every-row search checked against the exact search (each costs
#: an exact query over every training row)
RECALL_CHECKED = 2_000


@dataclass(frozen=True)
class RowEvidence:
    """Per-row evidence of every synthetic row (and of the holdout sample) for the audit.

    It offers what :func:`synthreview.release.table.evidence_frame` reads from a fidelity and
    a privacy result (``samples``, ``holdout_samples``, ``dcr``) and the encoder-space
    ``copies``, so the audit is built by the same code as a review on every row.

    Attributes
    ----------
    samples, holdout_samples : dict of str to ndarray
        ``alpha_level`` of every synthetic row and of every holdout-sample row.
    dcr : DCRResult
        Distances to the nearest training row (encoder space), its position, exact copies of
        training and holdout rows; ``synthetic_to_holdout``, ``nndr`` and the DCR share are not
        computed here (the share is a population statistic of the sampled review).
    copies : CopyEvidence
    holdout_rows : ndarray of int64
        Input positions of the holdout rows the reference was taken on.
    search : tuple of str
        What the approximate searches measured (``RecallCheck.describe``).
    person_level : PersonLevel or None
        A person-level review's (sampled by person): the sampled report's, with the person
        ids of every synthetic row and of every holdout-sample row, so the audit removes a
        person's rows together here too.
    """

    samples: dict[str, np.ndarray] = field(repr=False)
    holdout_samples: dict[str, np.ndarray] | None = field(repr=False)
    dcr: DCRResult = field(repr=False)
    copies: CopyEvidence = field(repr=False)
    holdout_rows: np.ndarray = field(repr=False)
    search: tuple[str, ...] = ()
    person_level: PersonLevel | None = None


def every_row_evidence(
    review: Review,
    report: Report,
    name: str,
    *,
    index: str = "auto",
    threads: int | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> RowEvidence:
    """The audit's evidence on every row of candidate ``name`` of a sampled review.

    Parameters
    ----------
    review : Review
        The loaded review (every row), whose samples ``report`` was estimated on.
    report : Report
        From :func:`synthreview.review.evaluate` with ``report.sampling`` set.
    name : str
        The candidate.
    index : {"auto", "exact", "ivf", "hnsw"}, default="auto"
        Search of the nearest training rows: ``"auto"`` is exact up to :data:`EXACT_PAIRS`
        training × synthetic rows and a faiss IVF index above (an exact million × million
        pass takes about an hour of two cores). An index's 1-NN recall is measured on
        :data:`RECALL_CHECKED` queries and filed (``search``); below the recall floor it keeps
        its result and says so (a search four times wider took 8 minutes at a million rows,
        the exact one about an hour). On encoded rows of 20 nearly independent mixed columns
        (the hardest case measured, ``benchmarks/bench_review_scale.py``), IVF's 1-NN recall
        was 0.65 at 100,000 rows, yet the calibrated authenticity flags at the 1 % level
        agreed with the exact search's on 99.55 % of rows and every planted verbatim copy was
        flagged: a copy sits in its source's IVF cell; the misses are rows far from every
        training row, and the holdout reference is searched the same way, so the calibration
        holds.
    threads : int, optional
        Bound on BLAS and faiss threads (default: the cores this process may use).
    progress : callable, optional
        ``progress(fraction, message)``, told each stage as it starts: encoding every row,
        training and filling the index, checking its recall, each search (minutes each at a
        million rows). The fraction stays 0, the start of the caller's step: how much of a
        search is left is not known.

    Returns
    -------
    RowEvidence
    """
    sampling, context = report.sampling, report.context
    if sampling is None:
        raise ConfigError("report must come from a review estimated on samples (report.sampling)")
    if context is None or context.encoder is None or context.embedding is None:
        raise ConfigError(
            "report must carry its fitted context (encoder and embedding) for the every-row "
            "audit; got a report without one"
        )
    if name not in review.synthetic:
        raise KeyError(f"name must be a candidate of the review {review.candidates}; got {name!r}")

    def stage(message: str) -> None:
        if progress is not None:
            progress(0.0, f"every-row audit of {name}: {message}")

    encoder, embedding = context.encoder, context.embedding
    cols = review.schema.analysed
    real, synthetic = review.real.frame, review.synthetic[name].frame
    stage(f"encoding {len(real):,} training and {len(synthetic):,} synthetic rows")
    real_x = encoder.transform(real, name="real")
    synth_x = encoder.transform(synthetic, name=name)
    holdout_rows = np.zeros(0, dtype=np.int64)
    hold_x = None
    if review.holdout is not None:
        holdout_rows = sampling.table("holdout").positions
        hold_x = encoder.transform(review.holdout.frame.iloc[holdout_rows], name="holdout")

    if index not in ("auto", "exact", "ivf", "hnsw"):
        raise ConfigError(f"index must be 'auto', 'exact', 'ivf' or 'hnsw'; got {index!r}")
    if index == "auto":
        index = "exact" if len(real) * len(synthetic) <= EXACT_PAIRS else "ivf"
    engine = Engine(
        threads=threads or available_cores(),
        approximate=None if index == "exact" else index,
        recall_sample=RECALL_CHECKED,
        exact_fallback=False,
        widen=1,
        # the exact searches of a review on a cluster are sharded there (neighbors.nearest)
        client=current_engine().client,
        on_stage=stage,
    )
    with using(engine):
        copies = copy_evidence(real_x, synth_x, hold_x, groups=encoder.groups)

    # α-levels against the real sample's centre distances (the fidelity section's reference)
    center = embedding.center
    real_cd = distance_to(context.embedded["real"], center)
    samples = {"alpha_level": alpha_levels(real_cd, distance_to(embedding.transform(synth_x),
                                                                center))}  # fmt: skip
    holdout_samples = None
    if hold_x is not None:
        hold_cd = distance_to(embedding.transform(hold_x), center)
        holdout_samples = {"alpha_level": alpha_levels(real_cd, hold_cd)}

    real_h, synth_h = row_hashes(real[cols]), row_hashes(synthetic[cols])
    exact = np.isin(synth_h, real_h)
    holdout_copy = in_train = repeated = None
    holdout_share = float("nan")
    if review.holdout is not None:
        hold_h = row_hashes(review.holdout.frame[cols])
        holdout_copy = np.isin(synth_h, hold_h)
        # the references over the whole holdout; the calibrated rules' rows are its sample
        holdout_share = float(np.isin(hold_h, real_h).mean())
        _, inverse, counts = np.unique(hold_h, return_inverse=True, return_counts=True)
        repeated = (counts[inverse.reshape(-1)] > 1)[holdout_rows]
        in_train = np.isin(hold_h[holdout_rows], real_h)
    d = copies.train_distance
    hold_d = copies.holdout_train_distance
    dcr = DCRResult(
        synthetic_to_train=d,
        nearest_train_index=copies.nearest_train_row,
        synthetic_to_holdout=None,
        exact_copy=exact,
        nndr=np.full(len(d), np.nan),
        holdout_to_train=hold_d,
        share_closer_to_train=float("nan"),
        share_rows=0,
        exact_copies=int(exact.sum()),
        exact_copy_share=float(exact.mean()) if len(exact) else float("nan"),
        holdout_exact_copy_share=holdout_share,
        synthetic_to_train_median=float(np.median(d)) if len(d) else float("nan"),
        holdout_to_train_median=float("nan") if hold_d is None else float(np.median(hold_d)),
        nndr_median=float("nan"),
        holdout_copy=holdout_copy,
        holdout_in_train=in_train,
        holdout_repeated=repeated,
    )
    exact = (
        f"exact nearest training row of every synthetic row ({len(synthetic):,}) and "
        f"holdout-sample row ({len(holdout_rows):,}) among {len(real):,}"
    )
    person = getattr(report.candidates[name].privacy, "person_level", None)
    if person is not None:
        held = None if review.holdout is None else review.holdout.frame[person.column]
        person = replace(
            person,
            synthetic_ids=synthetic_person_ids(review, name, person.column),
            holdout_ids=None if held is None else person_ids(held.iloc[holdout_rows]),
        )
    return RowEvidence(
        samples=samples,
        holdout_samples=holdout_samples,
        dcr=dcr,
        copies=copies,
        holdout_rows=holdout_rows,
        search=tuple(check.describe() for check in engine.recall_log) or (exact,),
        person_level=person,
    )
