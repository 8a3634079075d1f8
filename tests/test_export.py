"""Release files: formula escaping, manifest, determinism, offline HTML."""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from synthreview.io.schema import LoadedTable, Schema
from synthreview.judgement.policy import Verdicts, apply_policy, load_policy
from synthreview.release.audit import Thresholds, audit_table
from synthreview.release.bundle import AuditRecord, build_release, write_files, zip_bytes
from synthreview.release.curation import curate
from synthreview.release.export import (
    ESCAPE_STATEMENT,
    audit_csv_bytes,
    curated_csv_bytes,
    curated_parquet_bytes,
    escape_formulas,
    manifest,
    safe_name,
)
from synthreview.release.html import render_html
from synthreview.release.signing import sign_files, verify_files
from synthreview.release.verdicts import copy_excess
from tests.test_audit import DCR, Fidelity, Privacy, Samples
from tests.test_policy import candidate

INJECTIONS = ['=HYPERLINK("http://x")', "+1+2", "-2+3", "@SUM(A1)", "\tcmd", "\rcmd"]


def injected_table() -> tuple[LoadedTable, Schema]:
    raw = pd.DataFrame(
        {
            "amount": ["-5", "+3", "-0.5e2", "1", "2", "-7"],  # numeric column held as text
            "text": [*INJECTIONS],
            "code": ["-1", "=A1", "ok", "-x", "@", "+44 20 7946 0000"],
        }
    )
    frame = raw.assign(amount=raw["amount"].astype(float))
    schema = Schema({"amount": "numeric", "text": "categorical", "code": "categorical"})
    return LoadedTable("evil", "synthetic", frame, raw, "0" * 64), schema


def keep_all(n: int):
    privacy = Privacy(DCR(np.ones(n), None, np.zeros(n, bool), np.ones(3)))
    return audit_table(None, privacy, Thresholds(alpha=None))


def test_escape_formulas_text_only_numbers_untouched():
    table, schema = injected_table()
    escaped = escape_formulas(table.raw, schema=schema)
    assert list(escaped["amount"]) == list(table.raw["amount"])  # numeric kind: never touched
    assert list(escaped["text"]) == ["'" + s for s in INJECTIONS]
    # plain numbers in text columns stay; formula-like cells get the quote
    assert list(escaped["code"]) == ["-1", "'=A1", "ok", "'-x", "'@", "'+44 20 7946 0000"]
    assert list(table.raw["text"]) == INJECTIONS  # input not modified


def test_escape_without_schema_skips_numeric_dtypes():
    frame = pd.DataFrame({"x": [-1.0, -2.5], "s": pd.array(["=1", None], dtype="str")})
    escaped = escape_formulas(frame)
    assert escaped["x"].tolist() == [-1.0, -2.5]
    assert escaped["s"].tolist()[0] == "'=1" and pd.isna(escaped["s"].tolist()[1])
    assert escaped["s"].dtype == frame["s"].dtype
    assert list(escape_formulas(pd.DataFrame({"=evil": ["a"]})).columns) == ["'=evil"]


def test_escape_formulas_repeated_mixed_and_unhashable_cells():
    # each distinct value is escaped once and put back on every row that holds it; an object
    # column may mix kinds, and a cell that cannot be hashed is still escaped where it is text
    repeated = ["=1", "a", "=1", None, "-2", "=1", "a"]
    mixed = pd.Series(["=1", 3, 2.5, None, True, "@x", "-"], dtype=object)
    frame = pd.DataFrame({"r": repeated, "m": mixed, "s": pd.array(repeated, dtype="str")})
    escaped = escape_formulas(frame)
    kept = escaped["r"].tolist()
    assert kept[:3] + kept[4:] == ["'=1", "a", "'=1", "-2", "'=1", "a"] and pd.isna(kept[3])
    assert escaped["m"].tolist()[:3] == ["'=1", 3, 2.5] and pd.isna(escaped["m"][3])
    assert escaped["m"].tolist()[4:] == [True, "'@x", "-"]
    assert escaped["s"].tolist()[:3] == ["'=1", "a", "'=1"] and escaped["s"].dtype == "str"
    unhashable = pd.DataFrame({"u": pd.Series([["=1"], "=2", "b"], dtype=object)})
    assert escape_formulas(unhashable)["u"].tolist() == [["=1"], "'=2", "b"]
    assert frame["r"].tolist()[:3] == repeated[:3]  # input not modified


def test_csv_escaped_parquet_untouched():
    table, schema = injected_table()
    curation = curate(table, keep_all(table.n_rows))
    csv = pd.read_csv(
        io.BytesIO(curated_csv_bytes(curation, schema=schema)), dtype=str, keep_default_na=False
    )
    assert list(csv["text"]) == ["'" + s for s in INJECTIONS]
    assert list(csv["amount"]) == ["-5", "+3", "-0.5e2", "1", "2", "-7"]
    parquet = pd.read_parquet(io.BytesIO(curated_parquet_bytes(curation)))
    assert list(parquet["text"]) == INJECTIONS
    assert parquet["amount"].tolist() == [-5.0, 3.0, -50.0, 1.0, 2.0, -7.0]


def test_audit_csv_round_trips_numbers():
    audit = keep_all(4)
    back = pd.read_csv(io.BytesIO(audit_csv_bytes(audit)))
    assert back["train_distance"].tolist() == audit["train_distance"].tolist()
    assert list(back.columns) == list(audit.columns)


def test_manifest_hashes_versions_and_statement():
    out = {"a.csv": b"x,y\n1,2\n"}
    m = manifest(
        {"real": b"abc", "holdout": "f" * 64},
        out,
        {"alpha": 0.95},
        7,
        timestamp=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    assert m["inputs"]["real"]["sha256"] == hashlib.sha256(b"abc").hexdigest()
    assert m["inputs"]["holdout"]["sha256"] == "f" * 64
    assert m["outputs"]["a.csv"]["sha256"] == hashlib.sha256(out["a.csv"]).hexdigest()
    assert m["seed"] == 7 and m["parameters"] == {"alpha": 0.95}
    assert m["generated_at"] == "2026-01-02T03:04:05+00:00"
    for dist in (
        "python",
        "synthreview",
        "numpy",
        "pandas",
        "scipy",
        "scikit-learn",
        "torch",
        "plotly",
    ):
        assert dist in m["versions"]
    assert m["csv_formula_escaping"] == ESCAPE_STATEMENT


def test_safe_name_is_unique_and_harmless():
    assert safe_name("../../etc/passwd") == "etc_passwd"
    assert safe_name("a b", ["a_b"]) == "a_b_2"
    assert safe_name("...") == "candidate"


def release(moment):
    table, schema = injected_table()
    fidelity = Fidelity(Samples(np.linspace(0.1, 1.0, 6), np.array([1, 1, 1, 0, 1, 1], bool)))
    privacy = Privacy(DCR(np.arange(6.0), None, np.zeros(6, bool), np.arange(6.0)))
    audit = audit_table(fidelity, privacy, Thresholds(mode="paper", alpha=0.9))
    cand = candidate()
    cand["fidelity"]["alpha_precision_curve"] = {"alpha": [0, 0.5, 1], "value": [0, 0.45, 0.9]}
    cand["fidelity"]["beta_recall_curve"] = {"beta": [0, 0.5, 1], "value": [0, 0.4, 0.8]}
    report = {
        "seed": 3,
        "sections": ["fidelity"],
        "inputs": [
            {"name": "evil", "role": "synthetic", "sha256": "0" * 64, "rows": 6, "columns": 3}
        ],
        "candidates": {"evil": cand},
    }
    policy = load_policy()
    record = AuditRecord(
        audit, audit.iloc[:0], Thresholds(mode="paper", alpha=0.9), copy_excess(audit, None)
    )
    return build_release(
        report,
        audits={"evil": record},
        curations={"evil": curate(table, audit)},
        verdicts={"evil": apply_policy(policy, cand)},
        policy=policy,
        after={"evil": cand},
        schema=schema,
        timestamp=moment,
    )


def test_release_is_deterministic_apart_from_timestamp():
    t1 = datetime(2026, 1, 1, tzinfo=UTC)
    first, second = release(t1), release(t1)
    assert first == second
    later = release(datetime(2026, 6, 1, tzinfo=UTC))
    a, b = json.loads(first["report.json"]), json.loads(later["report.json"])
    assert a.pop("generated_at") != b.pop("generated_at")
    assert a == b
    assert set(first) == {
        "report.json",
        "report.html",
        "manifest.json",
        "evil/audit.csv",
        "evil/croissant.json",
        "evil/curated.csv",
        "evil/curated.parquet",
        "evil/removed.csv",
    }
    content = json.loads(first["report.json"])
    assert content["verdicts"]["evil"]["overall"] == "pass"
    assert content["audit"]["evil"]["n_removed"] == 2  # alpha > 0.9 and one unauthentic
    assert content["curation"]["evil"]["n_kept"] == 4
    assert list(content) == sorted(content)


def test_manifest_covers_every_written_file(tmp_path):
    files = release(datetime(2026, 1, 1, tzinfo=UTC))
    m = json.loads(files["manifest.json"])
    assert set(m["outputs"]) == set(files) - {"manifest.json"}
    for name, entry in m["outputs"].items():
        assert entry["sha256"] == hashlib.sha256(files[name]).hexdigest()
    assert zip_bytes(files) == zip_bytes(files)


def test_write_release_writes_the_tree(tmp_path):
    table, _ = injected_table()
    audit = keep_all(6)
    files = build_release(
        {"seed": 0, "candidates": {}},
        audits={"a/b": AuditRecord(audit, audit.iloc[:0], Thresholds(), copy_excess(audit, None))},
        curations={"a/b": curate(table, audit)},
        verdicts={"a/b": Verdicts("pass")},
    )
    paths = write_files(tmp_path, files)
    names = sorted(p.relative_to(tmp_path).as_posix() for p in paths)
    assert names == [
        "a_b/audit.csv",
        "a_b/croissant.json",
        "a_b/curated.csv",
        "a_b/curated.parquet",
        "a_b/removed.csv",
        "manifest.json",
        "report.html",
        "report.json",
    ]


def test_only_candidates_whose_decision_ships_get_curated_files():
    """A rejected, incomplete or unjudged candidate keeps its audit evidence, never a curated
    file, in the files, the manifest, the ZIP and the signed statement (issue 33, item 6)."""
    table, _ = injected_table()
    audit = keep_all(6)
    names = ["released", "after", "rejected", "incomplete", "unjudged"]
    files = build_release(
        {"seed": 0, "candidates": {n: {} for n in names}},
        audits={
            n: AuditRecord(audit, audit.iloc[:0], Thresholds(), copy_excess(audit, None))
            for n in names
        },
        curations=dict.fromkeys(names, curate(table, audit)),
        verdicts={"released": Verdicts("pass"), "after": Verdicts("fail"),
                  "rejected": Verdicts("fail"), "incomplete": Verdicts("incomplete")},
        after_verdicts={"after": Verdicts("pass"), "rejected": Verdicts("fail")},
    )  # fmt: skip
    decisions = json.loads(files["report.json"])["decisions"]
    assert {n: d["outcome"] for n, d in decisions.items()} == {
        "released": "release", "after": "release_after_curation",
        "rejected": "do_not_release", "incomplete": "incomplete",
    }  # fmt: skip
    curated = {n.split("/")[0] for n in files if n.split("/")[-1].startswith("curated.")}
    assert curated == {"released", "after"}
    for name in names:
        assert {f"{name}/audit.csv", f"{name}/removed.csv"} <= set(files)
    for name in ("released", "after"):
        assert {f"{name}/curated.csv", f"{name}/curated.parquet"} <= set(files)
    page = files["report.html"].decode()
    assert page.count("rows kept in the curated file") == 2
    assert page.count("no curated file is shipped (the candidate is not released)") == 3
    # a file not written is not listed: the manifest, the ZIP and the signature agree
    assert set(json.loads(files["manifest.json"])["outputs"]) == set(files) - {"manifest.json"}
    with zipfile.ZipFile(io.BytesIO(zip_bytes(files))) as archive:
        assert set(archive.namelist()) == set(files)
    key = Ed25519PrivateKey.generate()
    signed = sign_files(files, key)
    assert verify_files(signed, key.public_key()).ok


def test_html_is_self_contained_and_escaped():
    files = release(datetime(2026, 1, 1, tzinfo=UTC))
    page = files["report.html"].decode()
    # no external resource is loaded: no script/link/img pointing at the network
    assert not re.search(r"<script[^>]+src=", page)
    assert not re.search(r"<link[^>]+href=", page)
    assert page.count("* plotly.js v") == 1  # the library is inlined exactly once
    # scorecard, two curves, before/after, privacy-utility frontier, rule overlaps
    assert page.count('class="figure"') == page.count("Plotly.newPlot") == 6
    assert "@media print" in page
    assert "&lt;" not in render_html({"candidates": {"<b>": {}}}, [], {}).split("<body>")[0]
    assert "<th>&lt;b&gt;</th>" in render_html({"candidates": {"<b>": {}}}, [], {})


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_json_has_no_nan(bad):
    from synthreview.release.export import dumps

    assert json.loads(dumps({"x": bad})) == {"x": None}


def test_reattack_and_controls_tables_are_rendered_escaped():
    content = {
        "candidates": {},
        "reattack": {"<b>c</b>": {"worse": True, "note": "", "attacks": [
            {"attack": "<script>x</script>", "auc_before": 0.5, "auc_before_ci": [0.45, 0.55],
             "auc_after": 0.6, "auc_after_ci": [0.55, 0.65], "tpr_before": 0.01,
             "tpr_before_ci": [None, None], "tpr_after": 0.02, "tpr_after_ci": [None, None],
             "worse": True}]}},
        "controls": {"n_base": 50, "n_holdout": 50, "seed": 0, "max_attack": 50, "rows": [
            {"planted_share": 0.05, "removed_share": 0.07, "planted_recall": 1.0,
             "recall": {"drop_exact_copy": 1.0}, "attacks": {"dist": {"auc": 0.52,
             "tpr_at_fpr_1pct": 0.04}}, "verdict": "fail", "failed": ["audit_copies"]}]},
    }  # fmt: skip
    page = render_html(content, [], {})
    assert "Re-attack after curation" in page and "Planted-leak controls" in page
    assert "<script>x" not in page and "&lt;script&gt;x" in page and "&lt;b&gt;c" in page
    assert "audit_copies" in page and "5.0%" in page
