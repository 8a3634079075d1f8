"""A one-thread BLAS block holds in every thread, whatever other threads set meanwhile.

The density attack scored differently in an in-process Dask cluster's task than in-process
(tests/test_distributed.py, on AVX-512 machines): threadpoolctl lets only the first thread that
set a limit change a pthreads OpenBLAS's thread count, so the worker thread's one-thread blocks
were ignored. The engine's limits now take effect from any thread, and a block that asked for
one thread keeps it while another thread's bound starts and ends.
"""

from __future__ import annotations

import threading

import numpy as np  # noqa: F401  (loads OpenBLAS, so threadpoolctl finds it)
from threadpoolctl import threadpool_info

from synthreview.engine import limited_threads, single_threaded


def blas_threads() -> int:
    """The most threads any BLAS library of the process may use now."""
    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


def _in_thread(fn):
    found = []
    worker = threading.Thread(target=lambda: found.append(fn()))
    worker.start()
    worker.join()
    return found[0]


def test_a_worker_threads_one_thread_block_holds_while_another_thread_set_the_limit():
    with limited_threads(2):  # this thread sets the review's limit first, as a client does

        def inside():
            with single_threaded():
                return blas_threads()

        assert _in_thread(inside) == 1
        assert blas_threads() == 2  # restored when the block ended


def test_another_threads_bound_ending_does_not_lift_a_one_thread_block():
    entered, ended = threading.Event(), threading.Event()
    seen = []

    def other():
        entered.wait()
        with limited_threads(2):
            pass  # starts and ends while the first thread is inside its block
        ended.set()

    worker = threading.Thread(target=other)
    worker.start()
    with single_threaded():
        entered.set()
        ended.wait()
        seen.append(blas_threads())
    worker.join()
    assert seen == [1]
