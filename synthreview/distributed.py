"""A review on an existing Dask cluster: candidates as tasks, searches sharded by real rows.

``evaluate(..., scheduler="tcp://host:8786")`` (CLI ``--scheduler``) connects a
``distributed.Client`` and puts it on the review's :class:`~synthreview.engine.Engine`
(:func:`synthreview.engine.on_cluster` does the same for a whole block of work, such as a
review and its release audit). Two kinds of work then run on the cluster:

* **Candidates as tasks.** With two or more candidates, each candidate's sections run as one
  task (:func:`map_shards`), its searches inside the task; results come back in candidate
  order. The real-side work the candidates share (a review's
  :class:`~synthreview.memo.Memo`) is computed once for the whole cluster by
  :class:`ClusterMemo`: the first task that needs a value computes it under a cluster lock and
  publishes it; the others fetch it instead of recomputing.
* **Sharded searches.** Every exact search made on the client (a single candidate, the
  release audit's copy evidence) splits the reference (real) rows into one contiguous block
  per worker; each worker searches its block with
  :class:`~synthreview.grouped_search.GroupedReference` and the blocks' results are merged
  exactly on the client: k nearest by (distance, index) (the k nearest of the whole set are
  among the k nearest of each block), counts summed, and per-reference-row results taken
  from the block that owns the row.

Either way the report of a cluster run equals the in-process one
(``tests/test_distributed.py``). Workers need the same ``synthreview`` installed; the rows
travel to them once per search or review (``scatter``). Without a scheduler nothing here runs.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from synthreview.errors import ConfigError
from synthreview.memo import Memo

T = TypeVar("T")


def connect(address: str) -> Any:
    """A client of the Dask scheduler at ``address`` (``tcp://host:8786``, ``inproc://...``)."""
    if not isinstance(address, str) or "://" not in address:
        raise ConfigError(
            f"scheduler must be a Dask scheduler address such as 'tcp://host:8786'; "
            f"got {address!r} instead"
        )
    # imported here, not at the top: Dask is optional and its import costs 0.8 s in every
    # process, which only a review on a cluster needs
    from distributed import Client

    try:
        return Client(address, timeout="20s", set_as_default=False)
    except OSError as exc:
        raise ConfigError(f"could not reach the Dask scheduler at {address}: {exc}") from exc


@contextmanager
def local_cluster(workers: int) -> Iterator[str]:
    """A Dask cluster of ``workers`` processes on this machine for the block; yields its address.

    Each worker is a fresh Python process with one task thread, so candidates reviewed as its
    tasks run side by side on separate cores, out of reach of each other's GIL. The scheduler
    and workers listen on 127.0.0.1 only and serve no dashboard: nothing leaves the machine.
    Starting the processes costs a few seconds (each imports the engine); they stop when the
    block ends.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"workers must be a positive integer; got {workers!r} instead")
    # imported here: Dask is optional (see connect)
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as cluster:
        yield cluster.scheduler_address


def n_workers(client: Any) -> int:
    """Workers the scheduler knows of now (at least 1)."""
    return max(1, len(client.scheduler_info(n_workers=-1).get("workers", {})))


def shard_bounds(n_rows: int, n_shards: int) -> np.ndarray:
    """Balanced contiguous shard edges (``n_shards + 1`` of them) over ``n_rows`` rows."""
    n_shards = max(1, min(n_shards, n_rows))
    return (np.arange(n_shards + 1) * n_rows) // n_shards


def map_shards(
    client: Any,
    fn: Callable[..., Any],
    shards: Sequence[Any],
    *shared: Any,
    done: Callable[[int], None] | None = None,
    **options: Any,
) -> list[Any]:
    """``[fn(shard, *shared, **options) for shard in shards]``, one task per shard.

    ``shared`` values are sent to every worker once (broadcast); the results come back in
    shard order. ``done(i)`` is called on the client as shard ``i`` finishes (any order).
    """
    # imported here: Dask is optional (see connect)
    from distributed import as_completed

    # hash=False: equal arrays of two searches must not share (and free) one key
    sent = client.scatter(list(shared), broadcast=True, hash=False) if shared else []
    blocks = client.scatter(list(shards), hash=False)
    futures = [client.submit(fn, block, *sent, pure=False, **options) for block in blocks]
    try:
        if done is not None:
            position = {future.key: i for i, future in enumerate(futures)}
            # loop=: the client is not the default one (connect)
            for future in as_completed(futures, loop=client.loop):
                done(position[future.key])
        return client.gather(futures)
    finally:
        for future in [*futures, *blocks, *sent]:
            future.release()


def memo_name(prefix: str, key: Hashable) -> str:
    """The cluster-wide name of a memo ``key`` of the review ``prefix`` (a full digest)."""
    return f"{prefix}-{hashlib.blake2b(repr(key).encode(), digest_size=16).hexdigest()}"


class ClusterMemo(Memo):
    """A review's :class:`~synthreview.memo.Memo` shared by its candidate tasks on a cluster.

    Inside a task, ``get(key, compute)`` first looks in this task's own store; then, under a
    ``distributed.Lock`` named after ``key``, fetches the value another task published, or
    computes it and publishes it (``publish_dataset``) for the others. So the real-side work
    runs once per review on the whole cluster, as in-process, and a task that needs it while
    another computes it waits for it instead of doing it again. Values are pure functions of
    the key's inputs, so which task computes a value changes no number.

    The published values are the review's data: :func:`forget` drops them when the review
    ends. ``names`` lists the names this memo used (returned to the client for that).
    """

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix
        self.names: list[str] = []

    def __reduce__(self):
        # as Memo's: a pickled copy starts empty, here with its review's prefix
        return (type(self), (self.prefix,))

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value of ``key`` from this task, the cluster, or ``compute()`` (once)."""
        return super().get(key, lambda: self._shared(key, compute))

    def _shared(self, key: Hashable, compute: Callable[[], T]) -> T:
        # imported here: Dask is optional (see connect); only tasks on a cluster get here
        from distributed import Lock, get_client

        client = get_client()
        name = memo_name(self.prefix, key)
        self.names.append(name)
        with Lock(name):
            if name in client.list_datasets():
                return client.get_dataset(name).result()
            value = compute()
            # a one-element list: scatter would split a tuple value into one key per item
            [future] = client.scatter([value], hash=False)
            client.publish_dataset(future, name=name)
            return value


def forget(client: Any, prefix: str, names: Sequence[str] = ()) -> None:
    """Drop every value :class:`ClusterMemo` published for the review ``prefix``, and the
    locks of those values and of ``names`` (names a task used without publishing)."""
    from distributed import Lock

    published = [name for name in client.list_datasets() if name.startswith(f"{prefix}-")]
    for name in published:
        client.unpublish_dataset(name)
    for name in dict.fromkeys([*published, *names]):
        # the client is not the default one (connect): the lock is told where the scheduler is
        Lock(name, scheduler_rpc=client.scheduler, loop=client.loop).close()
