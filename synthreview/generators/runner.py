"""A generator under review run in a child process, each call with a hard wall-clock deadline.

The shadow-model attack (:mod:`synthreview.metrics.privacy.shadow`) trains the generator many
times. The generator is code the reviewing machine did not write, so it never runs in the
reviewing process:

- it runs in a fresh Python process (``subprocess``, its own session: never a fork of the review
  holding the real tables), which imports it by its name with
  :func:`~synthreview.generators.plugin.load_generator`; a fresh process rather than a
  ``multiprocessing`` child, so a review inside a daemonic Dask worker can start it too;
- each call receives only the shadow training rows it is asked to fit, and ``n`` and ``seed``;
- what it returns comes back as raw bytes holding an Apache Arrow IPC stream (data only: never
  a pickle, which could run code in the reviewing process), checked by
  :func:`~synthreview.generators.plugin.check_generated` and :func:`usable_rows`;
- the child's standard output and error (file descriptors 1 and 2, so ``print``, ``logging``,
  warnings and C extensions alike) go to ``os.devnull``; it answers on a copy of its original
  standard output that only this module writes to: nothing it prints reaches the logs;
- a call that has not answered by its deadline is killed (``SIGKILL`` to its whole process
  group, so processes the generator started die with it) and :class:`GeneratorTimeout` is
  raised; a call that fails, or a child that dies, is a :class:`~synthreview.errors.DataError`
  naming the generator.

>>> with GeneratorProcess("synthreview.generators.builtin:memorise") as g:  # doctest: +SKIP
...     rows = g.sample(train, 100, seed=0, deadline=time.monotonic() + 60)
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
from typing import BinaryIO

import pandas as pd
import pyarrow as pa

from synthreview.errors import DataError
from synthreview.generators.plugin import check_generated, load_generator

__all__ = ["GeneratorProcess", "GeneratorTimeout", "serve", "usable_rows"]

#: seconds a killed child is given to be reaped
_REAP_S = 5.0
# a message is a one-byte kind, an 8-byte big-endian length and the payload. What the child
# sends back is raw bytes: never a pickle, which the reviewing process would have to unpickle
# (and so run whatever the generator put in it)
_READY, _ROWS, _ERROR, _CALL = b"R", b"O", b"E", b"Q"
_HEADER = struct.Struct(">cQ")
# the child: its standard output becomes the answer channel, fds 1 and 2 then point at devnull
# before anything else is imported
_BOOT = """\
import os, sys
answers = os.fdopen(os.dup(1), "wb", buffering=0)
null = os.open(os.devnull, os.O_WRONLY)
os.dup2(null, 1)
os.dup2(null, 2)
sys.stdout = sys.stderr = open(os.devnull, "w")
from synthreview.generators.runner import serve
serve(sys.argv[1], sys.stdin.buffer, answers)
"""


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


def _send(stream: BinaryIO, kind: bytes, payload: bytes) -> None:
    stream.write(_HEADER.pack(kind, len(payload)) + payload)
    stream.flush()


def _receive(stream: BinaryIO) -> tuple[bytes, bytes] | None:
    """The next message on a blocking stream (None at its end)."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    kind, size = _HEADER.unpack(head)
    payload = stream.read(size)
    return (kind, payload) if len(payload) == size else None


def serve(spec: str, requests: BinaryIO, answers: BinaryIO) -> None:
    """The child's loop: load ``spec``, then answer each call until ``requests`` ends.

    Started by :class:`GeneratorProcess` (standard output and error already pointed at
    ``os.devnull``); a call is a pickle of ``(train, n, seed)`` written by the reviewing process.
    """
    try:
        generator = load_generator(spec)
    except Exception as exc:  # the parent reports it; nothing may reach the logs from here
        _send(answers, _ERROR, str(exc).encode("utf-8", "replace"))
        return
    _send(answers, _READY, b"")
    while (message := _receive(requests)) is not None:
        train, n, seed = pickle.loads(message[1])  # from the reviewing process: trusted
        try:
            output = check_generated(generator(train, n, seed), train, spec=spec)
            _send(answers, _ROWS, _to_arrow(output))
        except BaseException as exc:  # a generator may raise anything; it is its call's error
            _send(answers, _ERROR, f"{type(exc).__name__}: {exc}".encode("utf-8", "replace"))


class GeneratorProcess:
    """The generator ``spec`` loaded in a child process (module docstring).

    Parameters
    ----------
    spec : str
        The generator's name as :func:`~synthreview.generators.plugin.load_generator` takes it.

    Use as a context manager: leaving it ends the child (killed when it does not stop). The
    child sees this process's ``sys.path`` and working folder, so it imports what this process
    could.
    """

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self._process: subprocess.Popen[bytes] | None = None
        self._ready = False

    def __enter__(self) -> GeneratorProcess:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self._process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, self.spec],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # its own process group: killed with whatever it starts
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        os.set_blocking(self._process.stdin.fileno(), False)
        os.set_blocking(self._process.stdout.fileno(), False)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """End the child: its input closed, then its process group killed, and reaped."""
        process, self._process = self._process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass  # a pipe the child closed first
        try:
            process.wait(0.5 if self._ready else 0.0)
        except subprocess.TimeoutExpired:
            pass
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            process.wait(_REAP_S)
        except subprocess.TimeoutExpired:
            pass

    def _expired(self, doing: str) -> GeneratorTimeout:
        self.close()
        return GeneratorTimeout(
            f"generator {self.spec!r} did not answer by its deadline while {doing}; its "
            "process was killed"
        )

    def _ended(self, doing: str) -> DataError:
        assert self._process is not None
        try:
            code = self._process.wait(_REAP_S)
        except subprocess.TimeoutExpired:
            code = None
        self.close()
        return DataError(f"generator {self.spec!r}: its process ended while {doing} (exit code "
                         f"{code})")  # fmt: skip

    def _write(self, data: bytes, deadline: float, doing: str) -> None:
        assert self._process is not None and self._process.stdin is not None
        fd = self._process.stdin.fileno()
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._expired(doing)
            _, writable, _ = select.select([], [fd], [], remaining)
            if not writable:
                continue
            try:
                view = view[os.write(fd, view[: 1 << 16]) :]
            except BlockingIOError:
                continue
            except OSError:  # the child is gone
                raise self._ended(doing) from None

    def _read(self, size: int, deadline: float, doing: str) -> bytes:
        assert self._process is not None and self._process.stdout is not None
        fd = self._process.stdout.fileno()
        parts, wanted = [], size
        while wanted:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._expired(doing)
            readable, _, _ = select.select([fd], [], [], remaining)
            if not readable:
                continue
            try:
                chunk = os.read(fd, min(wanted, 1 << 20))
            except BlockingIOError:
                continue
            if not chunk:
                raise self._ended(doing)
            parts.append(chunk)
            wanted -= len(chunk)
        return b"".join(parts)

    def _answer(self, deadline: float, doing: str) -> tuple[bytes, bytes]:
        kind, size = _HEADER.unpack(self._read(_HEADER.size, deadline, doing))
        return kind, self._read(size, deadline, doing)

    def wait_ready(self, *, deadline: float) -> None:
        """Wait until the child has loaded the generator (:meth:`sample` does it first).

        Raises
        ------
        GeneratorTimeout
            Not loaded by ``deadline`` (``time.monotonic()``); the child was killed.
        DataError
            The generator could not be loaded.
        """
        if self._process is None:
            raise GeneratorTimeout(f"generator {self.spec!r}: its process was already ended")
        if not self._ready:
            kind, message = self._answer(deadline, "loading")
            if kind != _READY:
                self.close()
                raise DataError(f"generator {self.spec!r} could not be loaded: {_text(message)}")
            self._ready = True

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
        self.wait_ready(deadline=deadline)
        request = pickle.dumps((train, int(n), int(seed)), protocol=pickle.HIGHEST_PROTOCOL)
        self._write(_HEADER.pack(_CALL, len(request)) + request, deadline, "receiving its rows")
        kind, payload = self._answer(deadline, "fitting and sampling")
        if kind != _ROWS:
            raise DataError(f"generator {self.spec!r} failed: {_text(payload)}")
        try:
            frame = _from_arrow(payload)
        except (pa.ArrowException, ValueError) as exc:
            raise DataError(f"generator {self.spec!r} returned unreadable rows: {exc}") from exc
        return usable_rows(check_generated(frame, train, spec=self.spec), spec=self.spec)
