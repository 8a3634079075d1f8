"""The review record: one review, whole, written as its folder and read back (``open_review``)."""
