"""metrics/fidelity."""
