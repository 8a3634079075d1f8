"""Neighbour searches on an existing Dask cluster, sharded by blocks of reference rows.

``evaluate(..., scheduler="tcp://host:8786")`` (CLI ``--scheduler``) connects a
``distributed.Client`` and puts it on the review's :class:`~synthreview.engine.Engine`. Every
exact search then splits the reference (real) rows into one contiguous block per worker;
each worker searches its block with :class:`~synthreview.grouped_search.GroupedReference`
and the blocks' results are merged exactly on the client: k nearest by (distance, index)
(the k nearest of the whole set are among the k nearest of each block), counts summed, and
per-reference-row results taken from the block that owns the row. The report of a cluster
run therefore equals the in-process one (``tests/test_distributed.py``). Workers need the
same ``synthreview`` installed; the rows travel to them once per search (``scatter``).
Without a scheduler nothing here runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from synthreview.errors import ConfigError


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
    shards: Sequence[np.ndarray],
    *shared: Any,
    **options: Any,
) -> list[Any]:
    """``[fn(shard, *shared, **options) for shard in shards]``, one task per shard.

    ``shared`` arrays are sent to every worker once (broadcast); the results come back in
    shard order.
    """
    # hash=False: equal arrays of two searches must not share (and free) one key
    sent = client.scatter(list(shared), broadcast=True, hash=False) if shared else []
    blocks = client.scatter(list(shards), hash=False)
    futures = [client.submit(fn, block, *sent, pure=False, **options) for block in blocks]
    try:
        return client.gather(futures)
    finally:
        for future in [*futures, *blocks, *sent]:
            future.release()
