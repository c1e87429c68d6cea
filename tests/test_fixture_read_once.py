"""A fixture file is parsed and hashed from one read (issue 25, finding 1).

When the loader parsed one read of a file and hashed a second, a file replaced
in between (an editor's atomic save, a `git checkout`) had the old text's index
cached under the new text's hash, and every later run was served it. The file
here is a real named pipe: whoever opens it gets the next version its writer
hands out, so a second open is the replacement, at exactly that point.
"""

from __future__ import annotations

import errno
import hashlib
import os
import threading
import time
from pathlib import Path

import pytest

from pytest_qualbench.engine import Engine
from pytest_qualbench.evaluation.runner import BenchRun
from pytest_qualbench.fixtures.loading import load_fixture_set
from pytest_qualbench.index_cache import IndexCache
from tests.conftest import case, entry, jsonl

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/fd").is_dir() or not hasattr(os, "mkfifo"),
    reason="needs named pipes and /proc/self/fd (Linux)",
)

# The old text and its replacement: the haystack changed, the needle was not updated.
THIRTY = jsonl(
    [
        entry(
            "txt_001",
            "The pool holds thirty connections.",
            [case("txt_001_q1", "pool connections", ["thirty connections"], layer="any")],
            content_type="plaintext",
        )
    ]
).encode("utf-8")
SIXTY = THIRTY.replace(b"holds thirty", b"holds sixty")
# How long the writer waits for a second open that a one-read loader never makes.
SECOND_OPEN_WAIT_S = 3.0


class Replacing(threading.Thread):
    """Hands the first opener of the pipe `first`, and a second opener `second`."""

    def __init__(self, pipe: Path, first: bytes, second: bytes) -> None:
        super().__init__(daemon=True)
        self.pipe, self.first, self.second = pipe, first, second
        self.opens = 0

    def run(self) -> None:
        with self.pipe.open("wb") as writer:  # blocks until the loader opens it
            writer.write(self.first)
            # Closed only once the loader's descriptor is there: it cannot reach the
            # end of the file before, so its first open is then told from a second.
            while not self.loader_holds_it(besides=writer.fileno()):
                time.sleep(0.001)
        self.opens = 1
        deadline = time.monotonic() + SECOND_OPEN_WAIT_S
        while time.monotonic() < deadline:
            if self.loader_holds_it():
                # Still the first open, reading to the end: not a second one yet.
                time.sleep(0.01)
                continue
            try:
                descriptor = os.open(self.pipe, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno != errno.ENXIO:  # ENXIO: nobody has it open for reading
                    raise
                time.sleep(0.01)
                continue
            os.set_blocking(descriptor, True)
            with os.fdopen(descriptor, "wb") as writer:
                writer.write(self.second)
            self.opens = 2
            return
        # Nobody opened it again: a late second open finds no file rather than
        # waiting forever for a writer.
        self.pipe.unlink()

    def loader_holds_it(self, besides: int | None = None) -> bool:
        """Whether this process (the loader runs in it) has the pipe open, `besides` aside."""
        descriptors = Path("/proc/self/fd")
        for descriptor in descriptors.iterdir():
            if descriptor.name == str(besides):
                continue
            try:
                if Path(os.readlink(descriptor)) == self.pipe:
                    return True
            except OSError:
                continue  # closed while we looked
        return False


def load_while_replaced(root: Path) -> tuple[BenchRun, Replacing]:
    pipe = root / "bench_fixtures" / "plaintext.jsonl"
    pipe.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(pipe)
    replacing = Replacing(pipe, THIRTY, SIXTY)
    replacing.start()
    fixture_set = load_fixture_set([pipe], root)
    replacing.join()
    pipe.unlink(missing_ok=True)
    bench_run = BenchRun(
        fixture_set=fixture_set,
        engine_factory=lambda content_type: Engine(),
        limit=10,
        index_cache=IndexCache(root / ".qualbench" / "index-cache"),
    )
    return bench_run, replacing


def test_the_hash_is_of_the_bytes_that_were_parsed(tmp_path: Path) -> None:
    bench_run, replacing = load_while_replaced(tmp_path)
    assert replacing.opens == 1, "the loader opened the fixture file a second time"
    fixture_set = bench_run.fixture_set
    assert "thirty" in fixture_set.entries()[0].haystack
    (digest,) = fixture_set.dataset_files
    assert (digest.size, digest.sha256) == (len(THIRTY), hashlib.sha256(THIRTY).hexdigest())


def test_an_edit_during_loading_never_serves_the_old_index_under_the_new_hash(
    pytester: pytest.Pytester,
) -> None:
    # Run 1 loads while the file is replaced, and stores the index it built.
    bench_run, _ = load_while_replaced(pytester.path)
    assert not isinstance(bench_run.build("plaintext"), Exception)
    bench_run.close()
    # Run 2 reads the file as it now is: "sixty", so the needle "thirty" is nowhere.
    (pytester.path / "bench_fixtures" / "plaintext.jsonl").write_bytes(SIXTY)
    result = pytester.runpytest("--qualbench", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*needles*FAIL*0 of 1 needles found*"])
    assert "cached" not in result.stdout.str()
