"""A throwaway PostgreSQL server from Debian's `postgresql` package, for tests and benchmarks.

`initdb` and `pg_ctl` run in a temporary directory as the current user, or as
`nobody` when that is root (PostgreSQL refuses to run as root). The server
listens only on a Unix socket in that directory and trusts its one user.

    python -m tests.postgres_server COMMAND...   # COMMAND runs with $QUALBENCH_POSTGRES_DSN set
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DSN_VARIABLE = "QUALBENCH_POSTGRES_DSN"
UNPRIVILEGED_USER = "nobody"
DATABASE_USER = "qualbench"


def server_binaries() -> Path | None:
    """The newest installed /usr/lib/postgresql/<version>/bin holding initdb, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version_key)
    return Path(found[-1]).parent if found else None


def _version_key(path: str) -> int:
    version = Path(path).parent.parent.name
    return int(version) if version.isdigit() else 0


def as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", UNPRIVILEGED_USER, "--", *command]


@contextmanager
def throwaway_server(binaries: Path, password: str | None = None) -> Iterator[str]:
    """Start a server in a fresh temporary directory; yield its DSN; stop it and remove the directory.

    The directory sits in /tmp: a Unix socket path must stay under ~100 bytes. With
    a `password` the server asks for it (scram-sha-256) instead of trusting its user.
    """
    directory = Path(tempfile.mkdtemp(prefix="qbpg-", dir="/tmp"))
    if os.geteuid() == 0:
        shutil.chown(directory, UNPRIVILEGED_USER)
    data = directory / "data"
    log = directory / "server.log"
    run = as_server_user
    auth = ["--auth=trust"]
    if password is not None:
        password_file = directory / "password"
        password_file.write_text(password)
        if os.geteuid() == 0:
            shutil.chown(password_file, UNPRIVILEGED_USER)
        auth = ["--auth=scram-sha-256", f"--pwfile={password_file}"]
    try:
        subprocess.run(
            run([str(binaries / "initdb"), "-D", str(data), "-U", DATABASE_USER, *auth,
                 "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]),
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        # fsync off: the data is thrown away with the directory.
        options = f"-k {directory} -c listen_addresses='' -c fsync=off"
        subprocess.run(
            run([str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log),
                 "-w", "start"]),
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        try:
            given = "" if password is None else f" password={password}"
            yield f"host={directory} user={DATABASE_USER} dbname=postgres{given}"
        finally:
            subprocess.run(
                run([str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
                check=False, capture_output=True,
            )  # fmt: skip
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main(command: list[str]) -> int:
    """Run `command` with $QUALBENCH_POSTGRES_DSN naming a throwaway server (.ci/run uses it)."""
    binaries = server_binaries()
    if binaries is None:
        print("postgres_server: no initdb under /usr/lib/postgresql: apt-get install postgresql")
        return 2
    with throwaway_server(binaries) as dsn:
        completed = subprocess.run(command, env={**os.environ, DSN_VARIABLE: dsn}, check=False)
    return completed.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
