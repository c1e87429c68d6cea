"""Run every benchmark case through the built-in engine and show what it honestly does.

Usage: python scripts/calibrate_fixtures.py [FIXTURE_PATH ...] [--all]

For each case it prints the rank and layer of the first result whose text
contains a needle (case-sensitive), next to the case's expected_layer and
expected_rank_ceiling, and marks the case FAIL when a needle is missing from the
top results, the rank exceeds the ceiling, the layer differs, or a negative case
returns anything. Use it when writing or editing fixtures (docs/writing-fixtures.md):
set expectations from what the engine does, and rewrite a case that cannot pass
honestly instead of bending the engine. Exit status 1 when any case fails.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_qualbench.engine import ALL_KINDS, DEFAULT_LIMIT, Engine, Result
from pytest_qualbench.fixtures import CONTENT_TYPES, Case, discover_fixture_files, load_fixture_set

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Observation:
    """What the engine returned for one case, reduced to what a fixture author sets."""

    case: Case
    result_count: int
    rank: int | None
    layer: str | None
    needles_found: int

    @property
    def problems(self) -> list[str]:
        case = self.case
        if case.is_negative:
            return [f"{self.result_count} results"] if self.result_count else []
        problems = []
        if self.needles_found < len(case.needles):
            problems.append(f"needles {self.needles_found}/{len(case.needles)}")
        if self.rank is None:
            return [*problems, "no relevant result"]
        if case.expected_rank_ceiling and self.rank > case.expected_rank_ceiling:
            problems.append(f"rank {self.rank} > {case.expected_rank_ceiling}")
        if self.layer != case.expected_layer:
            problems.append(f"layer {self.layer} != {case.expected_layer}")
        return problems


def observe(case: Case, results: Sequence[Result]) -> Observation:
    """Locate the first relevant result (DESIGN.md section 6: text contains a needle)."""
    relevant = [
        (rank, result)
        for rank, result in enumerate(results, start=1)
        if any(needle in result.text for needle in case.needles)
    ]
    found = {needle for needle in case.needles for result in results if needle in result.text}
    first_rank, first = relevant[0] if relevant else (None, None)
    return Observation(
        case=case,
        result_count=len(results),
        rank=first_rank,
        layer=first.layer if first is not None else None,
        needles_found=len(found),
    )


def calibrate(paths: Sequence[Path]) -> list[Observation]:
    fixture_set = load_fixture_set(discover_fixture_files(paths), ROOT)
    for error in fixture_set.errors():
        print(f"fixture error: {error}", file=sys.stderr)
    observations = []
    for content_type in CONTENT_TYPES:
        entries = fixture_set.entries(content_type)
        if not entries:
            continue
        engine = Engine()
        engine.index(entries)
        for entry in entries:
            for case in entry.cases:
                results = engine.search(case.query, limit=DEFAULT_LIMIT, kinds=ALL_KINDS)
                observations.append(observe(case, results))
    return observations


def print_cases(observations: Sequence[Observation], show_all: bool) -> None:
    for obs in observations:
        if not show_all and not obs.problems:
            continue
        status = "FAIL " + "; ".join(obs.problems) if obs.problems else "ok"
        print(
            f"{obs.case.case_id:<14} rank={obs.rank!s:<4} layer={obs.layer!s:<28} "
            f"query={obs.case.query!r}  {status}"
        )


def print_summary(observations: Sequence[Observation]) -> None:
    print(
        f"\n{'content_type':<12} {'cases':>5} {'pass':>5} {'hit@1':>6} {'mrr':>6} {'neg pass':>9}"
    )
    for content_type in CONTENT_TYPES:
        of_type = [o for o in observations if o.case.content_type == content_type]
        if not of_type:
            continue
        positives = [o for o in of_type if not o.case.is_negative]
        negatives = [o for o in of_type if o.case.is_negative]
        passed = sum(not o.problems for o in of_type)
        hit_at_1 = sum(o.rank == 1 for o in positives) / len(positives) if positives else 0.0
        mrr = sum(1 / o.rank for o in positives if o.rank) / len(positives) if positives else 0.0
        negative_pass = sum(not o.problems for o in negatives)
        print(
            f"{content_type:<12} {len(of_type):>5} {passed:>5} {hit_at_1:>6.3f} {mrr:>6.3f} "
            f"{negative_pass:>4}/{len(negatives):<4}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[ROOT / "bench_fixtures"])
    parser.add_argument(
        "--all",
        action="store_true",
        dest="show_all",
        help="list passing cases too, not only failures",
    )
    args = parser.parse_args(argv)
    observations = calibrate(args.paths)
    print_cases(observations, args.show_all)
    print_summary(observations)
    return 1 if any(o.problems for o in observations) else 0


if __name__ == "__main__":
    sys.exit(main())
