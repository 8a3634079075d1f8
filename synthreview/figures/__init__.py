"""Plotly figure builders: result objects in, ``plotly.graph_objects.Figure`` out.

One module per area (``fidelity``, ``privacy``, ``utility``, ``glucose``, ``audit``); none
imports streamlit, so the HTML report and the dashboard draw the same figures.
"""

from __future__ import annotations

from synthreview.figures import audit, fidelity, glucose, privacy, text, utility
from synthreview.figures.style import apply_style, palette, source_color

__all__ = [
    "apply_style",
    "audit",
    "fidelity",
    "glucose",
    "palette",
    "privacy",
    "source_color",
    "text",
    "utility",
]
