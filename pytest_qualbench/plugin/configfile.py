"""Noticing a project configuration pytest did not read.

pytest looks for its ini file from the common ancestor of the paths on the
command line, so `pytest --qualbench /elsewhere` run from a project, or a
`--qualbench-report PATH` whose folder exists, can make it miss the project's
own file. The project's floors, fixture paths and engine then silently vanish
and the gate passes on defaults; this module finds that file so the run can
say so loudly.
"""

from __future__ import annotations

from pathlib import Path

# pytest's own search order within one directory, and what marks its section there.
CONFIG_FILES = (
    ("pytest.ini", ""),
    (".pytest.ini", ""),
    ("pyproject.toml", "[tool.pytest"),
    ("tox.ini", "[pytest]"),
    ("setup.cfg", "[tool:pytest]"),
)


def unread_project_config(invocation_dir: Path, inipath: Path | None) -> Path | None:
    """The configuration file pytest would use from `invocation_dir`, if it is not `inipath`."""
    for folder in (invocation_dir, *invocation_dir.parents):
        for name, section in CONFIG_FILES:
            candidate = folder / name
            if candidate.is_file() and _has_section(candidate, section):
                same = inipath is not None and candidate.resolve() == inipath.resolve()
                return None if same else candidate
    return None


def unread_config_message(candidate: Path, rootpath: Path, inipath: Path | None) -> str:
    read = f"configfile {inipath}" if inipath is not None else "no configfile"
    return (
        f"qualbench: {candidate} was not read: pytest chose rootdir {rootpath} ({read}) from the "
        "paths on the command line, so that file's qualbench floors, paths and engine do not "
        f"apply to this run. Pass -c {candidate} (or --rootdir={candidate.parent}) to use it."
    )


def _has_section(path: Path, section: str) -> bool:
    if not section:
        return True
    try:
        return section in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
