"""Evaluation: running a case through the engine, judging it, and the metric formulas."""
