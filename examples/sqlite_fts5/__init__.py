"""A bring-your-own engine on SQLite FTS5 (see README.md here)."""
