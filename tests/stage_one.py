"""Force the grouped search's stage one onto one path and check that it ran there.

Stage one (each query row's distance to every group of reference rows) runs through numpy's
tiles or through faiss's k = 1 search (``grouped_search.fused_group_distances``); tests that
compare the two paths force each and count the fused calls, so a path silently not taken
cannot make them pass.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import faiss
import pytest

from synthreview import grouped_search


@contextlib.contextmanager
def stage_one_path(patch: pytest.MonkeyPatch, path: str) -> Iterator[None]:
    """Inside the block stage one runs through ``path`` ("numpy" or "fused"); on leaving, it
    asserts that the fused search ran exactly when ``path`` is "fused".

    A small fused call would otherwise run pair by pair in faiss, so "fused" sets faiss's BLAS
    threshold to 0; "numpy" sets ``FUSED_MAX_ROWS`` to 0. ``patch`` undoes both.
    """
    if path not in ("numpy", "fused"):
        raise ValueError(f"path must be 'numpy' or 'fused'; got {path!r} instead")
    if path == "fused":
        patch.setattr(faiss.cvar, "distance_compute_blas_threshold", 0)
    else:
        patch.setattr(grouped_search, "FUSED_MAX_ROWS", 0)
    calls = []
    original = grouped_search.fused_group_distances
    patch.setattr(
        grouped_search,
        "fused_group_distances",
        lambda *a, **kw: calls.append(1) or original(*a, **kw),
    )
    yield
    assert bool(calls) == (path == "fused"), f"stage one did not run through {path}"
