"""Force the grouped search's stage one onto one path and check that it ran there.

Stage one (each query row's distance to every group of reference rows) runs through the C
register kernels (``grouped_search.kernel_minima`` / ``kernel_self_minima``), numpy's tiles or
faiss's k = 1 search (``grouped_search.fused_group_distances``); tests that compare the paths
force each and count the kernel and fused calls, so a path silently not taken cannot make them
pass.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import faiss
import pytest

from synthreview import grouped_search

#: the stage-one paths :func:`stage_one_path` can force
PATHS = ("numpy", "fused", "kernel")


@contextlib.contextmanager
def stage_one_path(patch: pytest.MonkeyPatch, path: str) -> Iterator[None]:
    """Inside the block stage one runs through ``path`` ("numpy", "fused" or "kernel"); on
    leaving, it asserts that the fused search ran exactly when ``path`` is "fused" and the
    register kernels exactly when it is "kernel".

    A small fused call would otherwise run pair by pair in faiss, so "fused" sets faiss's BLAS
    threshold to 0; "numpy" sets ``FUSED_MAX_ROWS`` to 0; both turn the register kernels off
    (``KERNEL`` None). "kernel" skips the test where the C extension is not built. ``patch``
    undoes all of it.
    """
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}; got {path!r} instead")
    if path == "kernel":
        if grouped_search.KERNEL is None:
            pytest.skip("the stage-one C kernels are not built (pip install -e .)")
    else:
        patch.setattr(grouped_search, "KERNEL", None)
    if path == "fused":
        patch.setattr(faiss.cvar, "distance_compute_blas_threshold", 0)
    elif path == "numpy":
        patch.setattr(grouped_search, "FUSED_MAX_ROWS", 0)
    calls = {"fused": [], "kernel": []}
    for name, kind in (("fused_group_distances", "fused"), ("kernel_minima", "kernel"),
                       ("kernel_self_minima", "kernel")):  # fmt: skip
        original = getattr(grouped_search, name)
        patch.setattr(
            grouped_search,
            name,
            lambda *a, _original=original, _kind=kind, **kw: (
                calls[_kind].append(1) or _original(*a, **kw)
            ),
        )
    yield
    for kind, seen in calls.items():
        assert bool(seen) == (path == kind), f"stage one did not run through {path} ({kind})"
