"""The release context: to whom, for what and under which threat a candidate would be released.

ISO/IEC 27559:2022 makes the context assessment (recipient, environment, threat model) the first
step of an identifiability judgement, and the EU court (C-413/23 P) makes identifiability depend
on who receives the data: the same numbers may be enough for a secure research environment and
too little for the public. A review records its context (``--context FILE.toml``, the Data
page's form) in ``report.json`` ``context`` and inside the signed statement, and the policy
judges it under that access model's thresholds (:meth:`synthreview.judgement.policy.Policy.
for_access`). A review without a context is judged under the strictest set (fail closed).

A context file::

    recipient = "Diabetes research consortium, WP3"
    purpose = "method development for glucose forecasting"
    access = "secure"              # public | licensed | secure | internal
    threat_model = "analysts inside the TRE; no linkage data allowed in"
    expires = 2027-06-30           # optional: a TOML date or "YYYY-MM-DD"
    legal_basis = "GDPR Art. 6(1)(e), 9(2)(j)"   # optional
    source = "cgm-cohort-2025"     # optional: the training data's id for the ledger
"""

from __future__ import annotations

import datetime as dt
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from synthreview.errors import ConfigError

#: access models, from the widest audience to the narrowest; a review without a context is
#: judged as the first (the policy's strictest set)
ACCESS_MODELS = ("public", "licensed", "internal", "secure")
#: the access model a review without a context is judged under (fail closed)
STRICTEST = ACCESS_MODELS[0]
_REQUIRED = ("recipient", "purpose", "access", "threat_model")
_OPTIONAL = ("expires", "legal_basis", "source")
# longest free text kept in the record (a context is a statement, not a document)
MAX_TEXT = 2000


@dataclass(frozen=True)
class ReleaseContext:
    """Who receives a release, why, how it is accessed and who might attack it.

    Attributes
    ----------
    recipient, purpose : str
    access : {"public", "licensed", "internal", "secure"}
        The data-sharing model (NIST SP 800-188 §4): it picks the policy's ``[access.NAME]``
        thresholds.
    threat_model : str
        Who might try to re-identify, with what external data (ICO motivated intruder).
    expires : str or None
        ISO date after which the release must be reviewed again.
    legal_basis : str or None
    source : str or None
        An id of the training data, under which the ledger adds releases up.
    """

    recipient: str
    purpose: str
    access: str
    threat_model: str
    expires: str | None = None
    legal_basis: str | None = None
    source: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        """``report.json`` ``context``."""
        return {
            "recipient": self.recipient,
            "purpose": self.purpose,
            "access": self.access,
            "threat_model": self.threat_model,
            "expires": self.expires,
            "legal_basis": self.legal_basis,
            "source": self.source,
        }


def parse_context(values: Mapping[str, object], *, where: str = "context") -> ReleaseContext:
    """Check a context's fields (a parsed TOML file or the dashboard's form).

    Raises
    ------
    ConfigError
        A missing or unknown field, an empty or over-long text, an access model not in
        :data:`ACCESS_MODELS`, an ``expires`` that is not a date: the message names the field,
        what it must be and what was given.
    """
    if not isinstance(values, Mapping):
        raise ConfigError(f"{where} must be a table of fields; got {type(values).__name__}")
    unknown = sorted(set(values) - {*_REQUIRED, *_OPTIONAL})
    if unknown:
        raise ConfigError(
            f"{where} has unknown fields {unknown}; expected {', '.join((*_REQUIRED, *_OPTIONAL))}"
        )
    missing = [name for name in _REQUIRED if name not in values]
    if missing:
        raise ConfigError(f"{where} must set {', '.join(missing)}; got {sorted(values)}")
    texts: dict[str, str | None] = {}
    for name in (*_REQUIRED, "legal_basis", "source"):
        value = values.get(name)
        if value is None and name not in _REQUIRED:
            texts[name] = None
            continue
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
            raise ConfigError(
                f"{where}: field {name!r} must be a non-empty text of at most {MAX_TEXT} "
                f"characters; got {value!r:.80} instead"
            )
        texts[name] = value.strip()
    if texts["access"] not in ACCESS_MODELS:
        raise ConfigError(
            f"{where}: field 'access' must be one of {list(ACCESS_MODELS)}; got "
            f"{texts['access']!r} instead"
        )
    return ReleaseContext(
        recipient=str(texts["recipient"]),
        purpose=str(texts["purpose"]),
        access=str(texts["access"]),
        threat_model=str(texts["threat_model"]),
        expires=_date(values.get("expires"), where),
        legal_basis=texts["legal_basis"],
        source=texts["source"],
    )


def _date(value: object, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()).isoformat()
        except ValueError:
            pass
    raise ConfigError(
        f"{where}: field 'expires' must be a date (YYYY-MM-DD); got {value!r:.80} instead"
    )


def load_context(path: str | Path) -> ReleaseContext:
    """Read and check a context TOML file (``--context FILE``)."""
    path = Path(path)
    where = f"option --context {str(path)!r}"
    try:
        values = tomllib.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where} cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where} is not valid TOML: {exc}") from None
    return parse_context(values, where=where)
