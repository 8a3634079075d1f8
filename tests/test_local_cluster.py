"""Issue 39 item 2: candidates reviewed side by side in separate processes, the same bytes.

``engine.on_local_cluster(n)`` starts ``n`` worker processes of this machine (a Dask
LocalCluster, one task thread each, listening on 127.0.0.1 only); ``evaluate`` inside it
reviews each candidate as a task there. The report must equal the in-process one byte for
byte (the density attack once differed in a cluster task: tests/test_thread_limits.py).
"""

from __future__ import annotations

import json

import pytest

from synthreview.cli import main
from synthreview.engine import current_engine, on_local_cluster
from synthreview.errors import ConfigError
from synthreview.review import evaluate
from tests.test_distributed import OPTIONS, SECTIONS, _review


def _json(report) -> str:
    return json.dumps(report.to_dict(), sort_keys=True)


def test_candidates_in_two_processes_equal_the_in_process_review():
    review = _review()
    local = evaluate(review, sections=SECTIONS, options=OPTIONS, seed=3)
    messages = []
    with on_local_cluster(2) as engine:
        assert engine.client is not None and engine.task_threads >= 1
        remote = evaluate(
            review,
            sections=SECTIONS,
            options=OPTIONS,
            seed=3,
            progress=lambda fraction, message: messages.append(message),
        )
    assert current_engine().client is None  # the processes stopped with the block
    assert any("done on the cluster" in m for m in messages)
    assert _json(remote) == _json(local)


@pytest.mark.parametrize("workers", [0, True, "2"])
def test_workers_must_be_a_positive_integer(workers):
    with pytest.raises(ConfigError, match="workers must be a positive integer"):
        with on_local_cluster(workers):
            pass


def test_the_cli_refuses_workers_with_a_scheduler(tmp_path, capsys):
    code = main(
        ["review", "--real", "r.csv", "--synthetic", "s.csv", "--out", str(tmp_path / "out"),
         "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"]
    )  # fmt: skip
    assert code == 2
    assert "--workers must be a positive number without --scheduler" in capsys.readouterr().err
