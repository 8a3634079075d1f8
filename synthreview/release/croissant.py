"""A Croissant JSON-LD card (with its Responsible-AI fields) for each curated file that ships.

Croissant (MLCommons, 1.0) describes a dataset's files and fields so a catalogue or loader can
read them; its RAI vocabulary (``http://mlcommons.org/croissant/RAI/``) adds how the data were
made, what personal information they may hold, their limitations and intended uses.
:func:`croissant_card` writes ``NAME/croissant.json`` beside ``NAME/curated.csv``: the file's
sha256, its columns, the source digest it was cut from, how many rows were removed and why, the
decision and the release context. It is one of the release's files, so the manifest lists it
and the signed statement covers it. The card states the review's findings; it does not make the
data anonymous (``docs/compliance.md``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pandas as pd

from synthreview.judgement.context import ReleaseContext
from synthreview.judgement.decision import Decision
from synthreview.release.curation import CurationResult
from synthreview.release.export import dumps

#: the Croissant 1.0 JSON-LD context (the terms this card uses)
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileObject": "cr:fileObject",
    "recordSet": "cr:recordSet",
    "source": "cr:source",
    "synthreview": "https://synthreview.dev/ns#",
}
CONFORMS_TO = ["http://mlcommons.org/croissant/1.0", "http://mlcommons.org/croissant/RAI/1.0"]


def _data_type(values: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(values):
        return "sc:Boolean"
    if pd.api.types.is_integer_dtype(values):
        return "sc:Integer"
    if pd.api.types.is_float_dtype(values):
        return "sc:Float"
    if pd.api.types.is_datetime64_any_dtype(values):
        return "sc:DateTime"
    return "sc:Text"


def croissant_card(
    name: str,
    *,
    folder: str,
    curation: CurationResult,
    curated_csv: bytes,
    decision: Decision,
    context: ReleaseContext | None,
    policy: Mapping[str, object] | None,
) -> bytes:
    """``NAME/croissant.json``: a Croissant 1.0 + RAI card of a shipped curated file.

    Parameters
    ----------
    name, folder : str
        The candidate and its folder in the record.
    curation : CurationResult
        The kept and removed rows, their reasons and the source digest.
    curated_csv : bytes
        The shipped ``curated.csv`` (its sha256 goes into the card).
    decision : Decision
    context : ReleaseContext or None
    policy : mapping or None
        ``report.json`` ``policy`` (name, sha256, access model).
    """
    reasons = Counter(
        r.strip() for reason in curation.reasons for r in reason.split(";") if r.strip()
    )
    removed = (
        f"{len(curation.removed_rows)} of {curation.n_input} rows removed by the release audit"
        + (": " + ", ".join(f"{r} ({n})" for r, n in sorted(reasons.items())) if reasons else "")
    )
    policy = policy or {}
    where = (
        f"{context.access} access for {context.recipient}: {context.purpose}"
        if context is not None
        else "no release context given: judged under the strictest thresholds (public)"
    )
    card = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": f"{name} (curated synthetic data)",
        "description": (
            f"Synthetic data {name!r}, curated by synthreview's release audit. Decision: "
            f"{decision.outcome} - {decision.reason}"
        ),
        "isBasedOn": {"@type": "cr:FileObject", "name": name, "sha256": curation.source_sha256},
        "distribution": [
            {
                "@type": "cr:FileObject",
                "@id": "curated.csv",
                "name": "curated.csv",
                "contentUrl": "curated.csv",
                "encodingFormat": "text/csv",
                "sha256": hashlib.sha256(curated_csv).hexdigest(),
            }
        ],
        "recordSet": [
            {
                "@type": "cr:RecordSet",
                "@id": "curated",
                "name": "curated",
                "field": [
                    {
                        "@type": "cr:Field",
                        "@id": f"curated/{column}",
                        "name": str(column),
                        "dataType": _data_type(curation.kept_frame[column]),
                        "source": {
                            "fileObject": {"@id": "curated.csv"},
                            "extract": {"column": str(column)},
                        },
                    }
                    for column in curation.kept_frame.columns
                ],
            }
        ],
        "rai:hasSyntheticData": True,
        "rai:dataCollection": (
            f"Generated by a synthetic data generator trained on real data; the candidate file "
            f"(sha256 {curation.source_sha256}) was reviewed against its training and holdout "
            "data by synthreview, and the rows its audit flagged were removed."
        ),
        "rai:dataCollectionType": "Synthetic data generation",
        "rai:dataPreprocessingProtocol": removed,
        "rai:personalSensitiveInformation": (
            "Synthetic rows modelled on personal data. The release audit removed rows flagged "
            "as copies of or too close to training records; the privacy rules of the policy "
            f"{policy.get('name')!r} (sha256 {policy.get('sha256')}) judged the rest. Residual "
            "disclosure risk is not zero: see report.html for every rule's evidence."
        ),
        "rai:dataUseCases": context.purpose if context is not None else "not stated",
        "rai:dataLimitations": (
            "Statistical fidelity and utility as measured in report.html; not a substitute for "
            "the real data in decisions about individuals. Judged for: " + where + "."
        ),
        "rai:dataReleaseMaintenancePlan": (
            f"Review again before {context.expires}."
            if context is not None and context.expires
            else "No expiry given in the release context."
        ),
        "synthreview:decision": decision.to_dict(),
        "synthreview:context": context.to_dict() if context is not None else None,
        "synthreview:folder": folder,
    }
    return dumps(card)
