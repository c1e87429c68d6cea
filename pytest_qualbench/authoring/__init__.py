"""Tools for writing fixtures: the linter, the importers of standard IR collections, and
the logic of `qualbench add`, `case` and `show` (pure functions over fixture files and an
engine factory)."""
