"""A review run's progress: steps done, the step running, the time left and the decisions so far.

:class:`RunProgress` keeps the state the dashboard's progress panel draws (it draws nothing
itself): each step's expected seconds come from the steps of the same section timed earlier in
the session (``timings``), else a prior; the running step's own progress replaces its estimate
once it has said enough. The same numbers make the bar, the sentence and the step table.

Every step of the run is in the plan from the start, each candidate's audit and curation steps
too (a curation that turns out not to be needed is marked skipped, never dropped), so the
estimate only moves by what the steps' own times say: :meth:`RunProgress.spread` states that
uncertainty beside it. The decisions reached so far (:meth:`RunProgress.decide`) are drawn in
the step table as they come, each saying what is still being computed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pandas as pd

from synthreview.figures.text import markdown_text
from synthreview.judgement.decision import Decision
from synthreview.judgement.verdicts import style

__all__ = ["PRIOR_SECONDS", "SECTION_LABELS", "RunProgress", "decision_line", "format_seconds"]

SECTION_LABELS = {
    "prepare": "Encoder and embedding",
    "fidelity": "Fidelity",
    "privacy": "Privacy",
    "utility": "Utility",
    "glucose": "Glucose",
    "submitted": "Audit and decision as submitted",
    "release": "Curation and decision",
}
#: relative cost of one step before this session has timed any (demo, 2 cores: prepare 7 s,
#: fidelity 3 s, privacy 8-40 s, utility 5-10 s, audit under 1 s, curation 13-21 s per
#: candidate that fails); only shapes the first estimate
PRIOR_SECONDS = {
    "prepare": 7.0, "fidelity": 3.0, "privacy": 20.0, "utility": 8.0, "glucose": 60.0,
    "submitted": 1.0, "release": 20.0,
}  # fmt: skip

Step = tuple[str, str]  # (candidate, section)


def format_seconds(seconds: float) -> str:
    """``"45 s"``, ``"3 min 05 s"``."""
    seconds = max(0, round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


def decision_line(decision: Decision, *, pending: str | None) -> str:
    """A candidate's decision during the run, labelled with what may still change it
    (``pending``, as ``LiveReview.decision_so_far`` says): ``"NOT DECIDED YET - as submitted
    DO NOT RELEASE (audit included; its curation still running)"``, then ``"RELEASE AFTER
    CURATION (final, after curation)"``."""
    label = style(decision.outcome).label
    if pending == "curation":
        # fails closed: while its curation may still change the outcome, no line reads as a
        # bare RELEASE (a candidate with real records passes as submitted, then may not ship)
        return (
            f"NOT DECIDED YET - as submitted {label} (audit included; its curation still running)"
        )
    after = ", after curation" if decision.curated_verdict is not None else ""
    if pending == "ledger":
        return f"{label} (after audit{after}; the ledger's caps apply when all are decided)"
    return f"{label} (final{after})"


def _estimate(section: str, timings: dict[str, list[float]]) -> float:
    seen = timings.get(section)
    return sum(seen) / len(seen) if seen else PRIOR_SECONDS.get(section, 10.0)


def _uncertainty(section: str, timings: dict[str, list[float]]) -> float:
    """How far one step of ``section`` may run past its estimate: a step is taken to last at
    most twice the larger of its estimate and its prior (a step timed earlier on a quiet machine
    can take twice as long beside other work; one that runs shorter only brings the end
    nearer)."""
    estimate = _estimate(section, timings)
    return 2.0 * max(estimate, PRIOR_SECONDS.get(section, 10.0)) - estimate


@dataclass
class RunProgress:
    """Where a run stands.

    Attributes
    ----------
    steps : list of (candidate, section)
        Every step of the run, in order, from the start (the audit and curation steps too).
    timings : dict of str to list of float
        Seconds of the steps timed so far, by section (the session's; :meth:`finish` adds,
        except for skipped steps, whose near-zero time says nothing about the next one).
    decisions : dict of str to str
        The decision line of each candidate judged so far (:meth:`decide`).
    decided_at : dict of str to float
        Seconds from the run's start to the first decision line of each candidate.
    """

    steps: list[Step]
    timings: dict[str, list[float]]
    done: dict[Step, str] = field(default_factory=dict)
    current: Step | None = None
    fraction: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    step_started: float = 0.0
    decisions: dict[str, str] = field(default_factory=dict)
    decided_at: dict[str, float] = field(default_factory=dict)

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

    def spread(self) -> float:
        """The stated uncertainty of :meth:`remaining`: the sum of every step still to run
        (the running one included) of how far it may run past its estimate. As long as each
        step takes at most twice the larger of its estimate and its prior, and the running
        step's progress reports are proportional to its time, the estimate never rises between
        two readings by more than the spread stated at the first."""
        left = [s for s in self.steps if s not in self.done]
        return sum(_uncertainty(section, self.timings) for _, section in left)

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
            f"{format_seconds(left)} left, at most {format_seconds(left + self.spread())} "
            f"(elapsed {format_seconds(elapsed)})"
        )

    def frame(self) -> pd.DataFrame:
        """One row per candidate: its decision so far (:meth:`decide`), once there is one, then
        one column per section: done (seconds), running, waiting, skipped.

        The decision comes right after the name: the run panel is narrower than the table at
        1280×720, and a column right of the sections lay outside it (a reviewer had to scroll
        the table sideways to see a decision reached)."""
        names = list(dict.fromkeys(n for n, _ in self.steps))
        sections = list(dict.fromkeys(s for _, s in self.steps))
        rows = []
        for name in names:
            row = {"candidate": name}
            if self.decisions:
                row["Decision"] = self.decisions.get(name, "")
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

    def finish(
        self, step: Step, seconds: float, error: str | None, *, skipped: str | None = None
    ) -> None:
        """``step`` is done (failed with ``error``) in ``seconds``; its time is remembered.
        A step that turned out not to be needed is marked ``skipped`` (why) and its time not
        remembered: it would pull the estimate of the steps that are needed down."""
        if skipped is not None and error is None:
            self.done[step] = f"skipped: {skipped}"
        else:
            self.done[step] = (
                f"failed ({format_seconds(seconds)})" if error else format_seconds(seconds)
            )
            self.timings.setdefault(step[1], []).append(seconds)
        self.current = None

    def decide(self, name: str, line: str) -> None:
        """Candidate ``name``'s decision so far is ``line`` (drawn in the step table)."""
        self.decided_at.setdefault(name, time.perf_counter() - self.started)
        self.decisions[name] = line

    def report(self, fraction: float) -> None:
        """The running step's own progress (0 to 1)."""
        self.fraction = min(max(float(fraction), 0.0), 1.0)
