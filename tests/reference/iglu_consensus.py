"""Reference numbers from iglu-python for the consensus-metric parity test.

Run once in a separate venv (iglu-python pins its own pandas/numpy):

    python -m venv /tmp/ref-iglu && /tmp/ref-iglu/bin/pip install iglu-python==0.4.3
    /tmp/ref-iglu/bin/python tests/reference/iglu_consensus.py

Reads ``iglu_input.csv`` (written by ``iglu_make_input.py``) and writes
``iglu_consensus.json``: every metric iglu has, per day trace (``id`` = trace) and per
subject (``id`` = subject, all of its days), plus iglu's episode summary. Nothing from iglu
is imported by the project; the test compares our numbers with this file.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import iglu_python as iglu
import pandas as pd

HERE = Path(__file__).parent


def _column(frame: pd.DataFrame, column: str) -> dict[str, float]:
    return {
        str(i): (None if pd.isna(v) else float(v))
        for i, v in zip(frame["id"], frame[column], strict=True)
    }


def metrics(data: pd.DataFrame) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    below = iglu.below_percent(data.copy(), targets_below=[54, 70])
    above = iglu.above_percent(data.copy(), targets_above=[180, 250])
    in_range = iglu.in_range_percent(data.copy(), target_ranges=[[70, 180], [70, 140]])
    out["mean"] = _column(iglu.mean_glu(data.copy()), "mean")
    out["gmi"] = _column(iglu.gmi(data.copy()), "GMI")
    out["cv"] = _column(iglu.cv_glu(data.copy()), "CV")
    out["below_54"] = _column(below, "below_54")
    out["below_70"] = _column(below, "below_70")
    out["above_180"] = _column(above, "above_180")
    out["above_250"] = _column(above, "above_250")
    out["in_range_70_180"] = _column(in_range, "in_range_70_180")
    out["in_range_70_140"] = _column(in_range, "in_range_70_140")
    out["gri"] = _column(iglu.gri(data.copy()), "GRI")
    out["lbgi"] = _column(iglu.lbgi(data.copy()), "LBGI")
    out["hbgi"] = _column(iglu.hbgi(data.copy()), "HBGI")
    out["adrr"] = _column(iglu.adrr(data.copy()), "ADRR")
    out["j_index"] = _column(iglu.j_index(data.copy()), "J_index")
    out["mage"] = _column(iglu.mage(data.copy()), "MAGE")
    for hours in (1, 2, 4):
        out[f"conga_{hours}"] = _column(iglu.conga(data.copy(), n=hours), "CONGA")
    out["modd"] = _column(iglu.modd(data.copy()), "MODD")
    episodes = iglu.episode_calculation(data.copy())
    kinds = {("hypo", "lv1"): "hypo_l1", ("hypo", "lv2"): "hypo_l2",
             ("hyper", "lv1"): "hyper_l1", ("hyper", "lv2"): "hyper_l2"}  # fmt: skip
    for (kind, level), name in kinds.items():
        part = episodes[(episodes["type"] == kind) & (episodes["level"] == level)]
        for column, suffix in (("total_episodes", "count"), ("avg_ep_per_day", "per_day"),
                               ("avg_ep_duration", "minutes")):  # fmt: skip
            out[f"{name}_{suffix}"] = _column(part, column)
    return out


def main() -> None:
    # iglu's default (R-compatible) day grid runs 00:05-24:00, one step after the readings of a
    # day trace (00:00-23:55): it drops each day's first reading and interpolates the last. The
    # Python grid (00:00-23:55) holds exactly the readings, so grid metrics compare like for like.
    iglu.set_iglu_r_compatible(False)
    raw = pd.read_csv(HERE / "iglu_input.csv")
    raw["time"] = pd.to_datetime(raw["time"])
    result = {
        "package": "iglu-python",
        "version": version("iglu-python"),
        "input": "iglu_input.csv",
        "iglu_r_compatible": iglu.is_iglu_r_compatible(),
        "per_trace": metrics(raw.rename(columns={"trace": "id"})[["id", "time", "gl"]]),
        "per_subject": metrics(raw.rename(columns={"subject": "id"})[["id", "time", "gl"]]),
    }
    text = json.dumps(result, indent=1, sort_keys=True, allow_nan=False)
    (HERE / "iglu_consensus.json").write_text(text + "\n")


if __name__ == "__main__":
    main()
