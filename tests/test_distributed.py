"""A review on a Dask cluster equals the in-process review (candidate tasks, sharded searches)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster
from distributed.protocol.pickle import dumps, loads

import synthreview as sr
from synthreview import neighbors
from synthreview.cli import main
from synthreview.distributed import ClusterMemo, forget, memo_name
from synthreview.engine import Engine, current_engine, on_cluster, using
from synthreview.errors import ConfigError
from synthreview.metrics.fidelity import section as fidelity_section
from synthreview.metrics.fidelity.scan import real_index, tally
from synthreview.neighbors import nearest
from synthreview.options import ReviewOptions
from synthreview.release.audit import Thresholds
from synthreview.release.pipeline import audit_candidate, review_release
from synthreview.review import evaluate

pytestmark = pytest.mark.slow  # Dask clusters, worker processes and reviews on each

SECTIONS = ("fidelity", "privacy")
OPTIONS = ReviewOptions(max_attack=100, n_bootstrap=20)
MOMENT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
THRESHOLDS = Thresholds()


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "hours": rng.normal(40, 8, n).round(1),
            "sex": rng.choice(["F", "M"], n),
        }
    )


def _review():
    real = _frame(300, 0)
    return sr.align(
        real, {"fresh": _frame(250, 2), "copy": real.iloc[:200]}, holdout=_frame(280, 1)
    )


def _release(review, report):
    return review_release(review, report, thresholds=THRESHOLDS, curate=True, timestamp=MOMENT)


SAMPLED = ReviewOptions(max_attack=100, n_bootstrap=20, sample_rows=1000)


def _sampled_tables() -> dict[str, pd.DataFrame]:
    """Tables above SAMPLED.sample_rows: the review's statistics see 1,000-row samples and its
    audit every row; ``copy`` holds 300 training rows."""
    real = _frame(1400, 10)
    return {"real": real, "holdout": _frame(1300, 11), "fresh": _frame(1200, 12),
            "copy": pd.concat([_frame(900, 13), real.iloc[:300]], ignore_index=True)}  # fmt: skip


def _sampled_review(tables: dict[str, pd.DataFrame]):
    return sr.align(tables["real"], {"fresh": tables["fresh"], "copy": tables["copy"]},
                    holdout=tables["holdout"])  # fmt: skip


@pytest.fixture(scope="module")
def sampled_in_process():
    """The in-process sampled review and its curated release (the reference)."""
    review = _sampled_review(_sampled_tables())
    report = evaluate(review, sections=SECTIONS, options=SAMPLED, seed=3)
    assert report.sampling is not None
    return report, _release(review, report)


@pytest.fixture(scope="module")
def in_process():
    """The in-process review of two candidates and its curated release (the reference)."""
    review = _review()
    report = evaluate(review, sections=SECTIONS, options=OPTIONS, seed=3)
    return review, report, _release(review, report)


def _json(report) -> str:
    return json.dumps(report.to_dict(), sort_keys=True)


def test_candidate_tasks_equal_the_in_process_review_and_share_the_real_side(
    cluster, in_process, monkeypatch
):
    review, local, _ = in_process
    calls = []
    real_side = fidelity_section._real_side

    def counted(*args):
        calls.append(1)
        return real_side(*args)

    # processes=False: the workers run in this process, so the patch reaches the tasks
    monkeypatch.setattr(fidelity_section, "_real_side", counted)
    messages = []
    remote = evaluate(
        review,
        sections=SECTIONS,
        options=OPTIONS,
        seed=3,
        scheduler=cluster.scheduler_address,
        progress=lambda fraction, message: messages.append(message),
    )
    for candidate in remote.candidates.values():
        assert candidate.errors == {}
    assert list(remote.candidates) == list(local.candidates)
    assert _json(remote) == _json(local)
    # two candidate tasks, one real side for the whole cluster (as in-process)
    assert len(calls) == 1
    assert any("done on the cluster" in m for m in messages)
    # nothing of the review stays published on the cluster
    with Client(cluster.scheduler_address) as client:
        assert list(client.list_datasets()) == []


@pytest.fixture
def sharded(monkeypatch) -> list[int]:
    """One entry per sharded search (``neighbors.map_shards`` call) from here on."""
    calls: list[int] = []
    map_shards = neighbors.map_shards

    def counted(*args, **kwargs):
        calls.append(1)
        return map_shards(*args, **kwargs)

    monkeypatch.setattr(neighbors, "map_shards", counted)
    return calls


def test_review_and_curated_release_on_a_cluster_equal_the_in_process_ones(
    cluster, in_process, sharded
):
    review, local, local_release = in_process
    assert len(local_release.curations) == 2, "both candidates are re-evaluated after curation"
    with on_cluster(cluster.scheduler_address) as engine:
        assert current_engine().client is engine.client is not None
        remote = evaluate(review, sections=SECTIONS, options=OPTIONS, seed=3)
        remote_release = _release(review, remote)
    assert current_engine().client is None
    # the audit's copy-evidence searches ran on the client, sharded across the workers
    assert sharded
    assert _json(remote) == _json(local)
    assert sorted(remote_release.files) == sorted(local_release.files)
    for name, content in local_release.files.items():
        assert remote_release.files[name] == content, name


def test_a_sampled_review_and_its_every_row_audit_on_a_cluster_equal_the_in_process_ones(
    cluster, sampled_in_process, sharded
):
    """Statistics on samples as candidate tasks, the every-row audit's exact searches sharded
    by blocks of training rows on the workers: the report and every filed byte are equal."""
    local, local_release = sampled_in_process
    assert local_release.audits["copy"]["removed"].iloc[900:].all(), "every planted row removed"
    review = _sampled_review(_sampled_tables())
    with on_cluster(cluster.scheduler_address):
        remote = evaluate(review, sections=SECTIONS, options=SAMPLED, seed=3)
        assert not sharded, "two candidates: the statistics ran as candidate tasks"
        # the every-row audit (1,200 synthetic rows against 1,400 training rows) is sharded
        audit_candidate(remote, "copy", THRESHOLDS, review=review)
        assert sharded
        remote_release = _release(review, remote)
    assert _json(remote) == _json(local)
    assert sorted(remote_release.files) == sorted(local_release.files)
    for name, content in local_release.files.items():
        assert remote_release.files[name] == content, name


def test_the_candidate_task_payload_pickles(in_process):
    """A process-based cluster pickles (Dask's pickle, cloudpickle as fallback) what a task
    receives and returns; check that it round-trips."""
    review, local, _ = in_process
    context = local.context
    payload = (review, context.encoder, context.embedding, local.candidates)
    restored_review, _, embedding, candidates = loads(dumps(payload))
    assert list(restored_review.synthetic) == list(review.synthetic)
    np.testing.assert_array_equal(
        embedding.transform(context.encoded["fresh"]), context.embedded["fresh"]
    )
    for name, candidate in local.candidates.items():
        assert json.dumps(candidates[name].to_dict(), sort_keys=True) == json.dumps(
            candidate.to_dict(), sort_keys=True
        )


def test_cluster_memo_computes_once_and_forget_drops_it(cluster):
    def task(prefix):
        memo = ClusterMemo(prefix)
        value = memo.get(("key", 1), lambda: np.arange(3))
        return memo.names, value

    with Client(cluster.scheduler_address) as client:
        # the second task finds the first one's value (a value computed twice would differ)
        first = client.submit(task, "review-a", pure=False).result()
        stamp = np.random.default_rng().integers(1 << 30)
        second = client.submit(
            lambda p: ClusterMemo(p).get(("key", 1), lambda: np.full(3, stamp)), "review-a"
        ).result()
        np.testing.assert_array_equal(second, first[1])
        assert list(client.list_datasets()) == [memo_name("review-a", ("key", 1))]
        forget(client, "review-a", first[0])
        assert list(client.list_datasets()) == []


def test_sharded_searches_equal_local_ones_with_ties(cluster):
    rng = np.random.default_rng(0)
    real = rng.normal(size=(500, 4)).astype(np.float32)
    real[300:] = real[:200]  # exact duplicates across the two shards: ties by global index
    other = np.vstack([real[:50], rng.normal(size=(200, 4)).astype(np.float32)])
    radii = nearest(real, real, k=5, exclude_self=True).distances[:, -1]
    options = {
        "recall_radii": radii,
        "cd_g": np.linalg.norm(other, axis=1),
        "ball_radii": radii,
        "own_radii": nearest(other, other, k=5, exclude_self=True).distances[:, -1],
    }
    want_knn = nearest(other, real, k=3)
    want_self = nearest(real, real, k=2, exclude_self=True)
    want = tally(real_index(real, radii), other, **options)
    with Client(cluster.scheduler_address) as client, using(Engine(client=client)):
        got_knn = nearest(other, real, k=3)
        got_self = nearest(real, real, k=2, exclude_self=True)
        got = tally(real_index(real, radii), other, **options)
    np.testing.assert_array_equal(got_knn.indices, want_knn.indices)
    np.testing.assert_array_equal(got_knn.distances, want_knn.distances)
    np.testing.assert_array_equal(got_self.indices, want_self.indices)
    for field in want.__dataclass_fields__:
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field))


def test_a_bad_scheduler_address_is_a_config_error():
    review = sr.align(_frame(50, 0), {"a": _frame(50, 1)})
    with pytest.raises(ConfigError, match="scheduler must be"):
        evaluate(review, sections=("fidelity",), scheduler="localhost")


def test_cli_refuses_a_bad_scheduler_address(tmp_path, capsys):
    real, synthetic = tmp_path / "real.csv", tmp_path / "synthetic.csv"
    _frame(60, 0).to_csv(real, index=False)
    _frame(60, 1).to_csv(synthetic, index=False)
    files = ["--real", str(real), "--synthetic", str(synthetic), "--out", str(tmp_path / "o")]
    code = main(["review", *files, "--scheduler", "localhost:8786", "--quiet"])
    assert code == 2
    assert "scheduler must be a Dask scheduler address" in capsys.readouterr().err


def _partitioned(frame: pd.DataFrame, folder, parts: int = 2):
    """``frame`` written as a folder of ``parts`` Parquet files (row blocks, in order)."""
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), parts)):
        frame.iloc[rows].to_parquet(folder / f"part-{i}.parquet", index=False)
    return folder


def test_a_two_process_cluster_on_parquet_partitions_equals_the_in_process_review(
    in_process, sampled_in_process, tmp_path
):
    """Two worker *processes* read the tables' Parquet partitions and run the review; the
    report equals the in-process one, for a review on every row and for one on samples with
    its curated release. The workers unpickle the tasks, so they must import synthreview:
    here from this checkout (PYTHONPATH), on a real cluster because the README has
    ``pip install .`` run on every machine, the scheduler's included."""
    _, local, _ = in_process
    sampled_local, sampled_release = sampled_in_process
    sampled_folders = {
        name: _partitioned(t, tmp_path / f"sampled-{name}") for name, t in _sampled_tables().items()
    }
    real = _frame(300, 0)
    tables = {"real": real, "holdout": _frame(280, 1), "fresh": _frame(250, 2),
              "copy": real.iloc[:200]}  # fmt: skip
    folders = {name: _partitioned(t, tmp_path / name) for name, t in tables.items()}
    root = str(Path(sr.__file__).resolve().parents[1])
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
        env={"PYTHONPATH": root},
    ) as cluster, Client(cluster) as client:  # fmt: skip
        pids = set(client.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids, "two worker processes"
        read = {
            name: dd.read_parquet(str(folder)).compute().reset_index(drop=True)
            for name, folder in folders.items()
        }
        assert all(dd.read_parquet(str(f)).npartitions == 2 for f in folders.values())
        again = sr.align(
            read["real"], {"fresh": read["fresh"], "copy": read["copy"]}, holdout=read["holdout"]
        )
        remote = evaluate(
            again, sections=SECTIONS, options=OPTIONS, seed=3,
            scheduler=cluster.scheduler_address,
        )  # fmt: skip
        # the sampled review: read on the workers, its statistics and audit on the cluster
        read = {
            name: dd.read_parquet(str(folder)).compute().reset_index(drop=True)
            for name, folder in sampled_folders.items()
        }
        sampled = _sampled_review(read)
        with on_cluster(cluster.scheduler_address):
            sampled_remote = evaluate(sampled, sections=SECTIONS, options=SAMPLED, seed=3)
            sampled_remote_release = _release(sampled, sampled_remote)
    for candidate in remote.candidates.values():
        assert candidate.errors == {}
    assert _json(remote) == _json(local)
    assert _json(sampled_remote) == _json(sampled_local)
    assert sampled_remote_release.files == sampled_release.files


def test_the_readme_steps_for_parquet_partitions_run_as_written(cluster, tmp_path, monkeypatch):
    """The README's Python block for partitioned tables, with only the scheduler address
    replaced by this test cluster's: the workers read the partitions, the review and the
    curated release run on the cluster."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = [b.split("```", 1)[0] for b in readme.split("```python\n")[1:]]
    (block,) = [b for b in blocks if "dd.read_parquet" in b]
    assert block.count("tcp://10.0.0.5:8786") == 2
    real = _frame(300, 0)
    tables = {"train": real, "holdout": _frame(280, 1),
              "ctgan": pd.concat([_frame(200, 2), real.iloc[:50]], ignore_index=True)}  # fmt: skip
    for name, table in tables.items():
        _partitioned(table, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(block.replace("tcp://10.0.0.5:8786", cluster.scheduler_address), "README", "exec"),
         scope)  # fmt: skip
    report, release = scope["report"], scope["release"]
    assert list(report.candidates) == ["ctgan"]
    assert report.inputs[0]["rows"] == 300
    assert release.audits["ctgan"]["removed"].iloc[200:].all(), "the 50 copied rows are removed"
