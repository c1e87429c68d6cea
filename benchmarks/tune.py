"""Choosing the built-in engine's ranking defaults by leave-one-collection-out.

    python -m benchmarks.tune                           # LOO_GRID, its folds and held-out figures
    python -m benchmarks.tune --try "k1=1.5 b=0.6"      # the defaults and each setting given
    python -m benchmarks.tune --lever "b=0.6"           # LOO_GRID, and LOO_GRID with b=0.6 too
    python -m benchmarks.tune --fixtures ...            # and each setting on bench_fixtures/

Each collection of `<repo>/../shared/data` (or $QUALBENCH_SHARED_DATA; read in
place) is imported once with `qualbench import beir` into a temporary folder and
chunked once; the peers (bm25s, tantivy) rank those chunks once; then every
setting (keyword arguments of `Engine`) indexes the same chunks and is judged
with the report's own metric code, case by case, as `benchmarks/quality.py`
does for the quality benchmark. The folds are `benchmarks.loo.leave_one_out`.

With `--lever`, each setting of LOO_GRID is also run with the lever's options set
(`benchmarks.loo.crossed`; repeatable, every lever joins one candidate set), and the
folds over the grid alone are compared with the folds over the grid and the levers:
a lever ships only when it lowers no fold (`benchmarks.loo.lowered_folds`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.loo import (
    Fold,
    Setting,
    crossed,
    geometric_mean,
    leave_one_out,
    lowered_folds,
    setting_key,
)
from benchmarks.quality import (
    COLLECTIONS,
    LOO_GRID,
    PEERS,
    SHARED_DATA,
    engine_quality,
    load_collection,
    missing_collections,
    peer_quality,
)

BENCH_FIXTURES = Path(__file__).resolve().parents[1] / "bench_fixtures"


@dataclass(frozen=True)
class FixtureFigures:
    """A setting on the shipped benchmark: the figures issue 24 keeps as constraints."""

    mrr: float
    layer_accuracy: float
    typo_found: int
    typo_cases: int
    negative_pass: float
    failing: tuple[str, ...]


def fixture_figures(setting: Setting, root: Path = BENCH_FIXTURES) -> FixtureFigures:
    """Every shipped case run and judged in-process, as `pytest --qualbench` runs it."""
    from pytest_qualbench.engine.builtin import Engine
    from pytest_qualbench.evaluation.metrics import mean_metrics
    from pytest_qualbench.evaluation.runner import BenchRun
    from pytest_qualbench.fixtures import load_fixture_set
    from pytest_qualbench.fixtures.schema import FUZZY_PREFIX

    fixture_set = load_fixture_set(sorted(root.glob("*.jsonl")), root)
    run = BenchRun(fixture_set, lambda _content_type: Engine(**setting), limit=10)
    records = [run.run_case(case) for case in fixture_set.cases()]
    run.close()
    positives = [record for record in records if not record.negative]
    negatives = [record for record in records if record.negative]
    typos = [r for r in positives if r.expected_layer.startswith(FUZZY_PREFIX)]
    means = mean_metrics([r.metrics for r in positives], ("mrr", "layer_accuracy"))
    return FixtureFigures(
        mrr=means["mrr"] or 0.0,
        layer_accuracy=means["layer_accuracy"] or 0.0,
        typo_found=sum(record.rank is not None for record in typos),
        typo_cases=len(typos),
        negative_pass=sum(r.result_count == 0 for r in negatives) / max(1, len(negatives)),
        failing=tuple(sorted(record.case_id for record in records if not record.passed)),
    )


def parse_value(text: str) -> Any:
    """`NAME=VALUE`'s value: an int, a float, True/False, else the text."""
    if text in ("True", "False"):
        return text == "True"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            continue
    return text


def parse_setting(text: str) -> dict[str, Any]:
    """`'k1=1.5 b=0.6'` as Engine keyword arguments."""
    pairs = (part.partition("=") for part in text.split())
    return {name: parse_value(value) for name, _, value in pairs}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    # A lever is judged against the whole grid, a tried setting against the defaults.
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument(
        "--try",
        dest="tries",
        action="append",
        default=[],
        help="'NAME=VALUE ...': one setting (repeatable); without any, LOO_GRID",
    )
    chosen.add_argument(
        "--lever",
        dest="levers",
        action="append",
        default=[],
        help="'NAME=VALUE ...': LOO_GRID with these options too (repeatable), folds compared",
    )
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument(
        "--fixtures", action="store_true", help="also run bench_fixtures/ for every setting"
    )
    arguments = parser.parse_args(argv)
    missing = missing_collections(arguments.data)
    if missing:
        print(f"{', '.join(missing)} not found under {arguments.data}", file=sys.stderr)
        return 2
    levers = [parse_setting(text) for text in arguments.levers]
    settings: dict[str, Setting] = {"defaults": {}}
    tried: Sequence[Setting] = [parse_setting(text) for text in arguments.tries] or LOO_GRID
    for setting in [*tried, *(s for lever in levers for s in crossed(LOO_GRID, lever))]:
        settings.setdefault(setting_key(setting), setting)
    with tempfile.TemporaryDirectory(prefix="qualbench-tune-") as workdir:
        started = time.perf_counter()
        collections = [load_collection(name, Path(workdir), arguments.data) for name in COLLECTIONS]
        best_peer = {
            c.name: max(peer_quality(c, peer)["ndcg@10"] for peer in PEERS) for c in collections
        }
        print(f"imported and ranked by the peers in {time.perf_counter() - started:.1f} s")
        print("best peer nDCG@10: " + "  ".join(f"{n} {v:.3f}" for n, v in best_peer.items()))
        ratios: dict[str, dict[str, float]] = {}
        for key, setting in settings.items():
            started = time.perf_counter()
            cells = []
            ratios[key] = {}
            for collection in collections:
                quality = engine_quality(collection, setting)
                ndcg = quality.metrics["ndcg@10"]
                ratios[key][collection.name] = ndcg / best_peer[collection.name]
                cells.append(
                    f"{collection.name} {ndcg:.3f} ({ratios[key][collection.name]:.3f},"
                    f" {quality.corrected} corrected)"
                )
            if arguments.fixtures:
                shipped = fixture_figures(setting)
                cells.append(
                    f"fixtures mrr {shipped.mrr:.3f} layer {shipped.layer_accuracy:.3f}"
                    f" typo {shipped.typo_found}/{shipped.typo_cases}"
                    f" negatives {shipped.negative_pass:.3f}"
                    f" failing {' '.join(shipped.failing)}"
                )
            print(
                f"{key:<60} gm {geometric_mean(ratios[key].values()):.4f}  {'  '.join(cells)}"
                f"  [{time.perf_counter() - started:.1f} s]",
                flush=True,
            )
        if not levers:
            print_folds(leave_one_out(ratios, COLLECTIONS))
            return 0
        grid_keys = {setting_key(setting) for setting in LOO_GRID}
        print("the grid alone:")
        before = leave_one_out(
            {key: ratios[key] for key in settings if key in grid_keys}, COLLECTIONS
        )
        print_folds(before)
        print("the grid and the levers:")
        after = leave_one_out(ratios, COLLECTIONS)
        print_folds(after)
        lowered = lowered_folds(before, after)
        print(f"lowered folds: {', '.join(lowered)}" if lowered else "no fold lowered")
    return 0


def print_folds(folds: Sequence[Fold]) -> None:
    for fold in folds:
        print(
            f"held out {fold.held_out:<5} chose {fold.setting_key:<50}"
            f" training gm {fold.training_mean:.4f}  held-out ratio {fold.held_out_ratio:.4f}"
        )
    held_out_mean = geometric_mean(fold.held_out_ratio for fold in folds)
    lowest = min(folds, key=lambda fold: fold.held_out_ratio)
    print(
        f"geometric mean of the held-out ratios: {held_out_mean:.4f};"
        f" lowest fold {lowest.held_out} {lowest.held_out_ratio:.4f}"
    )


if __name__ == "__main__":
    sys.exit(main())
