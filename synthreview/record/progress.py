"""A review run's progress: steps done, the step running, and an estimate of the time left.

:class:`RunProgress` keeps the state the dashboard's progress panel draws (it draws nothing
itself): each step's expected seconds come from the steps of the same section timed earlier in
the session (``timings``), else a prior; the running step's own progress replaces its estimate
once it has said enough. The same numbers make the bar, the sentence and the step table.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pandas as pd

from synthreview.figures.text import markdown_text

__all__ = ["PRIOR_SECONDS", "SECTION_LABELS", "RunProgress", "format_seconds"]

SECTION_LABELS = {
    "prepare": "Encoder and embedding",
    "fidelity": "Fidelity",
    "privacy": "Privacy",
    "utility": "Utility",
    "glucose": "Glucose",
    "release": "Audit, curation and decision",
}
#: relative cost of one step before this session has timed any (demo, 2 cores: prepare 7 s,
#: fidelity 3 s, privacy 8-40 s, utility 5-10 s per candidate); only shapes the first estimate
PRIOR_SECONDS = {
    "prepare": 7.0, "fidelity": 3.0, "privacy": 20.0, "utility": 8.0, "glucose": 60.0,
    "release": 20.0,
}  # fmt: skip

Step = tuple[str, str]  # (candidate, section)


def format_seconds(seconds: float) -> str:
    """``"45 s"``, ``"3 min 05 s"``."""
    seconds = max(0, round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


def _estimate(section: str, timings: dict[str, list[float]]) -> float:
    seen = timings.get(section)
    return sum(seen) / len(seen) if seen else PRIOR_SECONDS.get(section, 10.0)


@dataclass
class RunProgress:
    """Where a run stands.

    Attributes
    ----------
    steps : list of (candidate, section)
        Every step of the run, in order (release steps are added when they are known).
    timings : dict of str to list of float
        Seconds of the steps timed so far, by section (the session's; :meth:`finish` adds).
    """

    steps: list[Step]
    timings: dict[str, list[float]]
    done: dict[Step, str] = field(default_factory=dict)
    current: Step | None = None
    fraction: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    step_started: float = 0.0

    def remaining(self) -> float:
        """Seconds the run is expected to take still."""
        left = [s for s in self.steps if s not in self.done and s != self.current]
        rest = sum(_estimate(section, self.timings) for _, section in left)
        if self.current is not None:
            expected = _estimate(self.current[1], self.timings)
            elapsed = time.perf_counter() - self.step_started
            if self.fraction > 0.1:  # the step's own progress says more than the average
                expected = elapsed / self.fraction
            rest += max(expected - elapsed, 0.0)
        return rest

    def line(self, message: str = "") -> tuple[float, str]:
        """The bar's fraction and its sentence (``message``: what the running step reports)."""
        total = sum(_estimate(s, self.timings) for _, s in self.steps) or 1.0
        left = self.remaining()
        overall = min(max(1.0 - left / total, 0.0), 1.0)
        where = ""
        if self.current is not None:
            name, section = self.current
            where = markdown_text(f"{SECTION_LABELS[section]} of {name}: {message}") + " · "
        elapsed = time.perf_counter() - self.started
        return overall, (
            f"{where}{len(self.done)} of {len(self.steps)} steps done · about "
            f"{format_seconds(left)} left (elapsed {format_seconds(elapsed)})"
        )

    def frame(self) -> pd.DataFrame:
        """One row per candidate, one column per section: done (seconds), running, waiting."""
        names = list(dict.fromkeys(n for n, _ in self.steps))
        sections = list(dict.fromkeys(s for _, s in self.steps))
        rows = []
        for name in names:
            row = {"candidate": name}
            for section in sections:
                step = (name, section)
                if step in self.done:
                    row[SECTION_LABELS[section]] = self.done[step]
                elif step == self.current:
                    row[SECTION_LABELS[section]] = f"running {self.fraction:.0%}"
                elif step in self.steps:
                    row[SECTION_LABELS[section]] = "waiting"
                else:
                    row[SECTION_LABELS[section]] = "stored"
            rows.append(row)
        return pd.DataFrame(rows)

    def start(self, step: Step) -> None:
        """``step`` starts running."""
        self.current, self.fraction = step, 0.0
        self.step_started = time.perf_counter()

    def finish(self, step: Step, seconds: float, error: str | None) -> None:
        """``step`` is done (failed with ``error``) in ``seconds``; its time is remembered."""
        self.done[step] = (
            f"failed ({format_seconds(seconds)})" if error else format_seconds(seconds)
        )
        self.current = None
        self.timings.setdefault(step[1], []).append(seconds)

    def report(self, fraction: float) -> None:
        """The running step's own progress (0 to 1)."""
        self.fraction = min(max(float(fraction), 0.0), 1.0)
