"""The console commands: `qualstat` (compare reports) and `qualbench` (lint, import)."""
