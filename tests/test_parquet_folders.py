"""Tables stored as folders of Parquet partitions (issue #26, item 4).

A folder reads as the single Parquet file holding the same rows (frames, dtypes, cells as
stored), under a digest of its partitions; bad folders exit 2 naming the role and the problem;
the CLI on folders writes the report and released files it writes for single files; and with
``--scheduler`` the workers read the partitions and the review is the same, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from distributed import Client, LocalCluster
from distributed.diagnostics.plugin import SchedulerPlugin
from distributed.utils import key_split

from synthreview.cli import main
from synthreview.errors import DataError
from synthreview.io.parquet import folder_sha256
from synthreview.io.tables import read_table
from synthreview.release.signing import generate_keys
from tests.test_release_ships import policy_text

# ---------------------------------------------------------------------------------------------
# data


def _table(n: int, seed: int) -> pd.DataFrame:
    """Numbers (with a missing value), text (with a missing value), flags and dates."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "hours": rng.normal(40, 8, n).round(1),
            "sex": rng.choice(["F", "M"], n),
            "city": rng.choice(["Oslo", "Lima", "Pune", "Kyiv"], n),
            "smoker": rng.choice([True, False], n),
            "visit": pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 365, n), "D"),
        }
    )
    frame.loc[3, "hours"] = np.nan
    frame.loc[5, "city"] = None
    return frame


def _partitioned(frame: pd.DataFrame, folder: Path, parts: int = 3) -> Path:
    """``frame`` as ``parts`` Parquet files of consecutive rows, named as dask names them."""
    folder.mkdir(parents=True)
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), parts)):
        frame.iloc[rows].to_parquet(folder / f"part.{i}.parquet", index=False)
    return folder


def _digest(folder: Path, names: list[str]) -> str:
    """The documented folder digest, computed here from its definition (``sha256sum``'s lines)."""
    lines = "".join(
        f"{hashlib.sha256((folder / n).read_bytes()).hexdigest()}  {n}\n" for n in names
    )
    return hashlib.sha256(lines.encode()).hexdigest()


def _same_table(folder, single) -> None:
    pd.testing.assert_frame_equal(folder.frame, single.frame)
    pd.testing.assert_frame_equal(folder.raw, single.raw)
    assert list(folder.frame.dtypes) == list(single.frame.dtypes)
    assert list(folder.raw.dtypes) == list(single.raw.dtypes)
    assert folder.source_format == single.source_format == "parquet"
    assert folder.notices == single.notices


# ---------------------------------------------------------------------------------------------
# reading


def test_a_folder_of_three_partitions_reads_as_the_single_file(tmp_path):
    frame = _table(90, 0)
    # an ID beyond 2**53 in one partition only: the whole column stays text, as in one file
    frame["account"] = np.arange(90, dtype=np.int64)
    frame.loc[70, "account"] = 2**60
    frame.to_parquet(tmp_path / "train.parquet", index=False)
    folder = _partitioned(frame, tmp_path / "train")
    single = read_table(tmp_path / "train.parquet", role="real")
    read = read_table(folder, role="real")
    _same_table(read, single)
    assert read.name == single.name == "train"
    assert read.frame["account"].iloc[70] == str(2**60), "no rounding through float64"
    assert read.sha256 == _digest(folder, ["part.0.parquet", "part.1.parquet", "part.2.parquet"])
    assert read.sha256 != single.sha256


def test_partitions_are_joined_in_numeric_name_order_and_metadata_files_skipped(tmp_path):
    """``part.2`` before ``part.10`` (dask's order); ``_metadata``, ``_SUCCESS`` and dot files
    are writers' metadata and are neither read nor digested."""
    frame = _table(60, 1)
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    folder = tmp_path / "t"
    folder.mkdir()
    blocks = np.array_split(np.arange(60), 3)
    for name, rows in zip(["part.2.parquet", "part.10.parquet", "part.11.pq"], blocks, strict=True):
        frame.iloc[rows].to_parquet(folder / name, index=False)
    (folder / "_SUCCESS").write_bytes(b"")
    (folder / "_common_metadata").write_bytes(b"not read")
    (folder / ".part.2.parquet.crc").write_bytes(b"\x00\x01")
    read = read_table(folder)
    _same_table(read, read_table(tmp_path / "t.parquet"))
    assert read.sha256 == _digest(folder, ["part.2.parquet", "part.10.parquet", "part.11.pq"])
    (folder / "_SUCCESS").write_bytes(b"changed")
    assert read_table(folder).sha256 == read.sha256


def test_a_folder_written_by_dask_reads_as_the_frame_written_as_one_file(tmp_path):
    """``dask.dataframe.to_parquet`` stores its index as ``__null_dask_index__``: not data."""
    import dask.dataframe as dd

    frame = _table(80, 2)
    dd.from_pandas(frame, npartitions=3).to_parquet(tmp_path / "ctgan")
    assert len(list((tmp_path / "ctgan").glob("*.parquet"))) == 3
    frame.to_parquet(tmp_path / "ctgan.parquet", index=False)
    read = read_table(tmp_path / "ctgan", role="synthetic")
    assert list(read.frame.columns) == list(frame.columns)
    pd.testing.assert_frame_equal(
        read.frame, read_table(tmp_path / "ctgan.parquet", role="synthetic").frame
    )


def test_the_folder_digest_is_stable_and_follows_every_partition(tmp_path):
    frame = _table(90, 3)
    folder = _partitioned(frame, tmp_path / "t")
    first = read_table(folder).sha256
    assert read_table(folder).sha256 == first
    assert folder_sha256([(p.name, hashlib.sha256(p.read_bytes()).hexdigest())
                          for p in sorted(folder.iterdir())]) == first  # fmt: skip
    # one partition's bytes change (one value): a different digest
    changed = frame.iloc[30:60].copy()
    changed.iloc[0, 0] += 1
    changed.to_parquet(folder / "part.1.parquet", index=False)
    second = read_table(folder).sha256
    assert second != first
    # the same bytes under another name: the name is part of the digest
    (folder / "part.2.parquet").rename(folder / "part.3.parquet")
    assert read_table(folder).sha256 not in (first, second)


def test_partitions_larger_than_the_limit_together_are_refused(tmp_path):
    folder = _partitioned(_table(90, 4), tmp_path / "t")
    total = sum(p.stat().st_size for p in folder.iterdir())
    biggest = max(p.stat().st_size for p in folder.iterdir())
    assert biggest < total - 1
    with pytest.raises(DataError, match=rf"3 partition files .* hold {total:,} bytes; the limit"):
        read_table(folder, role="holdout", max_bytes=total - 1)
    assert read_table(folder, max_bytes=total).frame.shape == (90, 6)


def test_a_nested_column_in_one_partition_is_refused_naming_it(tmp_path):
    folder = _partitioned(_table(60, 5), tmp_path / "t", parts=2)
    nested = pa.table({"age": [1, 2], "tags": [[1], [2, 3]]})
    pq.write_table(nested, folder / "part.2.parquet")
    with pytest.raises(DataError, match=r"partition 'part.2.parquet' column 'tags' has the nested"):
        read_table(folder)


# ---------------------------------------------------------------------------------------------
# bad folders on the command line: exit 2, role and problem named, nothing written


@pytest.fixture
def no_computing(monkeypatch):
    """Every section and the embedding raise: a bad input must stop the run before them."""

    def never(*args, **kwargs):
        raise AssertionError("computed despite a bad input")

    for name in ("evaluate_fidelity", "evaluate_privacy", "evaluate_utility", "prepare"):
        monkeypatch.setattr(f"synthreview.review.{name}", never)


def _empty(folder: Path) -> None:
    folder.mkdir()


def _with_text_files(folder: Path) -> None:
    _partitioned(_table(60, 6), folder)
    (folder / "notes.txt").write_text("written by hand")
    (folder / "part.3.csv").write_text("age\n1\n")


def _with_other_types(folder: Path) -> None:
    frame = _table(60, 6)
    _partitioned(frame, folder, parts=2)
    other = frame.iloc[:10].assign(age=frame["age"].iloc[:10].astype(str))
    other.to_parquet(folder / "part.2.parquet", index=False)


def _with_a_missing_column(folder: Path) -> None:
    frame = _table(60, 6)
    _partitioned(frame, folder, parts=2)
    frame.iloc[:10].drop(columns="city").to_parquet(folder / "part.2.parquet", index=False)


def _with_a_subfolder(folder: Path) -> None:
    _partitioned(_table(60, 6), folder)
    (folder / "year=2024").mkdir()


def _with_a_damaged_partition(folder: Path) -> None:
    _partitioned(_table(60, 6), folder)
    (folder / "part.1.parquet").write_bytes(b"age,hours\n1,2\n")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_empty, r"'[^']*ctgan' is a folder; expected a CSV, TSV or Parquet file, or a folder of "
                 r"Parquet partition files \(\*\.parquet, \*\.pq\); got an empty folder"),
        (_with_text_files, r"is a folder holding files that are not Parquet partitions: "
                           r"'notes.txt', 'part.3.csv'; expected only Parquet partition files"),
        (_with_other_types, r"partition 'part.2.parquet' column 'age' is (large_)?string; "
                            r"expected int64 as in partition 'part.0.parquet'"),
        (_with_a_missing_column, r"partition 'part.2.parquet' lacks column 'city' of partition "
                                 r"'part.0.parquet'; expected the same columns"),
        (_with_a_subfolder, r"holds the folder\(s\) 'year=2024'; expected Parquet partition "
                            r"files .* directly in the folder"),
        (_with_a_damaged_partition, r"partition 'part.1.parquet' is named like a Parquet file "
                                    r"but does not start with the Parquet magic bytes"),
    ],
)  # fmt: skip
def test_a_bad_folder_exits_2_naming_the_role_and_the_problem(
    tmp_path, capsys, no_computing, make, message
):
    real = _partitioned(_table(60, 7), tmp_path / "train")
    make(tmp_path / "ctgan")
    out = tmp_path / "out"
    argv = ["review", "--real", str(real), "--synthetic", str(tmp_path / "ctgan"),
            "--out", str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: synthetic table 'ctgan'"), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert re.search(message, err), err
    # neither --out nor its temporary folder beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctgan", "train"]


def test_a_bad_holdout_folder_names_the_holdout(tmp_path, capsys, no_computing):
    real = _partitioned(_table(60, 7), tmp_path / "train")
    (tmp_path / "holdout").mkdir()
    argv = ["review", "--real", str(real), "--holdout", str(tmp_path / "holdout"),
            "--synthetic", str(real), "--out", str(tmp_path / "out"), "--quiet"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: holdout table 'holdout':") and "empty folder" in err, err
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------
# the CLI on folders, in process and on a cluster

TABLES = ("train", "holdout", "ctgan")
FAST = ["--sections", "fidelity", "--curate", "--embedding", "none", "--max-attack", "100"]


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """Each table as one Parquet file (``files/NAME.parquet``) and as a folder of three
    partitions (``folders/NAME/``); ``ctgan`` holds 50 training rows, which the audit removes."""
    root = tmp_path_factory.mktemp("stored")
    train = _table(300, 10)
    ctgan = pd.concat([_table(250, 12), train.iloc[:50]], ignore_index=True)
    (root / "files").mkdir()
    for name, frame in zip(TABLES, (train, _table(300, 11), ctgan), strict=True):
        frame.to_parquet(root / "files" / f"{name}.parquet", index=False)
        _partitioned(frame, root / "folders" / name)
    # the copy rule alone is required: curated sets ship (only a shipped decision has them)
    (root / "policy.toml").write_text(policy_text("audit_copies"))
    return root


def _review(stored: Path, kind: str, out: Path, *extra: str) -> int:
    paths = {
        name: stored / kind / (f"{name}.parquet" if kind == "files" else name) for name in TABLES
    }
    return main(
        ["review", "--real", str(paths["train"]), "--holdout", str(paths["holdout"]),
         "--synthetic", str(paths["ctgan"]), "--out", str(out), "--quiet", *FAST,
         "--policy", str(stored / "policy.toml"), *extra]
    )  # fmt: skip


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


class _Fixed(datetime):
    """The clock of the release files, stopped: two runs' files may be compared byte for byte."""

    @classmethod
    def now(cls, tz=None):
        return cls(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _run(stored: Path, kind: str, out: Path, *extra: str) -> tuple[int, dict[str, bytes]]:
    with pytest.MonkeyPatch.context() as patch:
        for module in ("bundle", "export"):
            patch.setattr(f"synthreview.release.{module}.datetime", _Fixed)
        code = _review(stored, kind, out, *extra)
    return code, _files(out)


@pytest.fixture(scope="module")
def folder_run(stored, tmp_path_factory) -> tuple[int, dict[str, bytes]]:
    """The review of the three folders, in this process."""
    return _run(stored, "folders", tmp_path_factory.mktemp("runs") / "folders")


def _digests(report: bytes) -> list[str]:
    return [entry["sha256"] for entry in json.loads(report)["inputs"]]


def test_folders_give_the_report_and_released_files_of_single_files(stored, folder_run, tmp_path):
    """Only the inputs' digests and paths differ, wherever they are written; the curated rows
    of a folder are written as those of a single Parquet file."""
    code, folders = folder_run
    assert code == 4, "the 50 copied training rows fail the candidate; its curated set ships"
    file_code, files = _run(stored, "files", tmp_path / "out")
    assert file_code == code
    assert sorted(files) == sorted(folders)
    assert {"ctgan/curated.csv", "ctgan/curated.parquet", "ctgan/removed.csv"} <= set(files)
    same = dict(zip(_digests(folders["report.json"]), _digests(files["report.json"]), strict=True))
    assert len(set(same)) == 3 and not set(same) & set(same.values())
    for name in TABLES:
        same[str(stored / "folders" / name)] = str(stored / "files" / f"{name}.parquet")
    outs = [json.loads(run["manifest.json"])["parameters"]["out"] for run in (folders, files)]
    same[outs[0]] = outs[1]
    # the curated set's digest is derived from its input's
    curated = [json.loads(run["report.json"])["curation"]["ctgan"] for run in (folders, files)]
    same[curated[0]["sha256"]] = curated[1]["sha256"]
    for name, content in folders.items():
        for folder_value, file_value in same.items():
            content = content.replace(folder_value.encode(), file_value.encode())
        if name in ("manifest.json", "COMPLETE.json"):
            # they list every output's digest, and the report's hold the inputs' digests
            a, b = _without_report_digests(content), _without_report_digests(files[name])
            assert a == b, name
        else:
            assert content == files[name], name
    report = json.loads(folders["report.json"])
    assert report["curation"]["ctgan"]["n_removed"] >= 50
    assert report["inputs"][2]["sha256"] == _digest(
        stored / "folders" / "ctgan", [f"part.{i}.parquet" for i in range(3)]
    )


def _without_report_digests(listing: bytes) -> dict:
    """A manifest or completion marker without the entries of the files that hold the inputs'
    digests (report.json, report.html, record.json, each shipped curated file's croissant.json
    and, listed in the marker, manifest.json)."""
    content = json.loads(listing)
    for files in (content.get("outputs"), content.get("files")):
        if files is None:
            continue
        for name in [n for n in files if n.endswith("/croissant.json")]:
            files.pop(name)
        for name in ("report.json", "report.html", "manifest.json", "record.json"):
            files.pop(name, None)
    return content


class _PartitionReads(SchedulerPlugin):
    """The ``read_partition`` tasks the scheduler saw finish, with the worker that ran each."""

    def __init__(self) -> None:
        self.done: list[tuple[str, str]] = []

    def transition(self, key, start, finish, *args, **kwargs):
        if finish == "memory" and key_split(key) == "read_partition":
            self.done.append((str(key), kwargs.get("worker")))


def test_with_a_scheduler_the_workers_read_the_partitions_and_nothing_changes(
    stored, folder_run, cluster, tmp_path
):
    code, local = folder_run
    reads = _PartitionReads()
    cluster.scheduler.add_plugin(reads, name="partition-reads")
    try:
        remote_code, remote = _run(
            stored, "folders", tmp_path / "out", "--scheduler", cluster.scheduler_address
        )
    finally:
        cluster.scheduler.remove_plugin(name="partition-reads")
    # three partitions of each of the three tables, read by the cluster's workers
    assert len(reads.done) == 9 and len({key for key, _ in reads.done}) == 9
    assert {worker for _, worker in reads.done} <= set(cluster.scheduler.workers)
    assert remote_code == code
    assert sorted(remote) == sorted(local)
    for name in sorted(set(local) - {"manifest.json", "COMPLETE.json"}):
        assert remote[name] == local[name], name
    # the manifest records the options (--scheduler and --out among them); nothing else differs
    local_manifest, remote_manifest = (json.loads(f["manifest.json"]) for f in (local, remote))
    assert local_manifest["parameters"]["scheduler"] is None
    assert remote_manifest["parameters"]["scheduler"] == cluster.scheduler_address
    for key in ("scheduler", "out"):
        remote_manifest["parameters"][key] = local_manifest["parameters"][key]
    assert remote_manifest == local_manifest


@pytest.mark.slow
def test_read_on_two_worker_processes_equals_the_local_read(tmp_path):
    """Workers in other processes (the tables travel pickled): frames, dtypes and digest as
    read here, strings and dates included."""
    frame = _table(120, 20)
    folder = _partitioned(frame, tmp_path / "t")
    local = read_table(folder, role="synthetic")
    root = str(Path(__file__).resolve().parents[1])
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
        env={"PYTHONPATH": root},
    ) as cluster, Client(cluster) as client:  # fmt: skip
        reads = _PartitionReads()
        cluster.scheduler.add_plugin(reads)  # the scheduler runs in this process
        remote = read_table(folder, role="synthetic", client=client)
        workers = set(cluster.scheduler.workers)
    assert len(reads.done) == 3 and {worker for _, worker in reads.done} <= workers
    _same_table(remote, local)
    assert remote.sha256 == local.sha256


def test_a_csv_candidate_beside_a_folder_candidate_keeps_its_rows_byte_for_byte(stored, tmp_path):
    """The curated rows of a CSV candidate are copied from its file, found by digest among the
    sources; a folder among them (listed first here) is passed over, not read as a file."""
    fresh = tmp_path / "fresh.csv"
    lines = ["age,hours,sex,city,smoker,visit"] + [
        f"{30 + i % 40},{35 + i % 9}.50,{'FM'[i % 2]},Oslo,{i % 3 == 0},2024-03-{1 + i % 28:02d}"
        for i in range(200)
    ]
    fresh.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    out = tmp_path / "out"
    folders = stored / "folders"
    code = main(
        ["review", "--real", str(folders / "train"), "--holdout", str(folders / "holdout"),
         "--synthetic", str(folders / "ctgan"), "--synthetic", str(fresh), "--out", str(out),
         "--quiet", *FAST, "--policy", str(stored / "policy.toml")]
    )  # fmt: skip
    assert code in (1, 3, 4), code
    curated = (out / "fresh" / "curated.csv").read_bytes()
    assert curated.startswith(lines[0].encode() + b"\r\n"), "the input's own line ends"
    assert set(curated.split(b"\r\n")[1:-1]) <= {line.encode() for line in lines[1:]}
    assert (out / "ctgan" / "curated.parquet").is_file()


def test_the_readme_command_for_folders_runs_as_written(stored, cluster, tmp_path, monkeypatch):
    """The README's CLI example on folders, with only the scheduler address replaced by this
    test cluster's (and the fidelity section alone, to keep it fast): the workers read the
    partitions and the review folder is written."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = [b.split("```", 1)[0] for b in readme.split("```bash\n")[1:]]
    (block,) = [b for b in blocks if "--real train/" in b]
    argv = shlex.split(block.replace("\\\n", " "))
    assert argv[:3] == ["python", "-m", "synthreview"]
    for name in TABLES:
        shutil.copytree(stored / "folders" / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    reads = _PartitionReads()
    cluster.scheduler.add_plugin(reads, name="readme-reads")
    try:
        argv = [a.replace("tcp://10.0.0.5:8786", cluster.scheduler_address) for a in argv[3:]]
        code = main([*argv, "--quiet", *FAST])
    finally:
        cluster.scheduler.remove_plugin(name="readme-reads")
    assert code == 1 and len(reads.done) == 9
    report = json.loads((tmp_path / "review" / "report.json").read_text())
    assert [i["name"] for i in report["inputs"]] == ["train", "holdout", "ctgan"]


def test_a_column_missing_in_every_row_of_one_partition_takes_the_others_type(tmp_path):
    """A writer stores a column with no value in its partition as Arrow's ``null`` type: the
    folder still reads as the single file holding the same rows."""
    frame = _table(90, 11)
    frame.loc[30:59, "city"] = None  # the whole middle partition
    frame.loc[30:59, "hours"] = np.nan
    folder = _partitioned(frame, tmp_path / "t")
    middle = pq.read_table(folder / "part.1.parquet")
    at = middle.schema.get_field_index("city")
    middle = middle.set_column(at, "city", pa.nulls(len(middle)))  # as a writer with no values
    pq.write_table(middle, folder / "part.1.parquet")
    assert pq.read_schema(folder / "part.1.parquet").field("city").type == pa.null()
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    _same_table(read_table(folder), read_table(tmp_path / "t.parquet"))


def test_a_signed_review_of_folders_verifies_against_the_folders(stored, tmp_path, capsys):
    """``verify --inputs`` takes a folder input as the review recorded it (its partitions'
    digest) and names it when one partition changed."""
    keys = generate_keys(tmp_path / "keys")
    code = _review(stored, "folders", tmp_path / "out", "--sign", str(keys.private))
    assert code == 4
    folders = [str(stored / "folders" / name) for name in TABLES]
    verify = ["verify", str(tmp_path / "out"), "--key", str(keys.public), "--inputs"]
    assert main([*verify, *folders]) == 0
    assert "3 inputs checked" in capsys.readouterr().out
    changed = tmp_path / "ctgan"
    shutil.copytree(stored / "folders" / "ctgan", changed)
    part = pd.read_parquet(changed / "part.1.parquet")
    part.iloc[:1].to_parquet(changed / "part.1.parquet", index=False)
    assert main([*verify, *folders[:2], f"ctgan={changed}"]) == 1
    err = capsys.readouterr().err
    assert "ctgan: sha256 differs from the signed record's synthetic input 'ctgan'" in err


def test_categorical_partitions_with_differing_category_lists_read_as_the_single_file(tmp_path):
    """pandas writes a categorical column as Arrow's dictionary type, and each partition stores
    only the categories it uses (here the first category is missing from the first partition,
    and a cell is missing): the folder reads as the single file of the same rows. Only the
    order of the written frame's categories may differ (first appearance across partitions, as
    Arrow joins dictionaries): no output depends on it, the cells are written as text."""
    frame = _table(90, 12)
    frame.loc[:29, "city"] = frame.loc[:29, "city"].replace("Kyiv", "Lima")  # none in part 0
    frame["city"] = pd.Categorical(frame["city"])  # categories sorted: Kyiv first
    folder = tmp_path / "t"
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), 3)):
        part = frame.iloc[rows].copy()
        part["city"] = part["city"].cat.remove_unused_categories()  # as its own writer would
        part.to_parquet(folder / f"part.{i}.parquet", index=False)
    dictionaries = [
        pq.read_table(folder / f"part.{i}.parquet").column("city").chunk(0).dictionary.to_pylist()
        for i in range(3)
    ]
    assert "Kyiv" not in dictionaries[0] and "Kyiv" in dictionaries[1], "lists differ"
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    assert pa.types.is_dictionary(pq.read_schema(tmp_path / "t.parquet").field("city").type)
    read, single = read_table(folder), read_table(tmp_path / "t.parquet")
    assert list(read.raw["city"].cat.categories) == ["Lima", "Oslo", "Pune", "Kyiv"]
    assert list(single.raw["city"].cat.categories) == ["Kyiv", "Lima", "Oslo", "Pune"]
    # the one permitted difference set aside, the tables are the same
    pd.testing.assert_frame_equal(read.frame, single.frame)
    pd.testing.assert_frame_equal(
        read.raw.astype({"city": object}), single.raw.astype({"city": object})
    )
    assert read.notices == single.notices
    assert read.frame["city"].isna().sum() == frame["city"].isna().sum() == 1


# ---------------------------------------------------------------------------------------------
# glucose traces


def _readings(subjects: int, days: int, seed: int) -> pd.DataFrame:
    """Long CGM readings every 5 minutes: id, time, glucose (mg/dL), with a short gap."""
    rng = np.random.default_rng(seed)
    times = pd.date_range("2024-01-01", periods=288 * days, freq="5min")
    frames = [
        pd.DataFrame(
            {
                "id": f"s{s}",
                "time": times,
                "glucose": (120 + 35 * np.sin(np.arange(len(times)) / 40 + s)).round()
                + rng.integers(-6, 7, len(times)),
            }
        )
        for s in range(subjects)
    ]
    readings = pd.concat(frames, ignore_index=True)
    readings.loc[100:103, "glucose"] = np.nan  # filled by interpolation, as in a file
    return readings


def _same_traces(a, b) -> None:
    np.testing.assert_array_equal(a.values, b.values)
    pd.testing.assert_frame_equal(a.meta, b.meta)
    assert (a.step_minutes, a.name, a.source_format) == (b.step_minutes, b.name, b.source_format)
    assert a.notices == b.notices
    pd.testing.assert_frame_equal(a.dropped, b.dropped)


def test_traces_from_folders_equal_traces_from_single_files_and_workers_read_them(
    tmp_path, cluster
):
    """``review --traces`` takes folders of Parquet partitions as it takes tables: the traces
    are those of the single file of the same readings, under the folder's digest, and with a
    cluster its workers read the partitions."""
    import argparse

    from synthreview.cli import load_review
    from synthreview.io.traces import load_traces

    paths = {}
    for role, seed in (("real", 0), ("holdout", 1), ("gen", 2)):
        readings = _readings(4, 3, seed)
        paths[role] = _partitioned(readings, tmp_path / role)
        readings.to_parquet(tmp_path / f"{role}.parquet", index=False)
    for role, folder in paths.items():
        from_folder = load_traces(folder)
        single = load_traces(tmp_path / f"{role}.parquet")
        _same_traces(from_folder, single)
        names = [f"part.{i}.parquet" for i in range(3)]
        assert from_folder.sha256 == _digest(folder, names) != single.sha256
    args = argparse.Namespace(
        traces=True, real=paths["real"], holdout=paths["holdout"], synthetic=[paths["gen"]]
    )
    local = load_review(args)
    reads = _PartitionReads()
    cluster.scheduler.add_plugin(reads, name="trace-reads")
    try:
        with Client(cluster) as client:
            remote = load_review(args, client=client)
    finally:
        cluster.scheduler.remove_plugin(name="trace-reads")
    assert len(reads.done) == 9, "three partitions of each of the three inputs"
    assert remote.kind == local.kind == "traces"
    for got, want in (
        (remote.real, local.real),
        (remote.holdout, local.holdout),
        (remote.synthetic["gen"], local.synthetic["gen"]),
    ):
        pd.testing.assert_frame_equal(got.frame, want.frame)
        assert got.sha256 == want.sha256


# ---------------------------------------------------------------------------------------------
# folders uploaded through a browser (the dashboard)


def _sent(folder: Path, top: str | None = None) -> list[tuple[str, bytes]]:
    """The files of ``folder`` as a browser sends a folder upload: path from the picked folder."""
    top = top or folder.name
    return [(f"{top}/{p.relative_to(folder).as_posix()}", p.read_bytes()) for p in
            sorted(folder.rglob("*"), reverse=True) if p.is_file()]  # fmt: skip


def test_an_uploaded_folder_reads_as_the_folder_on_disk_digest_included(tmp_path):
    from synthreview.io.parquet import uploaded_folders

    frame = _table(90, 30)
    folder = _partitioned(frame, tmp_path / "ctgan")
    (folder / "_SUCCESS").write_bytes(b"")  # writers' metadata, skipped as on disk
    (uploaded,) = uploaded_folders(_sent(folder), what="synthetic candidates")
    assert uploaded.name == "ctgan"
    read, on_disk = read_table(uploaded, role="synthetic"), read_table(folder, role="synthetic")
    _same_table(read, on_disk)
    assert read.name == on_disk.name == "ctgan"
    assert read.sha256 == on_disk.sha256, "the record names the folder as the CLI would"


def test_several_uploaded_folders_are_several_candidates_in_upload_order(tmp_path):
    from synthreview.io.parquet import uploaded_folders

    second = _sent(_partitioned(_table(60, 31), tmp_path / "copula"))
    first = _sent(_partitioned(_table(60, 32), tmp_path / "ctgan"))
    found = uploaded_folders(second + first, what="synthetic candidates")
    assert [f.name for f in found] == ["copula", "ctgan"]
    for uploaded in found:
        _same_table(read_table(uploaded, role="synthetic"), read_table(tmp_path / uploaded.name))


BAD_UPLOADS = {
    "a file on its own": ([("p.parquet", b"PAR1")], r"'p.parquet' was sent as a file, not inside"),
    "a text file": (
        [("t/a.txt", b"x"), ("t/p.parquet", b"PAR1")],
        r"not Parquet partitions: 'a.txt'",
    ),
    "a sub-folder": ([("t/sub/p.parquet", b"PAR1")], r"holds the folder\(s\) 'sub'"),
    "metadata only": ([("t/_metadata", b"x")], r"got an empty folder"),
    "not Parquet": (
        [("t/p.parquet", b"text")],
        r"partition 'p.parquet' is named like a Parquet file",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_UPLOADS))
def test_a_bad_uploaded_folder_is_refused_naming_the_problem(case):
    from synthreview.io.parquet import uploaded_folders

    files, message = BAD_UPLOADS[case]
    with pytest.raises(DataError, match=message):
        for uploaded in uploaded_folders(files, what="real table"):
            read_table(uploaded, role="real")
