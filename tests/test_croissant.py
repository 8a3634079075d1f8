"""The Croissant card of a shipped curated file (issue 37, item 6): what it describes, and that
the manifest and the signed statement cover it."""

from __future__ import annotations

import hashlib
import json

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from test_export import injected_table, keep_all

from synthreview.judgement.context import parse_context
from synthreview.judgement.policy import Verdicts, load_policy
from synthreview.release.audit import Thresholds
from synthreview.release.bundle import AuditRecord, build_release
from synthreview.release.curation import curate
from synthreview.release.signing import sign_files, verify_files
from synthreview.release.verdicts import copy_excess

CONTEXT = {"recipient": "consortium", "purpose": "forecasting methods", "access": "licensed",
           "threat_model": "licensees with public registers", "expires": "2027-06-30"}  # fmt: skip


def _files(**extra):
    table, _ = injected_table()
    audit = keep_all(6)
    audit.loc[[1, 4], "removed"] = True
    audit.loc[[1, 4], "reasons"] = ["exact copy of a training row; too close", "too close"]
    names = ["shipped", "rejected"]
    return table, build_release(
        {"seed": 0, "candidates": {n: {} for n in names}},
        audits={
            n: AuditRecord(audit, audit.iloc[:0], Thresholds(), copy_excess(audit, None))
            for n in names
        },
        curations=dict.fromkeys(names, curate(table, audit)),
        verdicts={"shipped": Verdicts("pass"), "rejected": Verdicts("fail")},
        policy=load_policy().for_access("licensed"),
        figures=[],
        **extra,
    )


def test_a_shipped_curated_file_carries_its_croissant_card():
    table, files = _files(context=parse_context(CONTEXT))
    assert "shipped/croissant.json" in files and "rejected/croissant.json" not in files
    card = json.loads(files["shipped/croissant.json"])
    assert card["@type"] == "sc:Dataset"
    assert "http://mlcommons.org/croissant/RAI/1.0" in card["conformsTo"]
    assert card["rai:hasSyntheticData"] is True
    (csv,) = card["distribution"]
    assert csv["sha256"] == hashlib.sha256(files["shipped/curated.csv"]).hexdigest()
    assert card["isBasedOn"]["sha256"] == table.sha256  # the source digest
    fields = [f["name"] for f in card["recordSet"][0]["field"]]
    assert fields == [str(c) for c in table.frame.columns]
    # what was removed and why, the decision and the context
    protocol = card["rai:dataPreprocessingProtocol"]
    assert protocol.startswith("2 of 6 rows removed by the release audit")
    assert "too close (2)" in protocol and "exact copy of a training row (1)" in protocol
    assert card["synthreview:decision"]["outcome"] == "release"
    assert card["synthreview:context"]["access"] == "licensed"
    assert card["rai:dataUseCases"] == "forecasting methods"
    assert "2027-06-30" in card["rai:dataReleaseMaintenancePlan"]
    # listed in the manifest and covered by the signature: a changed card no longer verifies
    manifest = json.loads(files["manifest.json"])
    assert "shipped/croissant.json" in manifest["outputs"]
    key = Ed25519PrivateKey.generate()
    signed = sign_files(files, key)
    assert verify_files(signed, key.public_key()).ok
    tampered = {**signed, "shipped/croissant.json": files["shipped/croissant.json"] + b" "}
    assert not verify_files(tampered, key.public_key()).ok


def test_a_card_without_context_says_so():
    _, files = _files()
    card = json.loads(files["shipped/croissant.json"])
    assert card["synthreview:context"] is None
    assert "no release context given" in card["rai:dataLimitations"]
