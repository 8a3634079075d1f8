"""One release, one record (issue 21), in Chromium at 1280x720.

For the table demo's ``fresh_with_copies`` and the glucose demo: the decision the Overview shows,
the Audit page's decision, the downloaded ``report.json`` decision and the ``report.html``
decision line are the same words, and the curated set is re-evaluated with every section the
policy reads (``tests.record_screen``).

The demos' records are stored ones (``demo_record_folder``, ``demo_glucose_record_folder``,
curated as ``synthreview review --curate`` curates), opened as ``synthreview show`` opens them:
the browser only renders, its Curate is disabled (evidence, not a draft) and the files it
downloads are the record's own, byte for byte (issue 33, item 8). The same checks on a run
(German credit uploaded, reviewed, curated with *Curate -> Confirm* in the session, and the same
files through the CLI's path) are made on test_browser_meeting's German-credit run, which is
that run's one upload and review in the suite.
"""

from __future__ import annotations

import json

import pytest

from tests.record_screen import assert_one_record, record_export

pytestmark = pytest.mark.e2e


def test_demo_record_equals_the_screen(table_record_page, table_record_server, tmp_path):
    page = table_record_page
    stored = table_record_server.folder

    def export(page, candidate, folder):
        return record_export(page, candidate, folder, stored)

    assert_one_record(
        page, "fresh_with_copies", tmp_path, {"fidelity", "privacy", "utility"}, export
    )


def test_glucose_record_equals_the_screen(glucose_record_page, glucose_record_server, tmp_path):
    page = glucose_record_page
    stored = glucose_record_server.folder
    filed = json.loads((stored / "report.json").read_text())
    # a candidate the audit does not empty (a noisy copy loses every trace: nothing curated)
    chosen = next(
        (n for n in ("autoregressive", "motif_shuffle", "noisy_copy") if n in filed["curated"]),
        None,
    )
    assert chosen is not None, sorted(filed["curated"])

    def export(page, candidate, folder):
        return record_export(page, candidate, folder, stored)

    report = assert_one_record(page, chosen, tmp_path, {"glucose"}, export)
    # the audit applied the trace rules (plausibility, memorised subjects) as the CLI does
    rules = {r["rule"] for r in report["audit"][chosen]["rules"]}
    assert any("implausible" in r or "memorised" in r for r in rules), rules
