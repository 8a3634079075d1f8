"""The package version, read by the report, the manifest and ``synthreview.__version__``."""

__version__ = "0.1.0"
