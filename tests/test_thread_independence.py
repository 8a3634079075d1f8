"""A report does not depend on how many threads computed it (same inputs + seed -> same bytes).

The review bounds BLAS, OpenMP and torch threads (``threads=``, default: the cores of the
machine), so the same review runs with 2 threads on one machine and 16 on another, and with
one thread per Dask worker. Products and reductions whose rounding depends on the thread
count (a BLAS dot or matrix product split across threads, an OpenMP k-means) must not reach
the report: this computes the demo review with one, two and three threads and compares every
number (three: a split that is not the machine's core count, and not a power of two).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from synthreview import demo
from synthreview.options import ReviewOptions
from synthreview.review import evaluate

pytestmark = pytest.mark.slow  # three whole reviews, one per thread count


@pytest.fixture(scope="module")
def review():
    # 3,000 rows: large enough that OpenBLAS splits the attacks' products across threads
    full = demo.tables(seed=0, n_train=3000)
    return replace(full, synthetic={"copula": full.synthetic["copula"]})


@pytest.mark.parametrize("sections", [("fidelity", "privacy"), ("utility",)])
def test_one_two_and_three_threads_give_the_same_report(review, sections):
    options = ReviewOptions(n_bootstrap=50)
    reports = [
        json.dumps(
            evaluate(review, sections=sections, options=options, seed=0, threads=t).to_dict(),
            sort_keys=True,
        )
        for t in (1, 2, 3)
    ]
    assert reports[0] == reports[1] == reports[2]
