"""A report that cannot be written (a full disk, a read-only mount): one error line, no traceback.

Issue 25 finding 8. The filesystem is real: a small tmpfs mounted by the test,
filled to the last byte or remounted read-only. That needs root and a `mount`
that works (a container may refuse); the test skips, saying why, where it cannot.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import WriteFixture, case, entry

OLD_REPORT = '{"an": "earlier report"}\n'


@pytest.fixture
def small_filesystem(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs, unmounted after the test."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "mnt"
    mount.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


def fill(directory: Path) -> None:
    """Write until the filesystem has no byte left."""
    descriptor = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        for size in (65536, 4096, 1):
            while True:
                try:
                    os.write(descriptor, b"x" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(descriptor)


@pytest.mark.usefixtures("word_engine")
@pytest.mark.parametrize(
    ("fault", "cause"),
    [("full", "No space left on device (ENOSPC)"), ("read-only", "Read-only file system (EROFS)")],
)
def test_an_unwritable_report_ends_the_run_with_one_line_and_keeps_the_old_report(
    pytester: pytest.Pytester,
    write_fixture: WriteFixture,
    small_filesystem: Path,
    fault: str,
    cause: str,
) -> None:
    write_fixture(
        "markdown.jsonl",
        [entry("md_a", "alpha beta\n\ngamma", [case("md_a_q1", "alpha", ["alpha beta"])])],
    )
    report = small_filesystem / "report.json"
    report.write_text(OLD_REPORT, encoding="utf-8")
    if fault == "full":
        fill(small_filesystem)
    else:
        subprocess.run(["mount", "-o", "remount,ro", str(small_filesystem)], check=True)
    result = pytester.runpytest_subprocess("--qualbench", f"--qualbench-report={report}")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output
    assert "INTERNALERROR" not in output
    # The metrics and pytest's counts are still there, then the one line saying why.
    result.stdout.fnmatch_lines(["*= qualbench =*", "overall*1*", "*= 1 passed in *"])
    lines = [line for line in result.stdout.lines if line.strip()]
    assert lines[-1] == (
        f"qualbench ERROR: cannot write the report {report}: {cause}; "
        "the report already there is left as it was"
    )
    assert report.read_text(encoding="utf-8") == OLD_REPORT
    assert sorted(path.name for path in small_filesystem.iterdir()) == sorted(
        ["report.json"] + (["filler"] if fault == "full" else [])
    )
