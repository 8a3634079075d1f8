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
