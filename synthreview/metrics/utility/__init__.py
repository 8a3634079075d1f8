"""metrics/utility."""
