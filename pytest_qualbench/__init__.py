"""pytest-qualbench: retrieval-quality gates for pytest."""

__version__ = "0.1.0"
