"""Exact k-NN and radius search for large sets through per-group minima.

The reference is split into G contiguous groups of about ``GROUP_ROWS`` rows. Stage one gives,
for every query, the distance to the nearest row of each group; stage two searches only the
groups that can hold an answer:

* **k nearest.** Let t be the k-th smallest group minimum of a query: k rows (those minima)
  lie within t, so the k nearest rows do too, and they sit in groups whose minimum is within
  t (about k groups).
* **Within a per-query radius.** A row within the radius lies in a group whose minimum is
  within it (at most as many groups as pairs).
* **Within a per-reference radius** (PRDC's balls around real rows): a group can hold a pair
  only if its minimum is within the largest radius of the group; rows are grouped in order
  of their radius (``order=``) so that this bound is tight.
* **Nearest row**: the special case t = the smallest group minimum.

Stage one on the CPU runs in C register kernels where they are built
(``synthreview/fused_minima.c``, compiled at install by ``setup.py``; :data:`KERNEL` names the one
running, AVX-512F or AVX2 + FMA, chosen at run time): a block of query rows × reference columns is
held in vector registers, each value built by one fused multiply-add per dimension, and the minimum
over each group is taken there, so no product is written out and there is no per-call cost
(:func:`kernel_minima`). A set searched among itself (the k-NN radii of real and synthetic rows)
takes each pair of groups once for both directions (:func:`kernel_self_minima`: its values are
symmetric, and the kernel keeps the row minima and the column minima of each register block), half
the products. Where the kernels are not built (no C compiler at install) or the CPU has neither
instruction set, stage one fuses product and minimum in faiss where it can, with the same results:
:func:`fused_group_distances` makes one exact faiss 1-NN call per group for a chunk of queries,
and faiss's k = 1 search takes each block's minima while its products are still in cache (its
register kernel at the few dimensions it has one for, else BLAS blocks reduced by its SIMD
code), which numpy cannot (its products are written out and read back for the minimum: 2.8× the
CPU of faiss's 1-NN per distance at 50k × 20 columns, against 1.0-1.2× for the per-group calls).
faiss takes that path only when a call's rows × d exceed its ``distance_compute_blas_threshold``
(128,000 in faiss 1.15: 6,401 rows at 20 columns; a pair-by-pair loop 10-15× slower below it),
and the search uses it on up to ``FUSED_MAX_DIM`` columns (past them measured no faster); a smaller
batch (:func:`fused_rows`), a wider table, or a table narrow enough to need more than
``FUSED_MAX_ROWS`` rows per call takes numpy's tiles: the groups laid out padded to one size,
side by side, and :func:`group_minima` takes the products ``[q, 1] · [−2r, |r|²]`` one
cache-sized tile at a time (``TILE_QUERIES`` queries × the groups that fit ``TILE_BYTES``) and
reduces each tile to its group minima at once. There a set searched among itself (the k-NN radii
of real and synthetic rows) takes each tile once for both directions (:func:`self_group_minima`:
d² is symmetric, so the row minima of group A against groups B ≥ A and the column minima are
both kept), half the products of that pass; the fused stage one's full pass costs no more than
that half (the 50k real radii, alternating runs: 1.33-1.46 CPU-s against 1.35-1.51), so the self
minima run only where the fused stage one cannot. The threads of the running thread bound
(:func:`blas_threads`) take query chunks (stage one) and (group, block) items (stage two), each
calling BLAS single-threaded: multi-threaded BLAS calls on 16 MB tiles spun and waited on the
shared machine. Queries go through in batches of ``QUERY_BATCH`` rows: the group minima of a
batch are reduced to candidate (query, group) pairs at once, so memory is O(batch × groups) for
stage one plus O(n·k) candidates, never O(n × groups) (the self minima, n × groups float32, only
up to ``SELF_MINIMA_BYTES``). With an :class:`~synthreview.engine.Engine` on a CUDA device stage
one runs on the GPU through torch (TF32 off); stage two and the float64 re-check stay on the
CPU, so the neighbours are the CPU's.

One :meth:`GroupedReference.pair_blocks` pass answers all of these at once and yields the
pairs block by block, so consumers reduce them as they come (:class:`TopK` for neighbours,
counts and flags in :func:`synthreview.metrics.fidelity.scan.tally`) and memory stays at one
block even when thousands of exact duplicates tie within every bound.

Exactness. Both stages rank in float32 (BLAS, like faiss). The float32 error of ``|q|² + |r|² −
2 q·r`` is at most (d + 3) units of roundoff of ``|q|² + |r|²`` in any order of summation; rows
are centred on the reference mean first (embeddings sit far from the origin, where that error
exceeds the gaps between neighbours), every bound is widened by twice that error, and every pair
inside is re-measured in float64 from the caller's coordinates and ranked by (distance, index).
faiss's fused minima take ``|q|²`` and ``|r|²`` in float32 too, (2d + 4) units at most, so with
them the margin is twice (2d + 4) + (d + 3) units; the 50k fidelity bench gives byte-identical
results with either stage one. The register kernels keep the (d + 3)-unit bound (a unit: float32's
eps × (|q|² + |r|²)): :func:`kernel_minima` starts at the float32 |r|² (rounded once from float64)
and adds one fused multiply-add ``q_k · (−2 r_k)`` per dimension, the same d + 1 terms as the
product ``[q, 1] · [−2r, |r|²]``, whose terms sum to at most 2 (|q|² + |r|²) in absolute value:
d roundings, each at most eps/2 of a running sum of at most that, so one unit each, plus half a
unit from rounding |r|², within (d + 1/2) units (FMA rounds once where a product then a sum
round twice, so it only tightens the bound of BLAS's products);
:func:`kernel_self_minima` starts at fl(|x_i|² + |x_j|²) and adds d such terms, d + 1 roundings
and the two norms' own: within (d + 3/2) units. So their margin is numpy's: twice (d + 3) units,
for the minimum and for stage two. Every value is the same sequence of operations in either
instruction set and whatever the block shape or thread, so the minima are the same bits; the
50k and 20k fidelity benches give byte-identical reports and per-row samples with the kernels
and without them. faiss's own 5-NN on the 50k benchmark embedding got the 5th
neighbour wrong for 203 rows (near-ties 3e-5 apart); this search got none wrong against float64
brute force.

Measured (issue 26; 50k real × 50k synthetic × 50k holdout, One-Class embedding to 25
dimensions, the whole fidelity suite with 200 bootstrap resamples, against the four exact
faiss 1-NN searches it needs, timed in the same process; shared 2-core AMD EPYC with AVX-512,
OpenBLAS SkylakeX kernel). One 10k × 50k stage-one pass on one core: the products alone
0.30 CPU-s, faiss's fused 1-NN 0.28-0.30, products plus the separate min-reduce 0.41 (numpy
cannot fuse the minimum into the product; tile shapes from 64 to 4096 rows measured alike).
So the one-directional passes cost about 1.4 faiss passes, the self passes about 0.8.
``benchmarks/bench_fidelity.py`` at 30k rows, four alternating runs at load 3-4: suite
3.5-3.6 CPU-s against 4.0-4.2 before the self minima (floor 2.0-2.2 CPU-s), wall ratio
1.6-1.7 against 2.0-2.1; at 50k, load 1.1-1.4, before: 2.03-2.15× the floor in wall time.

Measured again (issue 39 item 6, 2026-11-28; the same kind of machine, numpy's OpenBLAS on the
Haswell kernel as ``OPENBLAS_CORETYPE`` is set there; ``bench_fidelity.py --rows 50000``, 20
columns, 2 threads, load 3.8-4.6, back to back with main): the fused stage one takes the suite
from 7.64-7.73 to 5.95-6.01 CPU-s, 2.17-2.21 → 1.59-1.70 times its four faiss passes in CPU and
2.03-2.13 → 1.52-1.61 in wall time, every number and neighbour the same (in wall time 2.03-2.30
in two runs where the floor had both cores: ``bench_fidelity.py``'s docstring). Where the rest
goes (one thread, load 4-11, CPU-s of the whole suite, 6.05 in all): faiss's per-group calls
3.74 (4 passes, about one floor each: faiss spends about 55 ns per query row on each call, 40 %
of a 400-row group's call at 20 columns, against 0.21 ns per distance), stage two 0.75-1.0
(about 2,300 candidate queries per group; its numpy products and comparisons cost about 1.5 ns
per (query, row), 7× faiss's per distance), the two 200-resample bootstraps 0.45, the k-NN
merges 0.2. Larger groups trade one for the other (600 and 800 rows measured slower than 400:
stage one's per-call cost falls as stage two's rows grow).

Measured with the register kernels (issue 39 item 6, 2026-11-28, commit b6dcaec; the same machine;
``benchmarks/bench_stage_one.py``, one thread, 10k × 50k at 25 dimensions, load 2.5-3.7, two runs):
the AVX-512 kernel 0.20 ns per distance against faiss's whole-set 1-NN 0.28-0.35 and its per-group
calls 0.36-0.42 in the same process (numpy's tiles 0.67, the AVX2 kernel 0.38); the 50k self pass
0.29-0.34 CPU-s (AVX2 0.50-0.52) against faiss's whole-set 1-NN of the set among itself 0.75-0.89.
So the radii passes cost about 0.4 of a floor pass and the one-directional passes 0.6-0.7, where
faiss's per-group calls cost 1.2 each. ``bench_fidelity.py --rows 50000`` under the
bench lock, alternating with main 3b154d8 (faiss's per-group stage one), 2 threads, load
1.6-3.9: suite 2.03 / 2.06 s wall, 3.27 / 3.19 CPU-s, ratio 1.32 / 1.30 wall, 1.07 / 1.02 CPU
(main: 3.38 / 3.56 s wall, 5.88 / 6.01 CPU-s, ratio 1.99 / 2.11 wall, 1.74 / 1.80 CPU); the report
and the per-row samples byte-identical to main's (sha256 of both at 50k with 2 threads and 1, and
at 20k).
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import faiss
import numpy as np
import torch

from synthreview.engine import blas_threads, current_engine, single_threaded

try:  # the C register kernels (setup.py builds them at install; optional there)
    from synthreview import fused_minima
except ImportError:  # not built (no compiler at install): stage one keeps faiss / numpy
    fused_minima = None

#: reference rows per group: stage one does not depend on it, stage two grows with it and
#: the candidate lists shrink with it; 300–800 rows per group measured best at 50k
GROUP_ROWS = 400
#: query rows per stage-two block: bounds the working memory of one block
BLOCK_ROWS = 8192
#: stage-one tile: TILE_QUERIES queries × TILE_GROUPS groups (None: as many whole groups as
#: fit TILE_BYTES of float32 products), so each product is reduced while it is still in the
#: core's cache (L2 1 MiB, L3 32 MiB on the reference machine); there 256-1024 × 1-8 groups
#: of 400 (0.4-3 MB) measured alike, 512 × 20 groups (16 MB) 20-25 % slower
TILE_QUERIES = 256
TILE_GROUPS: int | None = None
TILE_BYTES = 1 << 21
#: query rows whose group minima are computed before they are reduced to candidates
STAGE_ONE_ROWS = 2048
#: fused stage one (:func:`fused_group_distances`) only while a chunk of queries that reaches
#: faiss's BLAS / fused path has at most this many rows (memory: rows × groups float32 a thread)
FUSED_MAX_ROWS = 16384
#: fused stage one only up to this many columns: faiss 1.15's per-group calls measured 0.48-0.58×
#: the CPU of numpy's tiles at 8-32 columns (20k rows) but 1.01-1.04× at 33-200, where its k = 1
#: path changes (about twice the time per distance from 32 to 33 columns)
FUSED_MAX_DIM = 32
#: query rows per batch: candidates of one batch are held at once, and stage two loops over
#: the groups once per batch (at 1M rows: 16 batches × 2500 groups)
QUERY_BATCH = 65536
#: a self search (the reference's own rows as queries, the radii passes) takes each product
#: tile once for both directions while its (n × groups) float32 minima fit in this many bytes
SELF_MINIMA_BYTES = 1 << 28
#: the C extension's number for each kernel
_KERNEL_LEVELS = {"avx512f": 2, "avx2": 1}
#: caps the kernels' instruction set, as FAISS_SIMD_LEVEL caps faiss's: AVX512F, AVX2 or NONE
#: (the benchmarks' ``--isa avx2`` sets it with the other libraries' variables)
SIMD_LEVEL_VARIABLE = "SYNTHREVIEW_SIMD_LEVEL"


def best_kernel() -> str | None:
    """The best kernel this CPU runs within :data:`SIMD_LEVEL_VARIABLE`'s cap (None: none)."""
    cap = os.environ.get(SIMD_LEVEL_VARIABLE, "").strip().lower() or "avx512f"
    if cap not in (*_KERNEL_LEVELS, "none"):
        raise ValueError(f"{SIMD_LEVEL_VARIABLE} must be AVX512F, AVX2 or NONE; got {cap!r}")
    if fused_minima is None or cap == "none":
        return None
    ok = [k for k in fused_minima.levels() if _KERNEL_LEVELS[k] <= _KERNEL_LEVELS[cap]]
    return ok[0] if ok else None


#: the register kernel stage one runs on the CPU (:func:`kernel_minima`,
#: :func:`kernel_self_minima`): "avx512f" or "avx2", the best this CPU runs; None where the C
#: extension is not built, the CPU has neither or the cap says NONE (then faiss's per-group
#: calls and numpy's tiles, with the same results)
KERNEL: str | None = best_kernel()
#: last-row entry of a padding column: [q, 1] · [0, PAD] = PAD, larger than any limit
PAD = np.float32(np.finfo(np.float32).max / 4)
#: index of an empty :class:`TopK` slot (distance inf): after every row in (distance, index)
_EMPTY = np.iinfo(np.int64).max


def group_minima(
    q_aug: np.ndarray,
    padded: np.ndarray,
    size: int,
    *,
    threads: int = 1,
    tile_queries: int | None = None,
    tile_groups: int | None = None,
) -> np.ndarray:
    """Minimum of ``q_aug @ padded`` over every ``size`` consecutive columns (CPU, float32).

    The product is taken one cache-sized tile at a time (``tile_queries`` rows ×
    ``tile_groups`` groups; defaults :data:`TILE_QUERIES` and :data:`TILE_GROUPS`) and each
    tile is reduced at once, the product-then-reduce of faiss's flat 1-NN. ``threads``
    threads (this one and helpers) take query tiles one by one, each calling BLAS
    single-threaded: one large multi-threaded BLAS call per tile spins and waits on a busy
    machine, many small single-threaded ones do not.

    Parameters
    ----------
    q_aug : ndarray of shape (b, d + 1), float32
    padded : ndarray of shape (d + 1, G·size), float32
    size : int
        Columns per group.
    threads : int, default=1
    tile_queries, tile_groups : int, optional
        Tile shape; the result does not depend on it. Default tile_groups: as many groups as
        fit :data:`TILE_BYTES`.

    Returns
    -------
    ndarray of shape (b, G), float32
    """
    n, n_groups = len(q_aug), padded.shape[1] // size
    out = np.empty((n, n_groups), dtype=np.float32)
    tile_queries = tile_queries or TILE_QUERIES
    tile_groups = tile_groups or TILE_GROUPS or max(1, TILE_BYTES // (4 * tile_queries * size))

    def worker() -> Callable[[int], None]:
        buffer = np.empty(tile_queries * tile_groups * size, dtype=np.float32)

        def tile(s: int) -> None:
            rows = q_aug[s : s + tile_queries]
            for g0 in range(0, n_groups, tile_groups):
                g1 = min(n_groups, g0 + tile_groups)
                prod = buffer[: len(rows) * (g1 - g0) * size].reshape(len(rows), -1)
                np.matmul(rows, padded[:, g0 * size : g1 * size], out=prod)
                np.min(
                    prod.reshape(len(rows), g1 - g0, size),
                    axis=2,
                    out=out[s : s + len(rows), g0:g1],
                )

        return tile

    with single_threaded("blas"):
        _take_one_by_one(range(0, n, tile_queries), worker, threads)
    return out


def group_minima_torch(q_aug: torch.Tensor, padded: torch.Tensor, size: int) -> torch.Tensor:
    """Minimum of ``q_aug @ padded`` over every ``size`` consecutive columns (any device).

    ``q_aug`` is (b, d + 1), ``padded`` (d + 1, G·size); returns (b, G). Tiles bound the
    working memory to about 2²⁷ float32 (512 MB).
    """
    n_groups = padded.shape[1] // size
    out = torch.empty((len(q_aug), n_groups), dtype=torch.float32, device=q_aug.device)
    rows = max(1, min(len(q_aug), 8192))
    groups = max(1, (1 << 27) // (rows * size))
    for s in range(0, len(q_aug), rows):
        for g0 in range(0, n_groups, groups):
            g1 = min(n_groups, g0 + groups)
            prod = q_aug[s : s + rows] @ padded[:, g0 * size : g1 * size]
            out[s : s + rows, g0:g1] = prod.view(len(prod), g1 - g0, size).amin(dim=2)
    return out


def fused_rows(dim: int) -> int | None:
    """Fewest query rows per faiss call that reach its BLAS / fused path, or None past
    :data:`FUSED_MAX_ROWS` or :data:`FUSED_MAX_DIM`.

    faiss takes its BLAS / fused path only when ``rows × dim`` exceeds
    ``distance_compute_blas_threshold`` (128,000 in faiss 1.15; ``rows`` alone exceeding 20 in
    older releases); below it a pair-by-pair loop runs 10-15× slower per distance.
    """
    rows = max(STAGE_ONE_ROWS, int(faiss.cvar.distance_compute_blas_threshold) // dim + 1)
    return rows if rows <= FUSED_MAX_ROWS and dim <= FUSED_MAX_DIM else None


def fused_group_distances(query: np.ndarray, reference: np.ndarray, bounds: np.ndarray):
    """d² (float32) from every query to the nearest row of every group, by faiss's k = 1 search.

    One exact faiss 1-NN call per group (rows ``bounds[g]:bounds[g + 1]`` of ``reference``),
    on this thread with one OpenMP thread: faiss takes each block's minima while its products
    are in cache (a register kernel at the few dimensions it has one for, else BLAS blocks and
    SIMD minima), where numpy must write every product to memory and read it back. Its float32
    ``|q|² + |r|² − 2 q·r`` takes the norms in float32 too: at most (2d + 4) units of roundoff
    of ``|q|² + |r|²`` off (see the module docstring).

    Parameters
    ----------
    query : ndarray of shape (b, d), float32, C-contiguous
    reference : ndarray of shape (n, d), float32, C-contiguous
    bounds : ndarray of shape (G + 1,)
        Group edges, increasing, ``bounds[0] = 0``, ``bounds[-1] = n``.

    Returns
    -------
    ndarray of shape (b, G), float32
    """
    out = np.empty((len(bounds) - 1, len(query)), dtype=np.float32)
    with single_threaded("openmp"):  # this thread is one of the engine's: no team of its own
        for g, (a, b) in enumerate(itertools.pairwise(bounds)):
            out[g] = faiss.knn(query, reference[a:b], 1)[0][:, 0]
    return out.T


def self_group_minima(
    rows_aug: np.ndarray,
    padded: np.ndarray,
    bounds: np.ndarray,
    size: int,
    *,
    threads: int = 1,
    tile_groups: int | None = None,
) -> np.ndarray:
    """d² from every row to the nearest row of every group of the same rows (CPU, float32).

    ``rows_aug`` is ``[x, 1, |x|²]`` (n, d + 2) and ``padded`` ``[−2x; |x|²; 1]`` laid out
    group by group (d + 2, G·size; padding columns give ``PAD``), so one product is d². The
    tile of group A's rows against groups B ≥ A is taken once: its row minima are A's rows'
    minima over those groups, its column minima those groups' rows' minimum over A (d² is
    symmetric), which halves the products of a search of a set against itself. ``threads``
    threads take groups A one by one (single-threaded BLAS each); every cell of the result is
    written by exactly one tile.
    """
    n, n_groups = len(rows_aug), len(bounds) - 1
    out = np.empty((n, n_groups), dtype=np.float32)
    tile_groups = tile_groups or max(1, TILE_BYTES // (4 * size * size))

    def worker() -> Callable[[int], None]:
        buffer = np.empty(size * tile_groups * size, dtype=np.float32)

        def group(a: int) -> None:
            a0, a1 = bounds[a], bounds[a + 1]
            rows = rows_aug[a0:a1]
            for g0 in range(a, n_groups, tile_groups):
                g1 = min(n_groups, g0 + tile_groups)
                prod = buffer[: len(rows) * (g1 - g0) * size].reshape(len(rows), -1)
                np.matmul(rows, padded[:, g0 * size : g1 * size], out=prod)
                np.min(prod.reshape(len(rows), g1 - g0, size), axis=2, out=out[a0:a1, g0:g1])
                across = prod.min(axis=0)  # each column's minimum over group a's rows
                for g in range(g0, g1):
                    at = (g - g0) * size
                    out[bounds[g] : bounds[g + 1], a] = across[at : at + bounds[g + 1] - bounds[g]]

        return group

    with single_threaded("blas"):
        _take_one_by_one(range(n_groups), worker, threads)
    return out


def kernel_layout(padded: np.ndarray, size: int) -> np.ndarray:
    """The reference as the register kernels read it, from :class:`GroupedReference`'s
    ``padded`` ([−2r; |r|²] group by group, ``size`` columns each).

    Returns
    -------
    ndarray of shape (G, d + 1, w), float32
        Group g's block: row 0 the norms |r|² (``PAD`` in padding columns), rows 1..d the
        coordinates times −2 (0 in padding columns); w is ``size`` rounded up to 16 columns.
    """
    dim, n_groups = padded.shape[0] - 1, padded.shape[1] // size
    width = -(-size // 16) * 16
    blocks = padded.reshape(dim + 1, n_groups, size).transpose(1, 0, 2)
    layout = np.zeros((n_groups, dim + 1, width), dtype=np.float32)
    layout[:, 0, :] = PAD
    layout[:, 0, :size] = blocks[:, -1]
    layout[:, 1:, :size] = blocks[:, :-1]
    return layout


def kernel_minima(query: np.ndarray, layout: np.ndarray, *, kernel: str) -> np.ndarray:
    """``d² − |q|²`` (float32) from every query to the nearest row of every group, in registers.

    The C kernel (``fused_minima.c``, GIL released, on this thread) holds a block of query rows
    × reference columns in vector registers, starts each value at the column's float32 |r|² and
    adds one fused multiply-add ``q_k · (−2 r_k)`` per dimension, and keeps the minimum over
    each group there: no product is written out. The same value as a product
    ``[q, 1] · [−2r, |r|²]`` summed in that order, so its error bound is the one of numpy's
    tiles (see the module docstring); every value is the same bits with either ``kernel``.

    Parameters
    ----------
    query : ndarray of shape (b, d), float32, C-contiguous
    layout : ndarray of shape (G, d + 1, w), float32, from :func:`kernel_layout`
    kernel : {"avx512f", "avx2"}

    Returns
    -------
    ndarray of shape (b, G), float32
    """
    n_groups, dim1, width = layout.shape
    out = np.empty((len(query), n_groups), dtype=np.float32)
    fused_minima.minima(
        _KERNEL_LEVELS[kernel], np.ascontiguousarray(query, dtype=np.float32), len(query),
        dim1 - 1, layout, width, 0, n_groups, out, n_groups,
    )  # fmt: skip
    return out


def kernel_self_minima(
    rows: np.ndarray,
    norms: np.ndarray,
    layout: np.ndarray,
    bounds: np.ndarray,
    *,
    kernel: str,
    threads: int = 1,
) -> np.ndarray:
    """d² (float32) from every row to the nearest row of every group of the same rows, each
    pair of groups in registers once for both directions.

    The tile of group A's rows against group B ≥ A is taken once: each value starts at
    ``fl(|x_i|² + |x_j|²)`` and adds one fused multiply-add ``x_ik · (−2 x_jk)`` per dimension,
    symmetric in i and j, and the kernel keeps both A's rows' minima over B and B's rows'
    minima over A while the values are in registers: half the products of a one-directional
    pass. ``threads`` threads take groups A one by one; every cell of the result is written by
    exactly one tile, so it does not depend on them.

    Parameters
    ----------
    rows : ndarray of shape (n, d), float32, C-contiguous, in group order
    norms : ndarray of shape (n,), float32
        |x|² of the rows.
    layout : ndarray of shape (G, d + 1, w), float32
        :func:`kernel_layout` of the same rows.
    bounds : ndarray of shape (G + 1,)
        Group edges.
    kernel : {"avx512f", "avx2"}
    threads : int, default=1

    Returns
    -------
    ndarray of shape (n, G), float32
    """
    n_groups, dim1, width = layout.shape
    out = np.empty((len(rows), n_groups), dtype=np.float32)
    edges = np.ascontiguousarray(bounds, dtype=np.int64)
    rows = np.ascontiguousarray(rows, dtype=np.float32)
    norms = np.ascontiguousarray(norms, dtype=np.float32)

    def group(a: int) -> None:
        fused_minima.self_minima(
            _KERNEL_LEVELS[kernel], rows, norms, len(rows), dim1 - 1, layout, width, edges,
            n_groups, a, out, float(PAD),
        )  # fmt: skip

    _take_one_by_one(range(n_groups), lambda: group, threads)
    return out


class GroupedReference:
    """A float32 reference split into contiguous groups of about ``GROUP_ROWS`` rows.

    ``order`` (a permutation of the rows) sets which rows share a group: rows with similar
    per-reference radii in one group keep :meth:`pair_blocks` with ``reference_limit``
    selective. ``device`` (default: the running :class:`~synthreview.engine.Engine`'s) is
    where stage one runs. Results always name rows by their position in ``reference``.
    """

    def __init__(
        self,
        reference: np.ndarray,
        *,
        n_groups: int | None = None,
        order: np.ndarray | None = None,
        device: str | None = None,
    ):
        n = len(reference)
        self.order = np.arange(n) if order is None else np.asarray(order, dtype=np.int64)
        ordered = np.asarray(reference, dtype=np.float32)[self.order]
        # float32 error grows with |q|² + |r|², not with the distances: centring the rows
        # (embeddings sit far from the origin) keeps the margin below the neighbour gaps
        self.shift = ordered.mean(axis=0, dtype=np.float64)
        self.original = ordered  # float64 re-check from the caller's coordinates
        self.reference = self._centred(ordered)
        self.n_groups = min(n, n_groups or max(1, n // GROUP_ROWS))
        # balanced bounds: group sizes differ by at most one row
        self.bounds = (np.arange(self.n_groups + 1) * n) // self.n_groups
        self.dim = reference.shape[1]
        self.norms = np.einsum("ij,ij->i", self.reference, self.reference, dtype=np.float64)
        # [−2r, |r|²]: one BLAS product with [q, 1] gives d² − |q|²
        self.augmented = np.hstack([-2.0 * self.reference, self.norms[:, None]]).astype(np.float32)
        # stage one: groups padded to one size, transposed, so a tile of groups is one product
        sizes = np.diff(self.bounds)
        self.size = int(sizes.max())
        at = np.arange(n) + np.repeat(
            np.arange(self.n_groups) * self.size - self.bounds[:-1], sizes
        )
        self.padded = np.zeros((self.dim + 1, self.n_groups * self.size), dtype=np.float32)
        self.padded[-1] = PAD
        self.padded[:, at] = self.augmented.T
        self.device = current_engine().device if device is None else device
        self._on_gpu = torch.device(self.device).type == "cuda"
        self._padded_device = (
            torch.from_numpy(self.padded).to(self.device) if self._on_gpu else None
        )
        self._layout: np.ndarray | None = None  # the register kernels' (_kernel_layout)

    def _centred(self, x: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(x - self.shift, dtype=np.float32)

    def _minima(self, q_aug: np.ndarray, *, threads: int = 1) -> np.ndarray:
        """``d² − |q|²`` (float32) from every query to the nearest row of every group.

        ``q_aug`` is ``[x − self.shift, 1]``, C-contiguous float32; ``threads`` CPU threads
        share the query rows (the GPU path ignores it).
        """
        if self._on_gpu:
            previous = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = False  # TF32 would break the error bound
            try:
                q = torch.from_numpy(q_aug).to(self.device)
                return group_minima_torch(q, self._padded_device, self.size).cpu().numpy()
            finally:
                torch.backends.cuda.matmul.allow_tf32 = previous
        return group_minima(q_aug, self.padded, self.size, threads=threads)

    def _fused_rows(self, n_query: int) -> int | None:
        """Query rows per faiss call when stage one of a batch of ``n_query`` rows runs in
        faiss's k = 1 search (:func:`fused_group_distances`: on the CPU, for a batch that
        reaches it), else None."""
        rows = None if self._on_gpu else fused_rows(self.dim)
        return rows if rows is not None and n_query >= rows else None

    def _by_group(self, groups: np.ndarray):
        """Yield (group, positions in ``groups``) for every group named in ``groups``."""
        order = np.argsort(groups, kind="stable")
        edges = np.searchsorted(groups[order], np.arange(self.n_groups + 1))
        for g in range(self.n_groups):
            if edges[g + 1] > edges[g]:
                yield g, order[edges[g] : edges[g + 1]]

    def pair_blocks(
        self,
        query: np.ndarray,
        *,
        query_limit: np.ndarray | None = None,
        reference_limit: np.ndarray | None = None,
        nearest: int = 0,
        block_rows: int | None = None,
        query_is_reference: bool = False,
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Pairs with d² ≤ ``query_limit[q]`` or d² ≤ ``reference_limit[r]``, block by block.

        Yields ``(query rows, reference rows, float64 distances)``; reference rows are
        positions in the caller's order. Together the blocks hold every such pair once, plus
        possibly a few more within the float32 margin, so consumers filter on the distance and
        reduce block by block: memory stays at one block (at most ``BLOCK_ROWS`` × group
        size, a few blocks ahead on the helper threads) even when thousands of exact
        duplicates lie within every bound. While the blocks are consumed, BLAS in this
        process is held single-threaded (the helper threads each run one block's product).

        Parameters
        ----------
        query : ndarray of shape (n_query, d)
        query_limit : ndarray of shape (n_query,), optional
            Squared distance bound per query row.
        reference_limit : ndarray of shape (n_reference,), optional
            Squared distance bound per reference row, in the caller's row order.
        nearest : int, default=0
            Also include each query row's ``nearest`` nearest reference rows (the bound t is
            the ``nearest``-th smallest group minimum).
        block_rows : int, optional
            Query rows per block (default ``BLOCK_ROWS``).
        query_is_reference : bool, default=False
            ``query`` holds the reference's own rows in the caller's order (a k-NN of a set
            among itself): stage one then takes each product tile once for both directions
            (:func:`self_group_minima`) when its minima fit :data:`SELF_MINIMA_BYTES` and only
            ``nearest`` is asked, on the CPU. The pairs are the same.
        """
        if nearest > self.n_groups:
            raise ValueError(f"nearest={nearest} exceeds the {self.n_groups} groups")
        if query_is_reference and len(query) != len(self.order):
            raise ValueError(
                f"query_is_reference=True needs the reference's {len(self.order)} rows as the "
                f"query; got {len(query)} rows"
            )
        r_lim = top = None
        if reference_limit is not None:
            r_lim = np.asarray(reference_limit, dtype=np.float64)[self.order]
            top = np.maximum.reduceat(r_lim, self.bounds[:-1]).astype(np.float32)
        kernel = None if self._on_gpu else KERNEL
        own = None
        if (
            query_is_reference
            and nearest
            and query_limit is None
            and reference_limit is None
            and not self._on_gpu
            and (kernel or self._fused_rows(min(len(query), QUERY_BATCH)) is None)
            and 4 * len(query) * self.n_groups <= SELF_MINIMA_BYTES
        ):
            own = self._self_minima(kernel)
        for first in range(0, len(query), QUERY_BATCH):
            last = min(len(query), first + QUERY_BATCH)
            limit = None if query_limit is None else query_limit[first:last]
            for q, r, d in self._batch_pairs(
                query[first:last], limit, r_lim, top, nearest, block_rows or BLOCK_ROWS,
                kernel, None if own is None else own[first:last],
            ):  # fmt: skip
                yield q + first, r, d

    def _self_minima(self, kernel: str | None) -> np.ndarray:
        """d² (float32) from every reference row, in the caller's order, to every group
        (through the register ``kernel``, else numpy's tiles)."""
        centred = self.reference
        norms = self.norms.astype(np.float32)
        if kernel:
            ordered = kernel_self_minima(
                centred, norms, self._kernel_layout(), self.bounds, kernel=kernel,
                threads=blas_threads(),
            )  # fmt: skip
        else:
            rows_aug = np.hstack([centred, np.ones((len(centred), 1), np.float32), norms[:, None]])
            padded = np.zeros((self.dim + 2, self.n_groups * self.size), dtype=np.float32)
            padded[: self.dim + 1] = self.padded  # [−2r; |r|²] (PAD in padding columns)
            padded[self.dim + 1, :] = 1.0
            padded[self.dim + 1, self.padded[-1] == PAD] = 0.0  # padding stays PAD
            ordered = self_group_minima(
                np.ascontiguousarray(rows_aug), padded, self.bounds, self.size,
                threads=blas_threads(),
            )  # fmt: skip
        out = np.empty_like(ordered)
        out[self.order] = ordered
        return out

    def _kernel_layout(self) -> np.ndarray:
        """:func:`kernel_layout` of the reference, built on first use (before any thread
        reads it) and kept."""
        if self._layout is None:
            self._layout = kernel_layout(self.padded, self.size)
        return self._layout

    def _batch_pairs(self, original, query_limit, r_lim, top, nearest, step, kernel, own=None):
        """:meth:`pair_blocks` for one batch of queries (rows numbered within the batch).

        Stage one runs in the register ``kernel`` where one is given (CPU), else through
        faiss's per-group calls or numpy's tiles (or on the GPU); ``own`` holds the self minima
        (d²) when the batch is the reference itself.

        Both stages run on the threads of the running thread bound (:func:`blas_threads`):
        stage one by chunks of ``STAGE_ONE_ROWS`` queries (products, bounds and candidate
        lists of a chunk on one thread), stage two by (group, block) items whose pairs are
        yielded in item order, so the consumer's reductions overlap the next items' products.
        """
        query = self._centred(original)
        qn = np.einsum("ij,ij->i", query, query, dtype=np.float64)
        threads = blas_threads()
        fused = None if own is not None or kernel else self._fused_rows(len(query))
        layout = self._kernel_layout() if kernel and own is None else None
        # worst case, float32 |q|² + |r|² − 2 q·r is off by (d + 3) units of roundoff of
        # |q|² + |r|²; the margin is twice that, for the group minima and for stage two (the
        # kernels' minima, one-directional and self, are within the same bound)
        scale = (2 * self.dim + 6) * np.finfo(np.float32).eps
        if own is not None and not kernel:
            # self minima are one (d + 2)-term product [x, 1, |x|²] · [−2r; |r|²; 1] whose
            # terms sum to at most 2 (|q|² + |r|²) in absolute value: (3d + 6) units, twice
            scale = (6 * self.dim + 12) * np.finfo(np.float32).eps
        elif fused is not None:
            # faiss's minima take |q|² and |r|² in float32 as well: (2d + 4) units, plus
            # stage two's (d + 3), twice
            scale = (6 * self.dim + 14) * np.finfo(np.float32).eps
        margin = scale * (qn + self.norms.max()) + 1e-30
        q_lim = (
            np.full(len(query), -np.inf) if query_limit is None else np.array(query_limit, float)
        )
        q_aug = np.hstack([query, np.ones((len(query), 1), np.float32)])
        shift = (margin - qn).astype(np.float32)  # a bound in d² becomes one in d² − |q|²

        def stage_one(chunk: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
            s, e = chunk
            if own is not None:  # d², from the self minima: compare in float64
                if nearest:
                    t = np.partition(own[s:e], nearest - 1, axis=1)[:, nearest - 1]
                    q_lim[s:e] = np.maximum(q_lim[s:e], t)
                hit_q, hit_g = _nonzero(own[s:e] <= (q_lim[s:e] + margin[s:e])[:, None])
                return (hit_q + s).astype(np.int64), hit_g
            if layout is not None:
                minima = kernel_minima(query[s:e], layout, kernel=kernel)  # d² − |q|²
                offset = qn[s:e]
            elif fused is not None:
                minima = fused_group_distances(query[s:e], self.reference, self.bounds)  # d²
                offset = np.zeros(e - s)
            else:
                # on the GPU one call takes the whole chunk; on the CPU each is one thread's
                minima = self._minima(q_aug[s:e], threads=1)  # d² − |q|²
                offset = qn[s:e]
            if nearest:
                t = np.partition(minima, nearest - 1, axis=1)[:, nearest - 1] + offset
                q_lim[s:e] = np.maximum(q_lim[s:e], t)  # rows s:e belong to this chunk alone
            inside = minima <= (q_lim[s:e] + margin[s:e] - offset).astype(np.float32)[:, None]
            if top is not None:
                inside |= (
                    minima <= top[None, :] + (margin[s:e] - offset).astype(np.float32)[:, None]
                )
            hit_q, hit_g = _nonzero(inside)
            return (hit_q + s).astype(np.int64), hit_g

        if fused is not None:
            # equal chunks of at least ``fused`` rows, a multiple of the threads where possible
            n_chunks = len(query) // fused
            n_chunks = max(1, n_chunks - n_chunks % threads if n_chunks >= threads else n_chunks)
            edges = (np.arange(n_chunks + 1) * len(query)) // n_chunks
        else:
            rows_per_step = 8 * STAGE_ONE_ROWS if self._on_gpu else STAGE_ONE_ROWS
            edges = [*range(0, len(query), rows_per_step), len(query)]
        chunks = list(itertools.pairwise(edges))
        with single_threaded("blas"):
            found = list(_ordered_map(stage_one, chunks, 1 if self._on_gpu else threads))
        cand_q = np.concatenate([f[0] for f in found])
        cand_g = np.concatenate([f[1] for f in found])
        del found
        rest_q = (q_lim + margin - qn).astype(np.float32)

        def stage_two(item: tuple[int, np.ndarray]):
            g, rows = item
            start, stop = self.bounds[g], self.bounds[g + 1]
            prod = q_aug[rows] @ self.augmented[start:stop].T  # d² − |q|²
            hit = prod <= rest_q[rows, None]
            if r_lim is not None:
                hit |= prod <= r_lim[None, start:stop].astype(np.float32) + shift[rows, None]
            hit_q, hit_r = _nonzero(hit)
            q, at = rows[hit_q], hit_r + start
            return q, self.order[at], _distances(original, q, self.original, at)

        items = (
            (g, cand_q[pos[first : first + step]])
            for g, pos in self._by_group(cand_g)
            for first in range(0, len(pos), step)
        )
        # one block is too small to share: BLAS single-threaded, the items spread on threads
        with single_threaded("blas"):
            yield from _ordered_map(stage_two, items, threads)

    def knn(
        self, query: np.ndarray, k: int, *, exclude_self: bool, block_rows: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Float64 distances and indices (n_query, k) of the k nearest rows, ties → lower index."""
        need = k + 1 if exclude_self else k
        best = TopK(len(query), k)
        blocks = self.pair_blocks(
            query, nearest=need, block_rows=block_rows, query_is_reference=exclude_self
        )
        for q, r, d in blocks:
            if exclude_self:
                keep = q != r
                q, r, d = q[keep], r[keep], d[keep]
            best.update(q, r, d)
        return best.result()


def _nonzero(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.nonzero`` of a C-contiguous 2-d mask, in the same order (row-major), through the
    flat positions: 10-15× faster than the 2-d ``np.nonzero`` on sparse masks."""
    return np.divmod(np.flatnonzero(mask), mask.shape[1])


def _take_one_by_one(
    items: range, worker: Callable[[], Callable[[int], None]], threads: int
) -> None:
    """Call a handler on every item of ``items`` from ``threads`` threads (this one and
    helpers), each thread with its own handler from ``worker()`` (its own buffers) taking the
    next item until none is left: a thread slowed by other work on the machine takes fewer
    items instead of holding the others up. Each item is handled exactly once, so a result
    whose cells each item writes does not depend on ``threads``."""
    todo, lock = iter(items), threading.Lock()

    def work() -> None:
        handle = worker()
        while True:
            with lock:
                item = next(todo, None)
            if item is None:
                return
            handle(item)

    helpers = max(0, min(threads, len(items)) - 1)
    if not helpers:
        work()
        return
    with ThreadPoolExecutor(max_workers=helpers) as pool:
        running = [pool.submit(work) for _ in range(helpers)]
        work()
        for done in running:
            done.result()


def _ordered_map(fn, items, threads: int) -> Iterator:
    """``map(fn, items)`` on ``threads`` threads, results in item order, at most 2 × threads
    items ahead of the consumer (so memory stays a few blocks whatever the consumer does)."""
    if threads <= 1:
        yield from map(fn, items)
        return
    items = iter(items)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        pending: deque = deque()
        for item in itertools.islice(items, 2 * threads):
            pending.append(pool.submit(fn, item))
        while pending:
            done = pending.popleft().result()
            for item in itertools.islice(items, 1):
                pending.append(pool.submit(fn, item))
            yield done


def _distances(query, q, reference, r) -> np.ndarray:
    """Float64 ‖query[q] − reference[r]‖, a slice at a time (bounded memory)."""
    out = np.empty(len(q))
    step = 1 << 16  # a slice's float64 differences stay in cache: 1.2-3x faster than 1 << 18
    for s in range(0, len(q), step):
        # each float32 widened exactly, then subtracted in float64: astype-then-subtract's bits
        diff = np.subtract(query[q[s : s + step]], reference[r[s : s + step]], dtype=np.float64)
        np.sqrt(np.einsum("ij,ij->i", diff, diff), out=out[s : s + step])
    return out


class TopK:
    """The k smallest (distance, index) per query row, ties → lower index.

    Candidate pairs are buffered and merged once the buffer passes ``flush_at`` pairs (and at
    the end), which keeps memory bounded without paying a sort per block.
    """

    def __init__(self, n_query: int, k: int, *, flush_at: int = 1 << 22):
        self.k, self.flush_at = k, flush_at
        self._distance = np.full((n_query, k), np.inf)
        self._index = np.full((n_query, k), _EMPTY, dtype=np.int64)
        self._buffer: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._buffered = 0

    def update(self, q: np.ndarray, r: np.ndarray, d: np.ndarray) -> None:
        """Add candidate pairs (query row, reference row, distance)."""
        self._buffer.append((q, r, d))
        self._buffered += len(q)
        if self._buffered >= self.flush_at:
            self._flush()

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """Distances and indices, each (n_query, k), ascending."""
        self._flush()
        return self._distance, self._index

    def _flush(self) -> None:
        if not self._buffered:
            self._buffer.clear()
            return
        q, r, d = (np.concatenate(parts) for parts in zip(*self._buffer, strict=True))
        self._buffer.clear()
        self._buffered = 0
        if self.k == 1:
            self._merge_nearest(q, r, d)
            return
        seen = np.zeros(len(self._distance), dtype=bool)
        seen[q] = True
        rows = np.flatnonzero(seen)
        # only the slots already held join the sort: an empty slot (inf, largest index) sorts
        # after every pair, so it is refilled below exactly where the sort would have put it
        # (at the first flush, when every slot is empty, 40 % fewer entries to sort)
        held = self._index[rows] != _EMPTY
        all_q = np.concatenate([np.repeat(rows, self.k)[held.ravel()], q])
        all_d = np.concatenate([self._distance[rows][held], d])
        all_i = np.concatenate([self._index[rows][held], r])
        order = np.lexsort((all_i, all_d, all_q))
        all_q, all_d, all_i = all_q[order], all_d[order], all_i[order]
        rank = np.arange(len(all_q)) - np.searchsorted(all_q, all_q, side="left")
        keep = rank < self.k
        self._distance[rows] = np.inf
        self._index[rows] = _EMPTY
        self._distance[all_q[keep], rank[keep]] = all_d[keep]
        self._index[all_q[keep], rank[keep]] = all_i[keep]

    def _merge_nearest(self, q: np.ndarray, r: np.ndarray, d: np.ndarray) -> None:
        """k = 1 without a sort: the smallest distance per row, then the lowest index at it
        (the kept row counts as a candidate), as the (distance, index) sort would pick."""
        kept_d, kept_i = self._distance[:, 0], self._index[:, 0]
        best_d = kept_d.copy()
        np.minimum.at(best_d, q, d)
        best_i = np.where(kept_d == best_d, kept_i, np.iinfo(np.int64).max)
        tied = d == best_d[q]
        np.minimum.at(best_i, q[tied], r[tied])
        self._distance[:, 0], self._index[:, 0] = best_d, best_i
