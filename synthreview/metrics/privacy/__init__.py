"""metrics/privacy."""
