"""metrics/glucose."""
