"""The stage-one register kernels (C, ``synthreview/fused_minima.c``) against float64 brute force.

Every kernel this CPU runs is checked (AVX-512 and AVX2 on an AVX-512 machine), on shapes that
leave partial register blocks: row counts not a multiple of the block's rows, group widths not a
multiple of its columns, padding columns, uneven groups.
"""

import itertools
import os
import platform
from pathlib import Path

import numpy as np
import pytest

from synthreview import grouped_search
from synthreview.engine import limited_threads
from synthreview.grouped_search import (
    GroupedReference,
    kernel_layout,
    kernel_minima,
    kernel_self_minima,
)

#: the kernels this CPU runs (none where the extension is not built)
LEVELS = grouped_search.fused_minima.levels() if grouped_search.fused_minima else ()
kernels = pytest.mark.parametrize(
    "kernel",
    [pytest.param(k, marks=pytest.mark.skipif(k not in LEVELS, reason=f"no {k} here"))
     for k in ("avx512f", "avx2")],
)  # fmt: skip


def _layout(reference, bounds):
    """``padded`` as GroupedReference lays it out ([−2r; |r|²], groups side by side, each
    ``size`` columns, padding columns 0 with norm PAD), and ``size``."""
    size = int(np.diff(bounds).max())
    padded = np.zeros((reference.shape[1] + 1, (len(bounds) - 1) * size), dtype=np.float32)
    padded[-1] = grouped_search.PAD
    for g, (a, b) in enumerate(itertools.pairwise(bounds)):
        padded[:-1, g * size : g * size + b - a] = -2.0 * reference[a:b].T
        padded[-1, g * size : g * size + b - a] = (reference[a:b].astype(np.float64) ** 2).sum(1)
    return padded, size


def _brute(query, reference, bounds):
    """float64 d² from every query to the nearest row of every group."""
    q, r = query.astype(np.float64), reference.astype(np.float64)
    d2 = ((q[:, None, :] - r[None, :, :]) ** 2).sum(-1)
    return np.stack([d2[:, a:b].min(axis=1) for a, b in itertools.pairwise(bounds)], axis=1)


@kernels
@pytest.mark.parametrize("dim", [1, 5, 27])
def test_kernel_minima_equal_brute_force_with_ties_and_duplicates(kernel, dim):
    # small integers: every float32 product and sum is exact, so the minima must be equal;
    # groups of 37, 40, 1 and 90 rows (widths 96 after padding: partial blocks of columns),
    # 53 queries (partial blocks of rows)
    rng = np.random.default_rng(0)
    bounds = np.array([0, 37, 77, 78, 168])
    reference = rng.integers(-3, 4, size=(168, dim)).astype(np.float32)
    reference[[5, 100]] = reference[4]  # duplicates inside a group and across groups
    query = rng.integers(-3, 4, size=(53, dim)).astype(np.float32)
    query[:3] = reference[[4, 77, 167]]  # at distance 0 from rows (the one-row group too)
    padded, size = _layout(reference, bounds)
    got = kernel_minima(query, kernel_layout(padded, size), kernel=kernel)
    assert got.dtype == np.float32 and got.shape == (53, 4)
    qn = (query.astype(np.float64) ** 2).sum(1)[:, None]
    np.testing.assert_array_equal(got, _brute(query, reference, bounds) - qn)


@kernels
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_kernel_self_minima_equal_brute_force_both_directions(kernel, threads):
    # the self minima: tile (A, B ≥ A) gives A's rows' minima over B and B's over A; integer
    # rows, uneven groups (one of one row), duplicates across groups
    rng = np.random.default_rng(3)
    bounds = np.array([0, 6, 12, 13, 31, 40])
    reference = rng.integers(-3, 4, size=(40, 5)).astype(np.float32)
    reference[[7, 25]] = reference[1]
    padded, size = _layout(reference, bounds)
    norms = (reference.astype(np.float64) ** 2).sum(1).astype(np.float32)
    got = kernel_self_minima(
        reference, norms, kernel_layout(padded, size), bounds, kernel=kernel, threads=threads
    )
    assert got.dtype == np.float32 and got.shape == (40, 5)
    np.testing.assert_array_equal(got, _brute(reference, reference, bounds))


@pytest.mark.skipif(len(LEVELS) < 2, reason="needs two kernels on this CPU")
def test_every_kernel_gives_the_same_bits_within_the_float32_bound():
    # random rows far from the origin: rounding everywhere; each value is the same sequence
    # of operations in every kernel, so AVX-512 and AVX2 agree bit for bit, and within the
    # (d + 3) units of |q|² + |r|² that the search's margins double
    rng = np.random.default_rng(5)
    dim = 25
    bounds = np.array([0, 400, 799, 1201, 1500])
    reference = (rng.normal(size=(1500, dim)) + 3.0).astype(np.float32)
    query = (rng.normal(size=(301, dim)) + 3.0).astype(np.float32)
    padded, size = _layout(reference, bounds)
    layout = kernel_layout(padded, size)
    norms = (reference.astype(np.float64) ** 2).sum(1).astype(np.float32)
    one = {k: kernel_minima(query, layout, kernel=k) for k in LEVELS}
    own = {k: kernel_self_minima(reference, norms, layout, bounds, kernel=k) for k in LEVELS}
    for k in LEVELS[1:]:
        np.testing.assert_array_equal(one[k], one[LEVELS[0]])
        np.testing.assert_array_equal(own[k], own[LEVELS[0]])
    eps = np.finfo(np.float32).eps
    qn = (query.astype(np.float64) ** 2).sum(1)
    rn = (reference.astype(np.float64) ** 2).sum(1)
    bound = (dim + 3) * eps * (qn.max() + rn.max())
    np.testing.assert_allclose(
        one[LEVELS[0]] + qn[:, None], _brute(query, reference, bounds), rtol=0, atol=bound
    )
    bound = (dim + 3) * eps * 2 * rn.max()
    np.testing.assert_allclose(
        own[LEVELS[0]], _brute(reference, reference, bounds), rtol=0, atol=bound
    )


@pytest.mark.skipif(len(LEVELS) < 2, reason="needs two kernels on this CPU")
def test_neighbours_are_the_same_with_every_kernel(monkeypatch):
    rng = np.random.default_rng(9)
    reference = (np.round(rng.normal(size=(700, 6)), 1) + 50.0).astype(np.float32)
    reference[[40, 300]] = reference[7]
    query = (np.round(rng.normal(size=(250, 6)), 1) + 50.0).astype(np.float32)
    results = []
    for kernel in LEVELS:
        monkeypatch.setattr(grouped_search, "KERNEL", kernel)
        grouped = GroupedReference(reference, n_groups=13)
        with limited_threads(2):
            near = grouped.knn(query, 4, exclude_self=False)
            results.append((near, grouped.knn(reference, 4, exclude_self=True)))
    for (a, b), (c, d) in itertools.pairwise(results):
        for x, y in ((a, c), (b, d)):
            np.testing.assert_array_equal(x[0], y[0])
            np.testing.assert_array_equal(x[1], y[1])


def test_bad_arguments_are_refused():
    if grouped_search.fused_minima is None:
        pytest.skip("the stage-one C kernels are not built (pip install -e .)")
    layout = np.zeros((2, 4, 16), np.float32)
    out = np.empty((5, 2), np.float32)
    with pytest.raises(ValueError, match="query"):
        grouped_search.fused_minima.minima(1, np.zeros((5, 2), np.float32), 5, 3, layout, 16,
                                           0, 2, out, 2)  # fmt: skip
    with pytest.raises(ValueError, match="kernel level 7"):
        grouped_search.fused_minima.minima(7, np.zeros((5, 3), np.float32), 5, 3, layout, 16,
                                           0, 2, out, 2)  # fmt: skip


def _cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


@pytest.mark.skipif(
    os.environ.get("SYNTHREVIEW_NO_KERNEL") == "1"
    or platform.machine() not in ("x86_64", "AMD64")
    or not {"avx2", "fma"} <= _cpu_flags(),
    reason="no AVX2 + FMA here, or SYNTHREVIEW_NO_KERNEL=1 (a machine without a C compiler)",
)
def test_the_kernels_are_built_where_the_cpu_runs_them():
    # CI installs the checkout (requirements-dev.txt: -e .), which builds the C extension; a
    # missing build would silently leave the kernel tests skipped and stage one on faiss
    assert grouped_search.KERNEL is not None, "run `pip install -e .` to build the kernels"


@pytest.mark.parametrize(
    ("cap", "want"),
    [("", LEVELS[0] if LEVELS else None), ("AVX512F", LEVELS[0] if LEVELS else None),
     ("avx2", "avx2" if "avx2" in LEVELS else None), ("NONE", None)],
)  # fmt: skip
def test_the_simd_level_variable_caps_the_kernel(monkeypatch, cap, want):
    # the benchmarks' --isa avx2 sets it with faiss's, numpy's and torch's variables
    monkeypatch.setenv(grouped_search.SIMD_LEVEL_VARIABLE, cap)
    assert grouped_search.best_kernel() == want


def test_a_bad_simd_level_is_refused(monkeypatch):
    monkeypatch.setenv(grouped_search.SIMD_LEVEL_VARIABLE, "SSE2")
    with pytest.raises(ValueError, match="SYNTHREVIEW_SIMD_LEVEL must be AVX512F, AVX2 or NONE"):
        grouped_search.best_kernel()
