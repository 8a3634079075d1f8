"""synthreview: review synthetic tables and glucose traces before they leave the building."""

from __future__ import annotations

__version__ = "0.1.0"
