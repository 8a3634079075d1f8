"""AppTest of the Glossary page: every registered metric as wrapping text, no wide table."""

from __future__ import annotations

from synthreview.figures.text import markdown_text
from synthreview.metrics.registry import REGISTRY
from tests.page_helpers import run_page_without_data


def test_glossary_lists_every_metric_as_text_blocks():
    at = run_page_without_data("pages/glossary.py")
    assert not at.exception
    assert len(at.dataframe) == 0 and len(at.table) == 0  # nothing that scrolls sideways
    shown = [m.value for m in at.markdown]
    captions = [c.value for c in at.caption]
    for info in REGISTRY.values():
        line = f"**{markdown_text(info.label)}**: {markdown_text(info.meaning)}."
        assert line in shown, info.name
        assert any(markdown_text(f"report.json and policy files: {info.name}.") in c
                   for c in captions), info.name  # fmt: skip
    assert [s.value for s in at.subheader] == ["Fidelity", "Privacy", "Utility", "Glucose"]


def test_glossary_section_filter():
    at = run_page_without_data("pages/glossary.py")
    at.segmented_control(key="glossary_section").set_value("privacy").run()
    assert not at.exception
    assert [s.value for s in at.subheader] == ["Privacy"]
    privacy = [i for i in REGISTRY.values() if i.section == "privacy"]
    assert len([m for m in at.markdown if m.value.startswith("**")]) == len(privacy)
