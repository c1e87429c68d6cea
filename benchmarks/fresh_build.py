"""One system's index build in a fresh process: its time and its memory as the OS sees it.

`python -m benchmarks.fresh_build CORPUS SYSTEM CHUNKS` prints one JSON line:
build seconds (wall, and the process's CPU), peak RSS during the build and RSS retained once it is done,
both in MB above the process's RSS just before the build (interpreter,
libraries and the corpus, which every system holds alike); then, after those,
the corpus's queries answered once each: their median milliseconds, the share
that found anything (every query is drawn from a chunk's words, so a whole index
answers all of them; the 1M test asserts it) and source recall@10. Before that
baseline the system builds over ten entries, so imports and one-off set-up
stay out of both the clock and the memory; then the kernel's high-water mark
is reset (`/proc/self/clear_refs`), so the peak is the build's own.

The benchmark's side: `run` starts that process and reads its line, and
ChildClock hands the child's build seconds to pytest-benchmark as its timer.
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.corpora import CORPORA
from benchmarks.corpus import Corpus
from benchmarks.systems import MAKERS

STATUS = Path("/proc/self/status")
WARM_UP_CHUNKS = 10
REPO = Path(__file__).resolve().parent.parent
TIMEOUT_S = 1800


def status_mb(field: str) -> float:
    """A memory field of /proc/self/status (VmRSS, VmHWM), in MB."""
    for line in STATUS.read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise LookupError(f"{field} not in {STATUS}")


def reset_peak() -> None:
    """Set the process's peak RSS (VmHWM) to its current RSS (Linux >= 4.0)."""
    Path("/proc/self/clear_refs").write_text("5")


def measure(corpus_name: str, system: str, chunks: int) -> dict[str, float]:
    corpus = CORPORA[corpus_name](chunks)
    warm_up = Corpus(corpus.entries[:WARM_UP_CHUNKS], corpus.queries)
    MAKERS[system]().build(warm_up)
    gc.collect()
    built = MAKERS[system]()
    baseline = status_mb("VmRSS")
    reset_peak()
    started = time.perf_counter()
    cpu_started = time.process_time()
    built.build(corpus)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    peak = status_mb("VmHWM")
    gc.collect()
    retained = status_mb("VmRSS")
    found = []
    query_ms = []
    for query in corpus.queries:
        query_started = time.perf_counter()
        found.append(built.search(query.text))
        query_ms.append((time.perf_counter() - query_started) * 1000)
    return {
        "build_s": seconds,
        "build_cpu_s": cpu_seconds,
        "peak_mb": peak - baseline,
        "retained_mb": retained - baseline,
        "query_p50_ms": statistics.median(query_ms),
        "answered": sum(1 for rows in found if rows) / len(found),
        "source_recall": corpus.source_recall(found),
    }


def run(corpus_name: str, system: str, chunks: int) -> dict[str, float]:
    """What `measure` gives in a fresh process."""
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.fresh_build", corpus_name, system, str(chunks)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=TIMEOUT_S,
    )
    measured: dict[str, float] = json.loads(completed.stdout.strip().splitlines()[-1])
    return measured


class ChildClock:
    """A pytest-benchmark timer that moves only by the build seconds a child reported.

    Read before and after a round that runs one child and advances the clock by
    its `build_s`, it makes that round's time the build itself, without the
    child's interpreter start, imports, corpus and warm-up.
    """

    def __init__(self) -> None:
        # pytest-benchmark names a benchmark's timer by __name__ in its JSON.
        self.__name__ = "ChildClock"
        self.seconds = 0.0

    def __call__(self) -> float:
        return self.seconds

    def advance(self, seconds: float) -> None:
        self.seconds += seconds


def main() -> None:
    corpus_name, system, chunks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.stdout.write(json.dumps(measure(corpus_name, system, chunks)) + "\n")


if __name__ == "__main__":
    main()
