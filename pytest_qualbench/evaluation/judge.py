"""Judging one case: its ranked results against its needles, ceiling and layer.

The judge is pure: the plugin hands it the case, what the engine returned and
how many chunks of the corpus are relevant, and gets back its `CaseRecord`
(`evaluation.case_record`).
"""

from __future__ import annotations

import argparse
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from pytest_qualbench.engine.types import Result
from pytest_qualbench.evaluation.case_record import CaseRecord, Failure, ShownResult
from pytest_qualbench.evaluation.metrics import (
    GAINS,
    graded_case_metrics,
    needle_matches,
    negative_case_metrics,
    positive_case_metrics,
)
from pytest_qualbench.evaluation.relevance import (
    DEFAULT_GAIN,
    DEFAULT_MIN_GRADE,
    AttributionError,
    EntryAttribution,
    entry_ranking,
)
from pytest_qualbench.fixtures.schema import CHECKS, NO_LAYER_LABELS, Case

TOP_RESULTS_SHOWN = 5
SNIPPET_CHARS = 160


def parse_checks(text: str) -> frozenset[str]:
    """argparse `type=`: a comma-separated subset of the per-case checks."""
    names = frozenset(name.strip() for name in text.split(",") if name.strip())
    unknown = sorted(names - set(CHECKS))
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown check(s) {', '.join(unknown)}; choose from {', '.join(CHECKS)}"
        )
    return names


def judge(
    case: Case,
    results: Sequence[Result],
    *,
    relevant_total: int | None,
    corrected_query: str | None = None,
    latency_ms: float = 0.0,
    checks: Collection[str] = CHECKS,
    layer_not_checked: str | None = None,
    attribution: EntryAttribution | None = None,
    min_grade: int = DEFAULT_MIN_GRADE,
    gain: str = DEFAULT_GAIN,
) -> CaseRecord:
    """Score and check one case. `relevant_total` None means: count the relevant results returned.

    `layer_not_checked`, the reason the configured engine cannot be held to the
    expected layer (one it does not report, or `any`), leaves the case out of the
    layer check and `layer_accuracy`; so do results that carry no layer labels. A
    chunk returned twice counts once, at its first rank (`distinct_results`). A case
    with `relevant` is judged by entry (`attribution` names each result's entry).
    """
    returned = len(results)
    results = distinct_results(results)
    if case.relevant:
        return _judge_by_entry(
            case,
            results,
            attribution,
            corrected_query=corrected_query,
            latency_ms=latency_ms,
            checks=checks,
            layer_not_checked=layer_not_checked,
            min_grade=min_grade,
            gain=gain,
            duplicate_results=returned - len(results),
        )
    matches = needle_matches([result.text for result in results], case.needles)
    relevant = matches.relevance
    first_index = relevant.index(True) if True in relevant else None
    rank = None if first_index is None else first_index + 1
    layer = None if first_index is None else results[first_index].layer
    layers_reported = all(result.layer is not None for result in results) if results else None
    found = matches.found()
    layer_not_checked = _layer_not_checked(case, layer_not_checked, layers_reported)
    layer_checked = layer_not_checked is None

    if case.is_negative:
        metrics = negative_case_metrics(len(results))
    else:
        metrics = positive_case_metrics(
            matches,
            relevant_total=sum(relevant) if relevant_total is None else relevant_total,
            rank_ceiling=case.expected_rank_ceiling,
            first_relevant_layer=layer,
            expected_layer=case.expected_layer,
            # Nothing returned: scored 0 here; `settle_layers` leaves it out when
            # no case of the run shows the engine labelling layers.
            layers_reported=layer_checked,
        )
    failures = tuple(
        failure
        for failure in _check(case, len(results), rank, layer, found, layer_checked)
        if failure.type in checks
    )
    return _case_record(
        case,
        results,
        corrected_query=corrected_query,
        rank=rank,
        layer=layer,
        needles_found=found,
        metrics=metrics,
        failures=failures,
        latency_ms=latency_ms,
        layers_reported=layers_reported,
        duplicate_results=returned - len(results),
        layer_not_checked=layer_not_checked,
    )


def _case_record(
    case: Case,
    results: Sequence[Result],
    *,
    corrected_query: str | None,
    rank: int | None,
    layer: str | None,
    needles_found: tuple[str, ...],
    metrics: Mapping[str, float | None],
    failures: tuple[Failure, ...],
    latency_ms: float,
    layers_reported: bool | None,
    duplicate_results: int,
    layer_not_checked: str | None,
) -> CaseRecord:
    """The record of a judged case, whether judged by needle or by entry."""
    # Only a failure shows its top results (message and report); snippets of a
    # passing case would be built and thrown away.
    shown = results[:TOP_RESULTS_SHOWN] if failures else ()
    return CaseRecord(
        case_id=case.case_id,
        entry_id=case.entry_id,
        content_type=case.content_type,
        query=case.query,
        corrected_query=corrected_query,
        expected_layer=case.expected_layer,
        expected_rank_ceiling=case.expected_rank_ceiling,
        negative=case.is_negative,
        needles=case.needles,
        result_count=len(results),
        rank=rank,
        layer=layer,
        needles_found=needles_found,
        metrics=metrics,
        failures=failures,
        top_results=tuple(
            _shown(index + 1, result, case.needles) for index, result in enumerate(shown)
        ),
        latency_ms=latency_ms,
        layers_reported=layers_reported,
        duplicate_results=duplicate_results,
        layer_not_checked=layer_not_checked,
    )


def distinct_results(results: Sequence[Result]) -> Sequence[Result]:
    """Each chunk once, at its first (best) rank, as trec_eval and ir_measures count a document.

    A chunk is its (source, position, text): a custom engine that sets only
    `text` has its results told apart by text.
    """
    seen: set[tuple[str, int, str]] = set()
    kept: list[Result] = []
    for result in results:
        identity = (result.source, result.position, result.text)
        if identity not in seen:
            seen.add(identity)
            kept.append(result)
    return results if len(kept) == len(results) else kept


def settle_layers(records: Sequence[CaseRecord]) -> list[CaseRecord]:
    """The run's records, `layer_accuracy` left out where no case can show layers.

    A case that returned nothing, or errored, cannot tell whether the engine
    labels layers. It scores 0 when another case of the run shows labels, and
    is left out of `layer_accuracy` (null) when none does: an engine that labels
    no layers is never held to one because a case errored.
    """
    if any(record.layers_reported for record in records):
        return list(records)
    return [
        replace(record, metrics={**record.metrics, "layer_accuracy": None})
        if record.layers_reported is None and "layer_accuracy" in record.metrics
        else record
        for record in records
    ]


def _judge_by_entry(
    case: Case,
    results: Sequence[Result],
    attribution: EntryAttribution | None,
    *,
    corrected_query: str | None,
    latency_ms: float,
    checks: Collection[str],
    layer_not_checked: str | None,
    min_grade: int,
    gain: str,
    duplicate_results: int,
) -> CaseRecord:
    """A case judged by `relevant`: each entry once, at its best rank (docs/metrics.md)."""
    if attribution is None and results:
        return error_record(case, "no entries to attribute results to", latency_ms=latency_ms)
    try:
        ranking = (
            entry_ranking(results, case.relevant, attribution, case.needles)
            if attribution is not None
            else []
        )
    except AttributionError as exc:
        return error_record(case, str(exc), latency_ms=latency_ms)
    relevant_ranks = [i for i, ranked in enumerate(ranking) if ranked.grade >= min_grade]
    first = relevant_ranks[0] if relevant_ranks else None
    rank = None if first is None else first + 1
    layer = None if first is None else results[ranking[first].first_result].layer
    layers_reported = all(result.layer is not None for result in results) if results else None
    layer_not_checked = _layer_not_checked(case, layer_not_checked, layers_reported)
    checked = layer_not_checked is None
    metrics = graded_case_metrics(
        [ranked.grade for ranked in ranking],
        list(case.relevant.values()),
        min_grade=min_grade,
        gain=GAINS[gain],
        rank_ceiling=case.expected_rank_ceiling,
        first_relevant_layer=layer,
        expected_layer=case.expected_layer,
        layers_reported=checked,
    )
    found = tuple(ranking[index].entry_id for index in relevant_ranks)
    wanted = {e: g for e, g in case.relevant.items() if g >= min_grade}
    failures = [
        failure
        for failure in _check(case, len(results), rank, layer, (), checked)
        if failure.type != "needles"
    ]
    if len(found) < len(wanted):
        failures.insert(
            0,
            Failure(case.case_id, "needles", wanted, {e: case.relevant[e] for e in found}),
        )
    record = _case_record(
        case,
        results,
        corrected_query=corrected_query,
        rank=rank,
        layer=layer,
        needles_found=needle_matches([r.text for r in results], case.needles).found(),
        metrics=metrics,
        failures=tuple(failure for failure in failures if failure.type in checks),
        latency_ms=latency_ms,
        layers_reported=layers_reported,
        duplicate_results=duplicate_results,
        layer_not_checked=layer_not_checked,
    )
    return replace(record, relevant=dict(case.relevant), relevant_found=found, min_grade=min_grade)


def _layer_not_checked(
    case: Case, engine_reason: str | None, layers_reported: bool | None
) -> str | None:
    """Why the case's layer is not checked: the engine's reason, or results with no labels.

    Nothing returned (`layers_reported` None) cannot tell: the case keeps its layer
    failure. A negative case has no layer to check.
    """
    if case.is_negative:
        return None
    if engine_reason is None and layers_reported is False:
        return NO_LAYER_LABELS
    return engine_reason


def error_record(case: Case, error: BaseException | str, *, latency_ms: float = 0.0) -> CaseRecord:
    """The record of a case whose engine raised (or whose worker died): every metric scores 0.

    It is the record of an empty result, except that a negative case fails too
    and the one failure is the error.
    """
    message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    empty = judge(case, (), relevant_total=0, latency_ms=latency_ms)
    metrics = negative_case_metrics(1) if case.is_negative else empty.metrics
    return replace(
        empty, metrics=metrics, failures=(Failure(case.case_id, "error", None, message),)
    )


def _check(
    case: Case,
    result_count: int,
    rank: int | None,
    layer: str | None,
    found: tuple[str, ...],
    layer_checked: bool,
) -> list[Failure]:
    if case.is_negative:
        if result_count:
            return [Failure(case.case_id, "negative", 0, result_count)]
        return []
    failures = []
    if len(found) < len(set(case.needles)):
        failures.append(Failure(case.case_id, "needles", list(case.needles), list(found)))
    ceiling = case.expected_rank_ceiling
    if ceiling and (rank is None or rank > ceiling):
        failures.append(Failure(case.case_id, "rank", ceiling, rank))
    # An engine that labels no layers, or not this one, cannot be held to it; the summary says so.
    if layer_checked and layer != case.expected_layer:
        failures.append(Failure(case.case_id, "layer", case.expected_layer, layer))
    return failures


def _first_needle(text: str, needles: Sequence[str]) -> str | None:
    for needle in needles:
        if needle in text:
            return needle
    return None


def _shown(rank: int, result: Result, needles: Sequence[str]) -> ShownResult:
    needle = _first_needle(result.text, needles)
    return ShownResult(
        rank=rank,
        layer=result.layer,
        title=result.title,
        snippet=snippet(result.text, needle),
        needle=needle,
    )


def snippet(text: str, needle: str | None, width: int = SNIPPET_CHARS) -> str:
    """A one-line excerpt of `text`, centred on `needle` when it occurs."""
    flat = " ".join(text.split())
    if needle is None or needle not in flat:
        return flat[:width] + ("…" if len(flat) > width else "")
    start = max(0, flat.index(needle) - (width - len(needle)) // 2)
    excerpt = flat[start : start + max(width, len(needle))]
    return ("…" if start else "") + excerpt + ("…" if start + len(excerpt) < len(flat) else "")
