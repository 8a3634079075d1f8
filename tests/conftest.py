"""Shared fixtures: the real-browser harness (streamlit run + Playwright + Debian chromium)."""

from __future__ import annotations

import os
import pickle
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from distributed import LocalCluster
from filelock import FileLock

from tests.e2e_utils import CHROMIUM_ARGS, open_dashboard, serving_dashboard


def pytest_collection_modifyitems(config, items):
    """Real-browser tests are slow too: ``-m "not slow"`` (the quick loop) leaves them out."""
    for item in items:
        if item.get_closest_marker("e2e") is not None:
            item.add_marker(pytest.mark.slow)


ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARTIFACTS = ROOT / "artifacts"
#: training rows of the table demo (record.session.DEMO_ROWS_ENV): the session fixtures review
#: it once (the stored record, demo_record_folder, and the dashboard session of the page tests,
#: demo_run) and the browser tests' servers load it (the full 5,000-row demo takes minutes to
#: review on 2 cores; the decisions on these rows are still the engine's own)
RECORD_ROWS = 300


def _built_once(tmp_path_factory, worker_id: str, name: str, build):
    """``build()``, computed once per test run and shared by the xdist workers.

    The suite runs in two worker processes (``-n 2``), each with its own session fixtures: a
    demo record built on both cost both workers its whole build. The first worker to ask builds
    it and leaves a pickle beside the workers' temporary folders (their common parent); the
    others wait on a file lock and read it. Without xdist (``worker_id == "master"``) it is
    built here.
    """
    if worker_id == "master":
        return build()
    path = tmp_path_factory.getbasetemp().parent / f"{name}.pickle"
    with FileLock(f"{path}.lock"):
        if path.is_file():
            return pickle.loads(path.read_bytes())
        value = build()
        path.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        return value


@pytest.fixture(scope="module")
def cluster():
    """Two single-threaded Dask workers in this process (one cluster per test module): the
    shards and partition reads really spread over two workers, and nothing forks."""
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as local:
        yield local


@pytest.fixture(scope="session")
def server_register(tmp_path_factory) -> Path:
    """The decision register of the browser tests' server: an operator's setting
    (``SYNTHREVIEW_REGISTER``), never typed in a browser (docs/security.md)."""
    return tmp_path_factory.mktemp("register") / "register.sqlite"


@contextmanager
def _streamlit(log_path: Path, env: dict[str, str]) -> Iterator[str]:
    """``streamlit run app.py`` on a free loopback port with ``env`` added to this process's
    environment; yields its URL once healthy; stops it (its log goes to ``log_path``)."""
    with serving_dashboard(log_path, {**os.environ, **env}) as (_, url):
        yield url


@pytest.fixture(scope="session")
def streamlit_url(tmp_path_factory, server_register):
    """Start ``streamlit run app.py`` on the demo (``RECORD_ROWS``) on a free loopback port; yield
    its URL; stop it. Tests whose subject is a run (Run review, uploads, curation in the
    session) use it; tests of what a review shows use :func:`table_record_server`."""
    env = {"SYNTHREVIEW_DEMO_ROWS": str(RECORD_ROWS), "SYNTHREVIEW_REGISTER": str(server_register)}
    with _streamlit(tmp_path_factory.mktemp("streamlit") / "server.log", env) as url:
        yield url


@dataclass(frozen=True)
class RecordServer:
    """A dashboard server that opens a stored review record, as ``synthreview show`` does.

    Attributes
    ----------
    url : str
    record : ReviewRecord
        The record as written (signed).
    folder : Path
        The review folder the server opens (``report.json`` and the rest, as stored).
    """

    url: str
    record: Any
    folder: Path


@pytest.fixture(scope="session")
def record_key(tmp_path_factory):
    """The key pair the browser tests' stored records are signed with (``KeyFiles``)."""
    from synthreview.release.signing import generate_keys

    return generate_keys(tmp_path_factory.mktemp("record_key"))


def _record_server(tmp_path_factory, record, key, name: str, demo_rows: int | None):
    """Write ``record`` signed with ``key`` to a new folder and serve it opened: the browser
    only renders, nothing is recomputed. ``demo_rows``: the server's table demo size, so that
    *Load the demo* on the Data page supplies the record's own input files (same sha256) to the
    views that draw rows."""
    from synthreview.record.store import OPEN_ENV, OPEN_KEY_ENV, write_record
    from synthreview.release.signing import load_private_key

    root = tmp_path_factory.mktemp(f"shown_{name}")
    folder = root / name
    signed = write_record(record, folder, key=load_private_key(key.private.read_bytes()))
    env = {
        OPEN_ENV: str(folder),
        OPEN_KEY_ENV: str(key.public),
        # its own register: what a test files never shows in another server's History
        "SYNTHREVIEW_REGISTER": str(root / "register.sqlite"),
    }
    if demo_rows is not None:
        env["SYNTHREVIEW_DEMO_ROWS"] = str(demo_rows)
    with _streamlit(root / "server.log", env) as url:
        yield RecordServer(url=url, record=signed, folder=folder)


@pytest.fixture(scope="session")
def table_record_server(tmp_path_factory, demo_record_folder, record_key):
    """The table demo's stored record (``demo_record_folder``, signed) open on its own server;
    its table demo is the record's (``RECORD_ROWS``), so loading it supplies the row views."""
    record, _ = demo_record_folder
    yield from _record_server(tmp_path_factory, record, record_key, "table", RECORD_ROWS)


@pytest.fixture(scope="session")
def glucose_record_server(tmp_path_factory, demo_glucose_record_folder, record_key):
    """The glucose demo's stored record (``demo_glucose_record_folder``, signed) open on its
    own server. Its inputs are the demo's first 40 day traces, which no Data page source
    loads: its trace heatmaps say which files they need."""
    record, _ = demo_glucose_record_folder
    yield from _record_server(tmp_path_factory, record, record_key, "glucose", None)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Drive Debian's chromium; a missing browser fails the run (it must not silently skip)."""
    if not Path(CHROMIUM).exists() and not shutil.which(CHROMIUM):
        pytest.fail(f"no chromium at {CHROMIUM}: run `apt-get install -y chromium` (see .ci/run)")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    """A tall viewport (the app scrolls inside its main block) and downloads enabled."""
    return {
        **browser_context_args,
        "viewport": {"width": 1400, "height": 1600},
        "accept_downloads": True,
    }


@pytest.fixture(autouse=True, scope="session")
def _single_threaded_torch():
    """Tests run beside each other on 2 cores: one torch thread avoids oversubscription."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture
def meeting(browser, streamlit_url):
    """A 1280x720 page (downloads accepted) on the demo server, the demo loaded and nothing
    computed yet: for tests whose subject is a run (they press Run review)."""
    context, page = open_dashboard(browser, streamlit_url, 300_000)
    yield page
    context.close()


@pytest.fixture
def table_record_page(browser, table_record_server):
    """A 1280x720 page (downloads accepted) on the table demo's stored record: the Overview
    shows its decisions, nothing is computed in the browser's session."""
    context, page = open_dashboard(browser, table_record_server.url, 300_000)
    yield page
    context.close()


@pytest.fixture
def glucose_record_page(browser, glucose_record_server):
    """A 1280x720 page (downloads accepted) on the glucose demo's stored record."""
    context, page = open_dashboard(browser, glucose_record_server.url, 300_000)
    yield page
    context.close()


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory, worker_id):
    """The table demo (``RECORD_ROWS`` training rows, seed 0) loaded in a dashboard session and
    reviewed once (Run review): ``(review, stored)``. Page tests open their page on it with
    ``page_helpers.page_after_run`` instead of pressing Run review on the same data again.
    Built once per test run (:func:`_built_once`)."""
    from synthreview import demo
    from tests.page_helpers import reviewed_session

    def build():
        review = demo.tables(seed=0, n_train=RECORD_ROWS)
        return review, reviewed_session(review)

    return _built_once(tmp_path_factory, worker_id, "demo_run", build)


@pytest.fixture(scope="session")
def demo_record_folder(tmp_path_factory, worker_id):
    """The table demo's review record (300 training rows), built once per test run
    (:func:`_built_once`) and written unsigned, a folder per worker: ``(record, folder)``.
    Tests open the folder instead of recomputing a review."""
    from synthreview.record.demo import demo_record
    from synthreview.record.store import write_record

    record = _built_once(
        tmp_path_factory, worker_id, "demo_record", lambda: demo_record(n_train=RECORD_ROWS)
    )
    folder = tmp_path_factory.mktemp("record") / "demo"
    write_record(record, folder)
    return record, folder


@pytest.fixture(scope="session")
def demo_glucose_record_folder(tmp_path_factory, worker_id):
    """The glucose demo's review record (40 day traces a source), built once per test run
    (:func:`_built_once`, about 15 s on 2 cores) and written unsigned, a folder per worker:
    ``(record, folder)``."""
    from synthreview.record.demo import demo_glucose_record
    from synthreview.record.store import write_record

    record = _built_once(tmp_path_factory, worker_id, "demo_glucose_record", demo_glucose_record)
    folder = tmp_path_factory.mktemp("record") / "glucose"
    write_record(record, folder)
    return record, folder
