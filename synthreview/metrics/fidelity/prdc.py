"""Precision, recall, density and coverage (Naeem et al. 2020), without an n × n matrix.

Baselines for the fidelity section (Alaa et al. 2022, §5 and appendix "density and
coverage", k = 5). With B(x, r) a ball and NND_k(x) the distance from x to its k-th nearest
*other* row of its own set,

* precision = share of synthetic j with ‖j − i‖ < NND_k(i) for some real i;
* recall    = share of real i with ‖i − j‖ < NND_k(j) for some synthetic j;
* density   = 1/(k m) Σ_j #{real i : ‖j − i‖ < NND_k(i)};
* coverage  = share of real i whose nearest synthetic row is closer than NND_k(i).

These equal ``prdc.compute_prdc`` (the authors' package; its radius is the (k+1)-th smallest
entry of a distance row that includes the zero self-distance, i.e. the k-th other neighbour,
and every comparison is strict), checked to 1e-9 in the tests.

Algorithm: the reference package materialises three n × n matrices (~30 GB at 50k). Here the
radii NND_k come from one exact k-NN search per set (:func:`synthreview.neighbors.nearest`)
and everything else from one grouped pass of the synthetic rows against the real rows
(:func:`synthreview.metrics.fidelity.scan.tally`): per synthetic row the number of real balls
holding it (precision, density), per real row whether a synthetic row is inside its ball
(coverage) and whether it lies inside some synthetic row's ball (recall). Memory is O(n·k);
at 50k × 50k × 25 the whole computation took 5.7–7.2 s on the 2-core reference machine; on the
fidelity bench's 50k × 50k × 20 embedding, 2 threads at load 6-8, 4.1-4.6 CPU-s with the fused
stage one of :mod:`synthreview.grouped_search` against 5.4-5.6 before it (2026-11-28).
:func:`synthreview.metrics.fidelity.section.evaluate_fidelity` shares that pass with authenticity
and
β-Recall and calls :func:`prdc_from_tally` directly.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from synthreview.errors import UndefinedMetricWarning
from synthreview.metrics.fidelity.alpha_beta import check_embedded
from synthreview.metrics.fidelity.scan import Tally, real_index, tally
from synthreview.neighbors import nearest
from synthreview.results import to_jsonable


def neighbour_radii(x: np.ndarray, *, k: int = 5) -> np.ndarray:
    """NND_k: distance from every row of ``x`` to its k-th nearest other row of ``x``."""
    return nearest(x, x, k=k, exclude_self=True).distances[:, k - 1]


@dataclass(frozen=True)
class PRDC:
    """Precision, recall, density and coverage (Naeem et al. 2020).

    Attributes
    ----------
    precision, recall, coverage : float
        In [0, 1]; higher is better.
    density : float
        In [0, m/k·…]; about 1 when the distributions match, above 1 when synthetic rows crowd
        the dense regions of real.
    k : int
    """

    precision: float
    recall: float
    density: float
    coverage: float
    k: int = 5

    def to_dict(self) -> dict[str, float | int | None]:
        """JSON-ready values."""
        return to_jsonable(
            {
                "precision": self.precision,
                "recall": self.recall,
                "density": self.density,
                "coverage": self.coverage,
                "k": self.k,
            }
        )


def prdc_from_tally(found: Tally, *, k: int) -> PRDC:
    """PRDC from one :func:`~synthreview.metrics.fidelity.scan.tally` pass of the synthetic
    rows with ``ball_radii`` = the real NND_k and ``own_radii`` = the synthetic NND_k."""
    m = len(found.ball_counts)
    return PRDC(
        precision=float((found.ball_counts > 0).mean()),
        recall=float(found.recalled.mean()),
        density=float(found.ball_counts.sum() / (k * m)),
        # the nearest synthetic row is inside the ball iff any synthetic row is
        coverage=float(found.covered.mean()),
        k=k,
    )


def prdc(real: np.ndarray, synthetic: np.ndarray, *, k: int = 5) -> PRDC:
    """Precision, recall, density and coverage of ``synthetic`` against ``real``.

    Parameters
    ----------
    real : ndarray of shape (n, d)
    synthetic : ndarray of shape (m, d)
        Any sizes; rows in any order (every value is invariant to row order).
    k : int, default=5
        Neighbourhood size (Naeem et al. 2020; Alaa et al. 2022 appendix use 5).

    Returns
    -------
    PRDC
        All four ``nan`` with an :class:`UndefinedMetricWarning` when either set has ≤ k rows.
    """
    real_x = check_embedded(real, "real", min_rows=0)
    synth_x = check_embedded(synthetic, "synthetic", d=real_x.shape[1], min_rows=0)
    if k < 1:
        raise ValueError(f"k must be a positive integer; got {k}")
    if len(real_x) <= k or len(synth_x) <= k:
        warnings.warn(
            f"PRDC with k={k} needs more than {k} real and synthetic rows; got "
            f"{len(real_x)} and {len(synth_x)}",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        return PRDC(np.nan, np.nan, np.nan, np.nan, k=k)
    real_radii = neighbour_radii(real_x, k=k)
    synth_radii = neighbour_radii(synth_x, k=k)
    found = tally(
        real_index(real_x, real_radii),
        synth_x,
        ball_radii=real_radii,
        own_radii=synth_radii,
    )
    return prdc_from_tally(found, k=k)
