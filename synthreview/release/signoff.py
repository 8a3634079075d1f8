"""The release meeting's sign-off: who decided what for a candidate, and why.

The tool's decision (:mod:`synthreview.judgement.decision`) is advice; the meeting decides. A
:class:`SignOff` records that decision beside the tool's in ``report.json`` (under
``signoff``, one entry per candidate) and in ``report.html``. A meeting may overrule the tool,
but never silently: :func:`sign_off` refuses a decision that differs from the tool's without
a reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import cast

from synthreview.errors import ConfigError
from synthreview.judgement.verdicts import Outcome

#: the decisions a meeting can sign: the four a filed report holds (never the dashboard's
#: "out of date", which no export carries)
DECISIONS: tuple[str, ...] = ("release", "release_after_curation", "do_not_release", "incomplete")
#: longest reviewer name accepted (a name, not a paragraph)
MAX_REVIEWER = 200
#: longest reason and comment accepted
MAX_TEXT = 5000


@dataclass(frozen=True)
class SignOff:
    """The meeting's decision on one candidate.

    Attributes
    ----------
    reviewer : str
        Who signed, as typed (surrounding whitespace removed).
    decision : {"release", "release_after_curation", "do_not_release", "incomplete"}
        The decision the meeting took; it may differ from the tool's.
    reason : str
        Why; never empty when ``decision`` differs from the tool's decision.
    comment : str
        Anything else the meeting wants on file (may be empty).
    time : datetime
        When it was signed, timezone-aware.
    """

    reviewer: str
    decision: Outcome
    reason: str
    comment: str
    time: datetime

    def to_dict(self) -> dict[str, str]:
        """JSON-ready sign-off; ``time`` as ISO 8601 in UTC, to the second."""
        return {
            "reviewer": self.reviewer,
            "decision": self.decision,
            "reason": self.reason,
            "comment": self.comment,
            "time": self.time.astimezone(UTC).isoformat(timespec="seconds"),
        }


def _text(value: object, field: str, *, limit: int, required: bool) -> str:
    if not isinstance(value, str):
        raise ConfigError(
            f"sign-off {field} must be text of at most {limit} characters; "
            f"got {type(value).__name__} {value!r} instead"
        )
    text = value.strip()
    if required and not text:
        raise ConfigError(f"sign-off {field} must not be empty; got {value!r} instead")
    if len(text) > limit:
        raise ConfigError(
            f"sign-off {field} must be at most {limit} characters; got {len(text)} instead"
        )
    return text


def _outcome(value: object, field: str) -> Outcome:
    if value not in DECISIONS:
        raise ConfigError(
            f"sign-off {field} must be one of {list(DECISIONS)}; got {value!r} instead"
        )
    return cast(Outcome, value)


def sign_off(
    reviewer: str,
    decision: str,
    *,
    tool_decision: str,
    reason: str = "",
    comment: str = "",
    time: datetime | None = None,
) -> SignOff:
    """A validated :class:`SignOff`.

    Parameters
    ----------
    reviewer : str
        The name of who signs: non-empty, at most :data:`MAX_REVIEWER` characters.
    decision : {"release", "release_after_curation", "do_not_release", "incomplete"}
        The meeting's decision.
    tool_decision : {"release", "release_after_curation", "do_not_release", "incomplete"}
        The tool's decision for the same candidate (``Decision.outcome``).
    reason : str, optional
        Mandatory (non-blank) when ``decision`` differs from ``tool_decision``.
    comment : str, optional
    time : datetime, optional
        Timezone-aware; defaults to now (UTC).

    Returns
    -------
    SignOff

    Raises
    ------
    ConfigError
        Naming the field, what was expected and what was received.

    Examples
    --------
    >>> sign_off("A. Reviewer", "release", tool_decision="release").decision
    'release'
    """
    name = _text(reviewer, "reviewer", limit=MAX_REVIEWER, required=True)
    taken = _outcome(decision, "decision")
    tool = _outcome(tool_decision, "tool_decision")
    why = _text(reason, "reason", limit=MAX_TEXT, required=False)
    note = _text(comment, "comment", limit=MAX_TEXT, required=False)
    if taken != tool and not why:
        raise ConfigError(
            f"sign-off reason is required when the meeting's decision ({taken!r}) differs from "
            f"the tool's ({tool!r}); got {reason!r} instead"
        )
    if time is None:
        moment = datetime.now(UTC)
    elif not isinstance(time, datetime) or time.tzinfo is None:
        raise ConfigError(f"sign-off time must be a timezone-aware datetime; got {time!r} instead")
    else:
        moment = time
    return SignOff(reviewer=name, decision=taken, reason=why, comment=note, time=moment)
