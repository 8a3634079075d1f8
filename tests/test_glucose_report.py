"""The clinical part of the glucose report: report.json keys and the HTML section."""

from __future__ import annotations

import numpy as np

from synthreview.metrics.glucose.clinical import clinical_samples, compare_clinical
from synthreview.metrics.glucose.glycemic import compare_glycemic, glycemic_samples
from synthreview.metrics.glucose.motifs import motif_breadth
from synthreview.metrics.glucose.section import GlucoseReport
from synthreview.release.glucose_html import glucose_section


def _report() -> GlucoseReport:
    rng = np.random.default_rng(0)
    real = np.clip(140 + np.cumsum(rng.normal(0, 4, (20, 288)), axis=1), 40, 400)
    holdout = np.clip(140 + np.cumsum(rng.normal(0, 4, (20, 288)), axis=1), 40, 400)
    shifted = real + 40
    r, h, s = (clinical_samples(x) for x in (real, holdout, shifted))
    return GlucoseReport(
        metrics=compare_glycemic(glycemic_samples(real), glycemic_samples(shifted)),
        holdout_metrics=None,
        motifs=motif_breadth(holdout, shifted),
        holdout_motifs=None,
        forecast=None,
        clinical=compare_clinical(r, s),
        holdout_clinical=compare_clinical(r, h),
        agp={"real": r.agp, "synthetic": s.agp, "holdout": h.agp},
    )


def test_report_json_has_the_clinical_view() -> None:
    out = _report().to_dict()
    for key in ("consensus", "episodes", "day_night", "agp"):
        assert key in out
    tir = out["consensus"]["tir"]
    assert {"real_mean", "synthetic_mean", "p_value", "holdout_mean", "holdout_p_value"} <= set(tir)
    mean = out["consensus"]["mean"]
    assert abs(mean["synthetic_mean"] - mean["real_mean"] - 40.0) < 1e-9
    assert abs(out["agp"]["distance"] - 40.0) < 1e-9
    assert out["agp"]["holdout_distance"] < out["agp"]["distance"]
    assert set(out["agp"]["profiles"]) == {"real", "synthetic", "holdout"}
    assert len(out["agp"]["profiles"]["real"]["p50"]) == 96
    assert set(out["day_night"]) == {"day", "night"}


def test_html_section_lists_metrics_and_escapes_names() -> None:
    html = glucose_section({"<b>x</b>": {"glucose": _report().to_dict()}})
    assert "Glycemia risk index" in html and "AGP band distance" in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
    assert glucose_section({"tables only": {"fidelity": {}}}) == ""


def test_per_subject_privacy_and_plausibility_in_json_and_html() -> None:
    import dataclasses

    from synthreview.io.traces import Traces
    from synthreview.metrics.glucose.plausibility import trace_plausibility
    from synthreview.metrics.glucose.subjects import subject_privacy

    rng = np.random.default_rng(1)
    real_v = np.clip(140 + np.cumsum(rng.normal(0, 4, (6, 288)), axis=1), 40, 400)
    hold_v = np.clip(140 + np.cumsum(rng.normal(0, 4, (6, 288)), axis=1), 40, 400)
    real = Traces.from_array(real_v, source_ids=["<i>a</i>"] * 3 + ["b"] * 3)
    holdout = Traces.from_array(hold_v, source_ids=["c"] * 3 + ["d"] * 3)
    candidate = Traces.from_array(np.r_[real_v[:1], hold_v[:1] + 30], name="copying")
    report = dataclasses.replace(
        _report(),
        subject_privacy=subject_privacy(real, candidate, holdout),
        plausibility=trace_plausibility(real, candidate, holdout),
    )
    out = report.to_dict()
    subjects = out["subject_privacy"]
    assert subjects["memorised"] == ["<i>a</i>"] and subjects["aggregate"] == "max"
    assert {"subject_auc", "window_auc", "per_window", "subjects"} <= set(subjects)
    assert {r["subject"] for r in subjects["subjects"]} == {"<i>a</i>", "b", "c", "d"}
    assert out["plausibility"]["sensor_range_mg_dl"] == [40.0, 400.0]
    html = glucose_section({"cand": {"glucose": out}})
    assert "Privacy per person" in html and "Implausible traces" in html
    assert "&lt;i&gt;a&lt;/i&gt;" in html and "<i>a</i>" not in html
