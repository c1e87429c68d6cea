"""Example engines for pytest-qualbench: run them, copy them, they are not part of the plugin."""
