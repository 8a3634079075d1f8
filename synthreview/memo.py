"""What the candidates of one review share: results that depend only on real and holdout data.

Real-side neighbours (fidelity), the holdout reference of the utility battery, the TRTR models of
ML efficacy, the privacy section's searches of training and holdout rows alone and the glucose
context (trained forecaster, trace embedding) are the same for every candidate of a review and
cost about as much as one candidate. A :class:`Memo` keeps them for the
life of one review: :class:`synthreview.review.Context` owns it, so nothing computed from a
reviewer's data outlives the review (or the dashboard session that holds it) in the process.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

import numpy as np

T = TypeVar("T")


class Memo:
    """A per-review store of shared results, keyed on full-content digests.

    ``get(key, compute)`` returns the stored value for ``key`` or computes, stores and returns
    it. Thread-safe: two sections asking for the same key compute it once.
    """

    def __init__(self) -> None:
        self._values: dict[Hashable, object] = {}
        self._lock = threading.RLock()

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value stored under ``key``, computed by ``compute()`` the first time."""
        with self._lock:
            if key not in self._values:
                self._values[key] = compute()
            return self._values[key]  # type: ignore[return-value]

    def __len__(self) -> int:
        return len(self._values)

    def __reduce__(self):
        # a memo is one process's cache: a pickled copy (a review or record sent to another
        # process) starts empty and computes what it is asked for again; the values may hold
        # what does not pickle (faiss indexes) and the lock belongs to this process
        return (type(self), ())

    def clear(self) -> None:
        """Forget every stored value."""
        with self._lock:
            self._values.clear()


def remember(memo: Memo | None, key: Hashable, compute: Callable[[], T]) -> T:
    """``memo.get(key, compute)``, or just ``compute()`` when no memo is given."""
    return compute() if memo is None else memo.get(key, compute)


def array_digest(x: np.ndarray | None) -> str | None:
    """Full-content digest of an array (shape and dtype included); None stays None."""
    if x is None:
        return None
    arr = np.ascontiguousarray(x)
    h = hashlib.blake2b(arr.tobytes(), digest_size=16)
    h.update(repr((arr.shape, arr.dtype.str)).encode())
    return h.hexdigest()
