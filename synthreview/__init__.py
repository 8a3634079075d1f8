"""synthreview: review synthetic tables and glucose traces before they leave the building.

The public surface::

    import synthreview as sr
    review = sr.align(sr.read_table("train.csv"), [sr.read_table("synth.csv")],
                      holdout=sr.read_table("holdout.csv"))
    report = sr.evaluate(review, seed=0)
    report.to_dict()
    record = sr.open_review("review-folder", key="synthreview.pub")  # a stored review, whole
    record.decisions, record.verified
"""

from __future__ import annotations

from synthreview.errors import ConfigError, DataError, UndefinedMetricWarning
from synthreview.io.schema import LoadedTable, Review, Schema
from synthreview.io.tables import align, infer_schema, load_table, missing_rates, read_table
from synthreview.io.traces import Traces, align_traces, load_traces
from synthreview.options import ReviewOptions
from synthreview.record.store import open_review
from synthreview.review import Report, evaluate
from synthreview.version import __version__

__all__ = [
    "ConfigError",
    "DataError",
    "LoadedTable",
    "Report",
    "Review",
    "ReviewOptions",
    "Schema",
    "Traces",
    "UndefinedMetricWarning",
    "__version__",
    "align",
    "align_traces",
    "evaluate",
    "infer_schema",
    "load_table",
    "load_traces",
    "missing_rates",
    "open_review",
    "read_table",
]
