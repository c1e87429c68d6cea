"""Ready engines over third-party search libraries, each behind its own extra.

Every module here imports its library at the top, so importing one without its
extra installed fails; `pytest_qualbench.adapters.registry` turns that into a
usage error naming the extra.
"""
