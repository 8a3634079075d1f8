"""A generator under review run in a child process, each call with a hard wall-clock deadline.

The shadow-model attack (:mod:`synthreview.metrics.privacy.shadow`) trains the generator many
times. The generator is code the reviewing machine did not write, so it never runs in the
reviewing process:

- it runs in a child started by ``multiprocessing``'s *forkserver* (a fresh process that has
  imported only this module, never a fork of the review holding the real tables), which imports
  it by its name with :func:`~synthreview.generators.plugin.load_generator`;
- each call receives only the shadow training rows it is asked to fit, and ``n`` and ``seed``;
- what it returns comes back as raw bytes holding an Apache Arrow IPC stream (data only: never
  a pickle, which could run code in the reviewing process), checked by
  :func:`~synthreview.generators.plugin.check_generated` and :func:`usable_rows`;
- the child's standard output and error (file descriptors 1 and 2, so ``print``, ``logging``,
  warnings and C extensions alike) go to ``os.devnull``: nothing it prints reaches the logs;
- a call that has not answered by its deadline is killed (``SIGKILL``) and
  :class:`GeneratorTimeout` is raised; a call that fails, or a child that dies, is a
  :class:`~synthreview.errors.DataError` naming the generator.

>>> with GeneratorProcess("synthreview.generators.builtin:memorise") as g:  # doctest: +SKIP
...     rows = g.sample(train, 100, seed=0, deadline=time.monotonic() + 60)
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from multiprocessing.connection import Connection, wait
from types import TracebackType

import pandas as pd
import pyarrow as pa

from synthreview.errors import DataError
from synthreview.generators.plugin import check_generated, load_generator

__all__ = ["GeneratorProcess", "GeneratorTimeout", "usable_rows"]

_CONTEXT = multiprocessing.get_context("forkserver")
#: seconds a killed child is given to be reaped
_REAP_S = 5.0
# what the child sends back is raw bytes, a one-byte kind and its payload: never a pickle, which
# the reviewing process would have to unpickle (and so run whatever the generator put in it)
_READY, _ROWS, _ERROR = b"R", b"O", b"E"


class GeneratorTimeout(DataError):
    """A generator call did not answer by its deadline; its process was killed."""


def usable_rows(frame: pd.DataFrame, *, spec: str) -> pd.DataFrame:
    """``frame`` without rows that are missing in every column; an error when none is left.

    A generator that returns only empty rows (all NaN/None) has produced nothing an attack
    can compare with its target: judging it would pass a generator the attack never saw.

    Raises
    ------
    DataError
        ``frame`` has no row with at least one value.
    """
    kept = frame[frame.notna().any(axis=1)]
    if kept.empty:
        raise DataError(
            f"generator {spec!r} must return rows with values; got {len(frame)} rows, every "
            "one missing in every column"
        )
    return kept.reset_index(drop=True)


def _to_arrow(frame: pd.DataFrame) -> bytes:
    sink = pa.BufferOutputStream()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _from_arrow(data: bytes) -> pd.DataFrame:
    return pa.ipc.open_stream(data).read_all().to_pandas()


def _text(payload: bytes) -> str:
    return payload.decode("utf-8", "replace")


def _silence() -> None:
    """Point file descriptors 1 and 2 (and ``sys.stdout``/``sys.stderr``) at ``os.devnull``."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    # kept open as long as the child lives
    sys.stdout = open(os.devnull, "w")
    sys.stderr = open(os.devnull, "w")


def _serve(spec: str, conn: Connection) -> None:
    """The child: load ``spec``, then answer ``(train, n, seed)`` requests until ``None``."""
    _silence()
    try:
        generator = load_generator(spec)
    except Exception as exc:  # the parent reports it; nothing may reach the logs from here
        conn.send_bytes(_ERROR + str(exc).encode("utf-8", "replace"))
        return
    conn.send_bytes(_READY)
    while True:
        request = conn.recv()  # from the reviewing process: trusted
        if request is None:
            return
        train, n, seed = request
        try:
            output = check_generated(generator(train, n, seed), train, spec=spec)
            conn.send_bytes(_ROWS + _to_arrow(output))
        except BaseException as exc:  # a generator may raise anything; it is its call's error
            conn.send_bytes(_ERROR + f"{type(exc).__name__}: {exc}".encode("utf-8", "replace"))


class GeneratorProcess:
    """The generator ``spec`` loaded in a child process (module docstring).

    Parameters
    ----------
    spec : str
        The generator's name as :func:`~synthreview.generators.plugin.load_generator` takes it.

    Use as a context manager: leaving it ends the child (killed when it does not stop).
    """

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self._conn: Connection | None = None
        self._process: multiprocessing.process.BaseProcess | None = None
        self._ready = False

    def __enter__(self) -> GeneratorProcess:
        # the child is forked from a server that imported only this module (and what it
        # imports); set before the server's first start, later calls change nothing
        _CONTEXT.set_forkserver_preload([__name__])
        parent, child = _CONTEXT.Pipe()
        self._process = _CONTEXT.Process(
            target=_serve, args=(self.spec, child), name="synthreview-generator", daemon=True
        )
        self._process.start()
        child.close()
        self._conn = parent
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Ask the child to stop, kill it when it does not, and reap it."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is None or conn is None:
            return
        if process.is_alive() and self._ready:
            try:
                conn.send(None)
            except OSError:
                pass
            process.join(1.0)
        if process.is_alive():
            process.kill()
            process.join(_REAP_S)
        conn.close()

    def _answer(self, deadline: float, doing: str) -> tuple[bytes, bytes]:
        """The child's next message, or kill it at ``deadline`` (``time.monotonic()``)."""
        assert self._conn is not None and self._process is not None
        remaining = max(deadline - time.monotonic(), 0.0)
        ready = wait([self._conn, self._process.sentinel], timeout=remaining)
        if self._conn in ready:
            try:
                message = self._conn.recv_bytes()
                return message[:1], message[1:]
            except (EOFError, OSError):
                pass  # the child ended while answering: reported below
        elif not ready:
            self.close()
            raise GeneratorTimeout(
                f"generator {self.spec!r} did not answer by its deadline while {doing}; its "
                "process was killed"
            )
        self._process.join(_REAP_S)
        code = self._process.exitcode
        self.close()
        raise DataError(
            f"generator {self.spec!r}: its process ended while {doing} (exit code {code})"
        )

    def sample(self, train: pd.DataFrame, n: int, seed: int, *, deadline: float) -> pd.DataFrame:
        """``n`` rows from the generator fitted on ``train``, checked, by ``deadline``.

        Parameters
        ----------
        train : pandas.DataFrame
            The only rows the child receives.
        n, seed : int
        deadline : float
            ``time.monotonic()`` by which the answer must be in (the child's start counts).

        Returns
        -------
        pandas.DataFrame
            The columns of ``train`` in its order, rows with at least one value.

        Raises
        ------
        GeneratorTimeout
            No answer by ``deadline``; the child was killed (later calls raise the same).
        DataError
            The generator could not be loaded, raised, returned something that is not a table
            with the training columns and a row with values, or its process died.
        """
        if self._process is None or self._conn is None:
            raise GeneratorTimeout(f"generator {self.spec!r}: its process was already ended")
        if not self._ready:
            kind, message = self._answer(deadline, "loading")
            if kind != _READY:
                self.close()
                raise DataError(f"generator {self.spec!r} could not be loaded: {_text(message)}")
            self._ready = True
        try:
            self._conn.send((train, int(n), int(seed)))
        except OSError:
            pass  # the child is gone: _answer reports how it ended
        kind, payload = self._answer(deadline, "fitting and sampling")
        if kind != _ROWS:
            raise DataError(f"generator {self.spec!r} failed: {_text(payload)}")
        try:
            frame = _from_arrow(payload)
        except (pa.ArrowException, ValueError) as exc:
            raise DataError(f"generator {self.spec!r} returned unreadable rows: {exc}") from exc
        return usable_rows(check_generated(frame, train, spec=self.spec), spec=self.spec)
