"""Write the traces that the iglu parity test compares on (run with the project's venv).

Input: the shipped test files ``tests/data/cgm_long.csv`` (iglu example data, GPL-2) and
``tests/data/cgm_one_subject.csv`` (bokeh CGM sample, public domain), loaded as day traces by
``synthreview.io.traces.load_traces``; each trace also appears scaled by 0.55 (subject
``<id> low``) so that hypoglycemia bands, LBGI and hypo episodes are exercised. Output:
``tests/reference/iglu_input.csv`` with columns ``subject, trace, time, gl`` (5-minute grid,
a dropped day is absent). ``iglu_consensus.py`` turns it into the reference numbers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from synthreview.io.traces import load_traces

HERE = Path(__file__).parent
DATA = HERE.parent / "data"


def main() -> None:
    frames = []
    for name in ("cgm_long.csv", "cgm_one_subject.csv"):
        traces = load_traces(DATA / name)
        for scale, suffix in ((1.0, ""), (0.55, " low")):
            for i in range(traces.n_traces):
                start = pd.Timestamp(traces.meta["start"].iloc[i])
                subject = f"{traces.meta['source_id'].iloc[i]}{suffix}"
                times = start + pd.to_timedelta(np.arange(traces.n_steps) * 5, unit="min")
                frames.append(
                    pd.DataFrame(
                        {
                            "subject": subject,
                            "trace": f"{subject} {start:%Y-%m-%d}",
                            "time": times.strftime("%Y-%m-%d %H:%M:%S"),
                            "gl": np.round(traces.values[i] * scale, 4),
                        }
                    )
                )
    pd.concat(frames).to_csv(HERE / "iglu_input.csv", index=False)


if __name__ == "__main__":
    main()
