"""Tools for writing fixtures: the linter and the importers of standard IR collections."""
