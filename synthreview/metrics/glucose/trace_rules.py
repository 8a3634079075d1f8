"""Audit rules of trace reviews: implausible traces and windows of memorised subjects.

:func:`trace_rule_columns` turns a candidate's glucose results into per-row audit evidence that
``synthreview.release.audit`` adds to the audit table of a trace review (one row per synthetic
trace, in file order):

- ``drop_outside_sensor_range``: a reading outside the sensor's reporting range
  (:mod:`.plausibility`);
- ``drop_implausible_rate``: a net change faster than the sensor-plausible rate over the rate
  window (:mod:`.plausibility`);
- ``drop_memorised_subject``: the trace's nearest real window belongs to a subject whose traces
  the candidate reproduces (:mod:`.subjects`): every window the generator drew from a person it
  memorised goes, not only the copies themselves.

Each rule carries its threshold and its expected false-positive rate on real data: the share of
the holdout (else real) traces the plausibility rules flag, and for the subject rule the
leave-one-out share of holdout windows called reproduced.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

#: rule column -> label (shown beside the table rules of ``synthreview.release.table.RULES``)
TRACE_RULES: dict[str, str] = {
    "drop_outside_sensor_range": "reading outside the CGM sensor's range",
    "drop_implausible_rate": "glucose changes faster than a CGM sensor reports",
    "drop_memorised_subject": "drawn from a subject whose traces are memorised",
}
#: which switch of ``Thresholds`` turns each trace rule on
SWITCHES: dict[str, str] = {
    "drop_outside_sensor_range": "drop_implausible",
    "drop_implausible_rate": "drop_implausible",
    "drop_memorised_subject": "drop_memorised_subjects",
}


def trace_rule_columns(glucose: Any, *, holdout: bool = False) -> tuple[pd.DataFrame, dict]:
    """Per-row flags, reasons and evidence of the trace rules, and each rule's calibration.

    Parameters
    ----------
    glucose : GlucoseReport or None
        The candidate's glucose section (``plausibility`` and ``subject_privacy``).
    holdout : bool
        Rows are the holdout traces (the "what would fresh real data lose" reference); the
        subject rule never fires there (a holdout window is no synthetic draw).

    Returns
    -------
    (DataFrame, dict)
        Columns ``<rule>_flag`` (bool) and ``<rule>_reason`` (str) for every rule that has
        evidence, plus ``glucose_min``, ``glucose_max``, ``max_rate_mg_dl_min`` and, for
        synthetic rows, ``nearest_subject`` and ``subject_distance_mg_dl``; and
        ``{rule: {"label", "threshold", "expected_fpr"}}``. An empty frame and ``{}`` when
        there is no evidence.
    """
    plaus = getattr(glucose, "plausibility", None)
    subjects = getattr(glucose, "subject_privacy", None)
    columns: dict[str, Any] = {}
    rules: dict[str, dict[str, Any]] = {}
    samples = None if plaus is None else plaus.samples.get("holdout" if holdout else "synthetic")
    if samples is not None:
        lo, hi = plaus.sensor_range_mg_dl
        gmin, gmax = samples["glucose_min"].to_numpy(), samples["glucose_max"].to_numpy()
        rate = samples["max_rate_mg_dl_min"].to_numpy()
        columns.update(glucose_min=gmin, glucose_max=gmax, max_rate_mg_dl_min=rate)
        columns["drop_outside_sensor_range_flag"] = samples["outside_range"].to_numpy(bool)
        columns["drop_outside_sensor_range_reason"] = [
            f"{n} readings outside {lo:g}-{hi:g} mg/dL (min {a:.1f}, max {b:.1f})" if n else ""
            for n, a, b in zip(samples["n_outside_range"], gmin, gmax, strict=True)
        ]
        columns["drop_implausible_rate_flag"] = samples["implausible_rate"].to_numpy(bool)
        columns["drop_implausible_rate_reason"] = [
            f"net change of {v:.2f} mg/dL/min over {plaus.rate_window_minutes:g} min "
            f"> {plaus.max_rate_mg_dl_min:g}"
            if flag
            else ""
            for v, flag in zip(rate, samples["implausible_rate"], strict=True)
        ]
        rules["drop_outside_sensor_range"] = {
            "label": TRACE_RULES["drop_outside_sensor_range"],
            "threshold": hi,
            "expected_fpr": plaus.reference_outside_range_share,
        }
        rules["drop_implausible_rate"] = {
            "label": TRACE_RULES["drop_implausible_rate"],
            "threshold": plaus.max_rate_mg_dl_min,
            "expected_fpr": plaus.reference_implausible_rate_share,
        }
    if subjects is not None and not (holdout and samples is None):
        if holdout:  # the holdout rows' count is known from their plausibility samples
            n = len(samples)
            columns["drop_memorised_subject_flag"] = np.zeros(n, dtype=bool)
            columns["drop_memorised_subject_reason"] = [""] * n
        else:
            frame = subjects.synthetic
            columns["nearest_subject"] = frame["nearest_subject"].to_numpy()
            columns["subject_distance_mg_dl"] = frame["distance_mg_dl"].to_numpy()
            reproduced = subjects.subjects.set_index("subject")["n_reproduced"]
            columns["drop_memorised_subject_flag"] = frame["from_memorised"].to_numpy(bool)
            pairs = zip(frame["nearest_subject"], frame["distance_mg_dl"], frame["from_memorised"],
                        strict=True)  # fmt: skip
            columns["drop_memorised_subject_reason"] = [
                f"nearest real window belongs to subject {s!r} ({d:.1f} mg/dL RMS, limit "
                f"{subjects.subject_ratio * subjects.scale_mg_dl:.1f}), who has "
                f"{int(reproduced.get(s, 0))} windows reproduced within "
                f"{subjects.copy_ratio * subjects.scale_mg_dl:.1f} mg/dL"
                if flag
                else ""
                for s, d, flag in pairs
            ]
        rules["drop_memorised_subject"] = {
            "label": TRACE_RULES["drop_memorised_subject"],
            "threshold": subjects.subject_ratio * subjects.scale_mg_dl,
            "expected_fpr": subjects.expected_window_fpr,
        }
    return pd.DataFrame(columns), rules
