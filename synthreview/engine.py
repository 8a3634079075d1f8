"""Where and how the neighbour searches run: threads, device, approximation, Dask cluster.

Every neighbour search of a review (:func:`synthreview.neighbors.nearest`, the fidelity
passes of :func:`synthreview.metrics.fidelity.scan.tally`, the privacy distance attacks)
reads the :class:`Engine` of the running review from a context variable, so the sections do
not thread four settings through every signature. :func:`synthreview.review.evaluate` enters
one with :func:`using`; outside a review the default engine is the exact, in-process search
on the CPU with the process's thread settings left alone.

Threads. BLAS (OpenBLAS inside numpy and scipy), faiss's OpenMP and torch each start one
thread per core unless told otherwise; on a shared 2-core machine the spinning threads cost
more than they bring (the exact faiss 1-NN of 50k × 50k took 14.4 s of CPU with 2 threads
against 4.6 s with 1 while other work ran). :func:`limited_threads` bounds all three at once
and restores the previous settings on exit.
"""

from __future__ import annotations

import contextvars
import functools
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

import faiss
import torch
from threadpoolctl import OpenBLASController, ThreadpoolController

from synthreview.distributed import connect, local_cluster
from synthreview.errors import ConfigError

#: approximate indexes: faiss inverted lists (IVF) or a navigable small-world graph (HNSW)
APPROXIMATE = ("ivf", "hnsw")


def available_cores() -> int:
    """Cores this process may run on (the CPU affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS and Windows have no affinity mask
        return os.cpu_count() or 1


def check_threads(threads: int | None) -> int:
    """``threads`` as a positive int (``None``: :func:`available_cores`)."""
    if threads is None:
        return available_cores()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ConfigError(f"threads must be a positive integer; got {threads!r} instead")
    return threads


def check_device(device: str) -> str:
    """``device`` as a torch device name; CUDA must be present when it is asked for."""
    if not isinstance(device, str):
        raise ConfigError(f"device must be a string such as 'cpu' or 'cuda'; got {device!r}")
    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError) as exc:
        raise ConfigError(f"device must be 'cpu' or 'cuda[:n]'; got {device!r} instead") from exc
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            f"device {device!r} needs CUDA, but torch finds no CUDA device on this machine; "
            "use device='cpu'"
        )
    if parsed.type not in ("cpu", "cuda"):
        raise ConfigError(f"device must be 'cpu' or 'cuda[:n]'; got {device!r} instead")
    return device


@dataclass(frozen=True)
class RecallCheck:
    """Measured 1-NN recall of an approximate search on a sample of its queries.

    Attributes
    ----------
    index : str
        ``"ivf"`` or ``"hnsw"``.
    checked : int
        Queries whose approximate nearest row was compared with the exact one.
    recall : float
        Share of checked queries whose nearest row in the *returned* result is an exact
        nearest row (distance equal to the exact minimum), in [0, 1]; higher is better.
    first_recall : float or None
        The recall of the first (unwidened) approximate search.
    widened : int
        Factor by which the probed lists (IVF) or the search width (HNSW) were widened
        (1: as configured).
    exact_fallback : bool
        The approximate search stayed below ``floor`` even widened, and the exact search
        was returned instead.
    floor : float or None
        The recall floor the search was held to.
    kept_below_floor : bool
        The search stayed below ``floor`` even widened and its caller could not afford the
        exact search (``Engine.exact_fallback`` False): the widened approximate result was kept.
    """

    index: str
    checked: int
    recall: float
    first_recall: float | None = None
    widened: int = 1
    exact_fallback: bool = False
    floor: float | None = None
    kept_below_floor: bool = False

    def describe(self) -> str:
        """``"1-NN recall 0.998 on 10000 checked queries (ivf)"``, and what was done when the
        first search fell below the recall floor."""
        text = f"1-NN recall {self.recall:.3f} on {self.checked} checked queries ({self.index})"
        if self.exact_fallback:
            text += (
                f"; the approximate search reached {self.first_recall:.3f}, below the floor "
                f"{self.floor:.3f} even widened {self.widened}x, so the exact search was used"
            )
        elif self.kept_below_floor and self.widened == 1:
            text += (
                f"; below the floor {self.floor:.3f}; kept, as neither a wider nor the exact "
                "search was affordable"
            )
        elif self.kept_below_floor:
            text += (
                f"; below the floor {self.floor:.3f} even widened {self.widened}x (first "
                f"{self.first_recall:.3f}); kept, as the exact search was not affordable"
            )
        elif self.widened > 1:
            text += (
                f"; searched {self.widened}x wider after a first recall of "
                f"{self.first_recall:.3f}, below the floor {self.floor:.3f}"
            )
        return text


@dataclass(frozen=True)
class Engine:
    """How the neighbour searches of a review run.

    Attributes
    ----------
    threads : int or None
        Bound on BLAS, OpenMP (faiss) and torch threads; ``None`` leaves them as they are.
    device : str
        ``"cpu"``, or ``"cuda[:n]"`` to run the first search stage (the O(n²) products) on a
        GPU through torch; neighbours and distances are re-checked in float64 on the CPU,
        so they equal the CPU result.
    approximate : {None, "ivf", "hnsw"}
        ``None`` (default): exact search. Otherwise k-NN searches use a faiss approximate
        index and measure their 1-NN recall on a sample of queries (``recall_log``).
    client : distributed.Client or None
        A Dask client: searches are sharded by blocks of reference rows across its workers
        and merged exactly (:mod:`synthreview.distributed`).
    recall_log : list
        :class:`RecallCheck` records appended by approximate searches (mutable on purpose:
        the engine is shared by the whole review).
    recall_sample : int or None
        Queries an approximate search checks against the exact search (default
        ``neighbors.RECALL_SAMPLE``).
    exact_fallback : bool
        Whether an approximate search still below the recall floor when widened returns the
        exact result (default) or keeps the widened one and says so (the every-row audit of a
        million rows, whose exact search would take hours).
    widen : int or None
        How much wider an approximate search below the recall floor searches again (default
        ``neighbors.WIDEN``; 1: not again, as in the every-row audit of a million rows, where
        a search four times wider took longer than the whole review may).
    indexes : dict
        Approximate indexes built by this engine, by (kind, digest of the reference rows):
        several searches against the same rows (the audit's three against the training rows)
        train and fill one index (mutable on purpose, like ``recall_log``).
    task_threads : int or None
        Bound on the threads of each candidate task on ``client``'s workers (None: the
        review's ``threads``); :func:`on_local_cluster` gives each process its share of the
        cores. The numbers do not depend on it.
    on_stage : callable or None
        Told each stage of a search as it starts (``on_stage(message)``): training and filling
        an approximate index, checking its recall, each search. The every-row audit's searches
        of a million rows run for minutes; its progress reports them.
    """

    threads: int | None = None
    device: str = "cpu"
    approximate: str | None = None
    client: Any = None
    recall_log: list[RecallCheck] | None = None
    recall_sample: int | None = None
    exact_fallback: bool = True
    widen: int | None = None
    indexes: dict[tuple[str, str], Any] | None = field(default=None, repr=False, compare=False)
    task_threads: int | None = None
    on_stage: Callable[[str], None] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.threads is not None:
            check_threads(self.threads)
        if self.task_threads is not None:
            check_threads(self.task_threads)
        check_device(self.device)
        if self.approximate is not None and self.approximate not in APPROXIMATE:
            raise ConfigError(
                f"approximate must be None or one of {list(APPROXIMATE)}; "
                f"got {self.approximate!r} instead"
            )
        if self.recall_log is None:
            object.__setattr__(self, "recall_log", [])
        if self.indexes is None:
            object.__setattr__(self, "indexes", {})

    def stage(self, message: str) -> None:
        """Tell ``on_stage`` (when set) that a search stage starts."""
        if self.on_stage is not None:
            self.on_stage(message)

    @property
    def search_kind(self) -> tuple[object, ...]:
        """What a neighbour search's result depends on besides its rows: ``("exact",)``
        (whatever the device, cluster or threads), or the approximate index and the settings
        that change what it returns. A memo key holds it, so an exact and an approximate
        search of the same rows never share a stored result."""
        if self.approximate is None:
            return ("exact",)
        return (self.approximate, self.recall_sample, self.exact_fallback, self.widen)

    @property
    def on_gpu(self) -> bool:
        """Whether the first search stage runs on a CUDA device."""
        return torch.device(self.device).type == "cuda"


_CURRENT: ContextVar[Engine | None] = ContextVar("synthreview_engine", default=None)


def current_engine() -> Engine:
    """The engine of the running review (the exact in-process CPU search outside one)."""
    return _CURRENT.get() or Engine()


@contextmanager
def limited_threads(threads: int | None) -> Iterator[None]:
    """Bound BLAS, OpenMP (faiss) and torch to ``threads`` threads inside the block.

    ``None`` leaves every setting alone. The previous settings are restored on exit.
    """
    if threads is None:
        yield
        return
    threads = check_threads(threads)
    previous_torch = torch.get_num_threads()
    previous_faiss = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(threads)
    torch.set_num_threads(threads)
    try:
        # OpenMP's limit is per thread; BLAS's is the process's and goes through its bound
        with _openmp_limited(threads), _BLAS.bound(threads):
            yield
    finally:
        faiss.omp_set_num_threads(previous_faiss)
        torch.set_num_threads(previous_torch)


def _openmp_limited(threads: int) -> Any:
    """OpenMP limited to ``threads`` in this thread; on exit only OpenMP's limit is restored
    (a limit taken on every library would restore BLAS's too, over the bound of
    :class:`_BlasBound`)."""
    return threadpools().select(user_api="openmp").limit(limits=threads)


def _take_blas_control() -> None:
    """Let this thread change the BLAS limit.

    threadpoolctl (3.6 and later) lets one thread only, the first that set a limit, change a
    pthreads OpenBLAS's thread count, and silently ignores every other thread. The candidate
    tasks of an in-process Dask cluster run in worker threads while the client's thread had
    set the review's limit: every one-thread block of a task was ignored, its mixture fits ran
    on two BLAS threads and rounded otherwise, and the density attack scored differently in a
    cluster task than in-process (on AVX-512 machines, whose OpenBLAS kernels split these small
    products across threads; tests/test_distributed.py). :class:`_BlasBound` serialises every
    change the engine makes, so it may take control for each.
    """
    clear = getattr(OpenBLASController, "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)


class _BlasBound:
    """The process's one BLAS thread limit, shared by every thread that bounds it.

    OpenBLAS keeps a single thread count for the whole process. Two reviews side by side in one
    process (the candidate tasks of an in-process Dask cluster) would each set and restore it,
    and one task's exit could restore two threads while the other's mixture fit is inside its
    one-thread block. Here every bound in force is kept, the limit is their minimum, and the
    original limit comes back when the last bound ends: a block that asked for one thread keeps
    one thread until it ends, whatever the other threads do meanwhile.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bounds: list[int] = []
        self._original: Any = None  # the limiter of the first bound: it restores the original
        self._applied: int | None = None

    def _apply(self) -> None:  # called with the lock held
        blas = threadpools().select(user_api="blas")
        if not self._bounds:
            if self._original is not None:
                _take_blas_control()
                self._original.restore_original_limits()
            self._original, self._applied = None, None
            return
        wanted = min(self._bounds)
        if self._original is None:
            _take_blas_control()
            self._original = blas.limit(limits=wanted)
        elif wanted != self._applied:
            _take_blas_control()
            blas.limit(limits=wanted)
        self._applied = wanted

    @contextmanager
    def bound(self, threads: int) -> Iterator[None]:
        """BLAS limited to at most ``threads`` inside the block, in every thread."""
        with self._lock:
            self._bounds.append(threads)
            self._apply()
        try:
            yield
        finally:
            with self._lock:
                self._bounds.remove(threads)
                self._apply()


_BLAS = _BlasBound()


@functools.cache
def threadpools() -> ThreadpoolController:
    """The BLAS and OpenMP libraries of this process, found once (a look-up scans every loaded
    shared library, ~6 ms; a limit set through the found controller costs ~0.03 ms, which a
    piece of work as small as one 256-row KDE block can afford)."""
    return ThreadpoolController()


@contextmanager
def single_threaded(user_api: str | None = None) -> Iterator[None]:
    """Context manager: BLAS and OpenMP (or only ``user_api``) limited to one thread inside.

    For work whose result must not depend on the thread count: a BLAS product or LAPACK
    factorisation split across threads, or an OpenMP reduction, rounds differently. OpenMP's
    limit is per thread: set it in the thread that does the work. BLAS's is the process's: it
    stays one thread until the block ends, whatever other threads set meanwhile
    (:class:`_BlasBound`).
    """
    if user_api not in (None, "blas", "openmp"):
        raise ConfigError(f"user_api must be None, 'blas' or 'openmp'; got {user_api!r} instead")
    with ExitStack() as stack:
        if user_api in (None, "openmp"):
            stack.enter_context(_openmp_limited(1))
        if user_api in (None, "blas"):
            stack.enter_context(_BLAS.bound(1))
        yield


def blas_threads() -> int:
    """Threads this process's BLAS may use now (the smallest limit among its BLAS libraries).

    :func:`limited_threads` sets it; the grouped search's stage one and :func:`thread_map` run
    that many threads of their own, with BLAS single-threaded inside each.
    """
    found = threadpools().select(user_api="blas").info()
    return max(1, min((lib["num_threads"] for lib in found), default=1))


def thread_map(fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
    """``[fn(item) for item in items]`` on the engine's threads, BLAS and OpenMP one thread each.

    For independent pieces of work that release the GIL (tree fits, mixture fits, cross-
    validation folds, blocks of a product): every piece runs with one BLAS and one OpenMP
    thread whatever the thread count, so it gives the same bits with any thread bound, run
    alone or side by side (a BLAS product's rounding, and an OpenMP k-means', changes with its
    thread count). The thread count is the current BLAS limit (:func:`blas_threads`, bounded
    by the review's engine); every piece runs in a copy of the caller's context (engine, ...).
    """
    items = list(items)
    threads = min(len(items), blas_threads())
    with single_threaded():
        if threads <= 1:
            return [fn(item) for item in items]
        with ThreadPoolExecutor(max_workers=threads) as pool:
            futures = [
                pool.submit(contextvars.copy_context().run, _one_openmp_thread, fn, item)
                for item in items
            ]
            return [f.result() for f in futures]


def _one_openmp_thread(fn: Callable[[Any], Any], item: Any) -> Any:
    # OpenMP's thread count is a per-thread setting: the limit set above holds in the calling
    # thread only, and a pool thread starts with the machine's default (an OpenMP k-means
    # inside a mixture fit then ran 2 threads beside another fit, and its rounding differed
    # from a 1-thread review's); BLAS's limit is process-wide and already holds here
    with single_threaded("openmp"):
        return fn(item)


@contextmanager
def using(engine: Engine) -> Iterator[Engine]:
    """Run the block's neighbour searches with ``engine`` (threads bounded as it says)."""
    token = _CURRENT.set(engine)
    try:
        with limited_threads(engine.threads):
            yield engine
    finally:
        _CURRENT.reset(token)


@contextmanager
def on_cluster(scheduler: str | None) -> Iterator[Engine]:
    """Run the block's reviews and searches on the Dask cluster at ``scheduler``.

    Inside the block :func:`synthreview.review.evaluate` (without its own ``scheduler=``)
    sends its candidates to the cluster as tasks, and every other search made through the
    engine (the release audit's copy evidence, the curated re-evaluation) is sharded across
    the workers. The client is closed when the block ends. ``None`` changes nothing, so
    callers can write ``with on_cluster(args.scheduler):`` whether or not one was given.
    """
    if scheduler is None:
        yield current_engine()
        return
    with connect(scheduler) as client, using(replace(current_engine(), client=client)) as engine:
        yield engine


@contextmanager
def on_local_cluster(workers: int) -> Iterator[Engine]:
    """:func:`on_cluster` on ``workers`` processes of this machine started for the block.

    With two or more candidates, :func:`synthreview.review.evaluate` inside the block reviews
    them as tasks in separate processes, each bounded to its share of the cores, so a review
    uses every core even where the GIL or a library's threading would serialise one process;
    the report equals the in-process one byte for byte (``tests/test_local_cluster.py``). The
    processes stop when the block ends (``distributed.local_cluster``).
    """
    with local_cluster(workers) as address, on_cluster(address) as engine:
        share = max(1, available_cores() // workers)  # workers checked by local_cluster
        with using(replace(engine, task_threads=share)) as bounded:
            yield bounded
