"""`qualbench case`: check a new case, run it through the engine, append it to its entry.

The refusals are the mistakes that make a case lie: a needle that is not in its
entry (the case can never pass), a needle another entry shares (a wrong result
counts as relevant), and a negative query the corpus can answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_qualbench.authoring.fixture_lines import (
    AuthoringError,
    RawLine,
    encode_entry,
    locked,
    next_case_id,
    read_lines,
    write_lines,
)
from pytest_qualbench.authoring.lint import needle_weakness
from pytest_qualbench.authoring.probe import Probe, judged_as, probe
from pytest_qualbench.evaluation.relevance import DEFAULT_GAIN, DEFAULT_MIN_GRADE
from pytest_qualbench.evaluation.runner import EngineFactory
from pytest_qualbench.fixtures.schema import (
    ANY_LAYER,
    CHECKS,
    NEGATIVE_LAYER,
    Case,
    Entry,
    ExpectedFailure,
    FixtureSet,
    frozen_mapping,
)

# docs/writing-fixtures.md: 3 for a precise query; JSON key-path chunks rank close
# together, so 5 there.
DEFAULT_CEILINGS = {"json": 5}
DEFAULT_CEILING = 3
# The layer of a draft whose engine measured none (it labels no layers): `any`, the
# value that asks no layer, never a layer the engine was not seen to use.
UNMEASURED_LAYER = ANY_LAYER
TRIGRAMS_SHOWN = 5


@dataclass(frozen=True)
class CaseDraft:
    """The case as it will be written, the engine's answer to it, and what it was probed on."""

    case_id: str
    probe: Probe
    # The case's JSON object, and its entry's line as it was when probed.
    case_json: dict[str, Any]
    entry: dict[str, Any]
    # Case ids of the rest of the fixture set, which the written id must not take.
    taken: tuple[str, ...]
    warnings: tuple[str, ...]


def plan_case(
    target: Path,
    entry_id: str,
    query: str,
    needles: Sequence[str],
    fixture_set: FixtureSet,
    engine_factory: EngineFactory,
    *,
    ceiling: int | None = None,
    layer: str | None = None,
    negative: bool = False,
    relevant: Mapping[str, int] | None = None,
    expect_fail: str | None = None,
    limit: int = 10,
    min_grade: int = DEFAULT_MIN_GRADE,
    gain: str = DEFAULT_GAIN,
) -> CaseDraft:
    """Check and probe the case; AuthoringError (exit 2) says why it is refused.

    `fixture_set` holds the target file and every other file of the benchmark: the
    corpus the case will be judged over. `relevant` ({entry_id: grade}) judges the
    case by entry, with or without needles (docs/writing-fixtures.md). `expect_fail`,
    a reason, writes a case the engine fails as a known failure declaring the checks
    it fails now.
    """
    graded = dict(relevant or {})
    lines = read_lines(target)
    index = _entry_line(lines, entry_id, target)
    entry = _loaded_entry(fixture_set, entry_id, target, index)
    _check_arguments(query, needles, negative, ceiling, layer, graded)
    if expect_fail is not None and not expect_fail.strip():
        raise AuthoringError("--expect-fail needs a reason: what fails and why")
    corpus = fixture_set.entries(entry.content_type)
    if negative:
        _refuse_shared_trigrams(query, corpus)
    elif graded:
        _refuse_misgraded(graded, needles, entry, corpus, fixture_set.entries(), min_grade)
    else:
        _refuse_misplaced_needles(needles, entry, fixture_set.entries())
    raw = dict(lines[index].entry or {})
    taken = [str(case.get("case_id")) for case in raw.get("cases", []) if isinstance(case, dict)]
    taken += [case.case_id for case in fixture_set.cases()]
    case_id = next_case_id(entry.id, taken, negative=negative)
    draft = Case(
        case_id=case_id,
        query=query,
        needles=tuple(needles),
        expected_layer=NEGATIVE_LAYER if negative else layer or UNMEASURED_LAYER,
        expected_rank_ceiling=0
        if negative
        else ceiling
        if ceiling is not None
        else DEFAULT_CEILINGS.get(entry.content_type, DEFAULT_CEILING),
        entry_id=entry.id,
        content_type=entry.content_type,
        path=entry.path,
        line=entry.line,
        relevant=frozen_mapping(graded),
    )
    found = probe(draft, fixture_set, engine_factory, limit, min_grade=min_grade, gain=gain)
    if negative and found.results and expect_fail is None:
        raise AuthoringError(
            f"the negative query {query!r} returns {len(found.results)} result(s) from the "
            f"engine; a negative case passes only when nothing comes back"
        )
    if layer is None and not negative and found.record.layer is not None:
        # Record the layer the engine does use, measured, not a hoped-for one.
        found = judged_as(found, _with_layer(draft, found.record.layer))
    if expect_fail is not None:
        found = _as_known_failure(found, expect_fail)
    warnings = [
        f"needle {needle!r} {weakness}"
        for needle in needles
        if (weakness := needle_weakness(needle)) is not None
    ]
    return CaseDraft(case_id, found, _case_json(found.case), raw, tuple(taken), tuple(warnings))


def write_case(target: Path, draft: CaseDraft) -> str:
    """Append the drafted case to its entry in the file as it is now; the id it was written as.

    The file is read again under a lock (`locked`), so lines another command or an
    editor saved while the engine was probing are kept. The entry itself must be as
    it was probed, its cases aside: the case was checked against that haystack.
    """
    entry_id = draft.probe.case.entry_id
    with locked(target) as real:
        lines = read_lines(real)
        index = _entry_line(lines, entry_id, target)
        raw = dict(lines[index].entry or {})
        if _without_cases(raw) != _without_cases(draft.entry):
            raise AuthoringError(
                f"{target}:{index + 1}: entry {entry_id!r} changed while the engine was "
                "probing the case; nothing written: run the command again"
            )
        present = [str(case.get("case_id")) for case in _cases(raw)]
        case = dict(draft.case_json)
        if case["case_id"] in present:
            # Another command added a case to this entry meanwhile: take the next id.
            negative = draft.probe.case.is_negative
            case["case_id"] = next_case_id(entry_id, [*present, *draft.taken], negative=negative)
        raw["cases"] = [*raw.get("cases", []), case]
        new_lines = [line.data for line in lines]
        new_lines[index] = _encoded_like(raw, lines[index].data)
        write_lines(real, new_lines)
    return str(case["case_id"])


def _cases(raw: dict[str, Any]) -> list[dict[str, Any]]:
    cases = raw.get("cases", [])
    return [case for case in cases if isinstance(case, dict)] if isinstance(cases, list) else []


def _without_cases(raw: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in raw.items() if key != "cases"}


def _entry_line(lines: Sequence[RawLine], entry_id: str, target: Path) -> int:
    for index, line in enumerate(lines):
        if line.entry is not None and line.entry.get("id") == entry_id:
            return index
    ids = [str(line.entry.get("id")) for line in lines if line.entry is not None]
    raise AuthoringError(f"{target}: no entry {entry_id!r} ({listed(ids)})")


def listed(ids: Sequence[str], shown: int = 10) -> str:
    """Every entry id, in file order; past `shown` of them, their count and the first ones."""
    if not ids:
        return "the file has no entries"
    if len(ids) <= shown:
        return f"entries: {', '.join(ids)}"
    return f"{len(ids)} entries: {', '.join(ids[:shown])}, ... and {len(ids) - shown} more"


def _loaded_entry(fixture_set: FixtureSet, entry_id: str, target: Path, index: int) -> Entry:
    for entry in fixture_set.entries():
        if entry.id == entry_id:
            return entry
    raise AuthoringError(
        f"{target}:{index + 1}: entry {entry_id!r} does not load; `qualbench lint {target}` says why"
    )


def _check_arguments(
    query: str,
    needles: Sequence[str],
    negative: bool,
    ceiling: int | None,
    layer: str | None,
    relevant: Mapping[str, int],
) -> None:
    if not query.strip():
        raise AuthoringError("the query is empty")
    if negative and (needles or ceiling or layer or relevant):
        raise AuthoringError("a negative case has no --needle, --relevant, --ceiling or --layer")
    if not negative and not needles and not relevant:
        raise AuthoringError(
            "give at least one --needle or --relevant ENTRY=GRADE (or --negative for a "
            "negative case)"
        )
    for needle in needles:
        if not needle.strip():
            raise AuthoringError("a needle is empty")
        if "\n" in needle or "\r" in needle:
            raise AuthoringError(f"needle {needle!r} spans lines; chunkers may break between lines")


def _refuse_misplaced_needles(
    needles: Sequence[str], entry: Entry, entries: Sequence[Entry]
) -> None:
    for needle in needles:
        if needle not in entry.haystack:
            raise AuthoringError(
                f"needle {needle!r} is not in the haystack of entry {entry.id} "
                "(needles match verbatim, case-sensitively)"
            )
        others = [
            other.id for other in entries if other.id != entry.id and needle in other.haystack
        ]
        if others:
            shown = ", ".join(others[:5]) + (
                f" and {len(others) - 5} more" if len(others) > 5 else ""
            )
            raise AuthoringError(
                f"needle {needle!r} also occurs in {shown}: a result from there would count as "
                "relevant; choose text only this entry has"
            )


def _refuse_misgraded(
    relevant: Mapping[str, int],
    needles: Sequence[str],
    entry: Entry,
    corpus: Sequence[Entry],
    entries: Sequence[Entry],
    min_grade: int,
) -> None:
    """Every graded id an entry of the case's content type, one graded to count, and each
    needle in an entry that counts (a result needs both to be relevant)."""
    of_type = {other.id: other for other in corpus}
    for graded_id in relevant:
        if graded_id in of_type:
            continue
        elsewhere = next((other for other in entries if other.id == graded_id), None)
        if elsewhere is not None:
            raise AuthoringError(
                f"--relevant {graded_id}: entry {graded_id} is {elsewhere.content_type}, the "
                f"case's entry {entry.id} is {entry.content_type}; a case searches its own "
                "content type only"
            )
        raise AuthoringError(f"--relevant {graded_id}: no entry {graded_id!r} in the fixture set")
    counting = [graded_id for graded_id, grade in relevant.items() if grade >= min_grade]
    if not counting:
        raise AuthoringError(
            f"no --relevant entry has grade {min_grade} or more (qualbench_min_grade): the "
            "case would have nothing to find"
        )
    for needle in needles:
        if not any(needle in of_type[graded_id].haystack for graded_id in counting):
            raise AuthoringError(
                f"needle {needle!r} is in no entry graded {min_grade} or more "
                f"({', '.join(counting)}): with --relevant a result counts only when it "
                "comes from such an entry and holds a needle"
            )


def trigrams(text: str) -> set[str]:
    """Every 3-character window, lowercased, spaces included: what a trigram layer can match."""
    lowered = text.lower()
    return {lowered[start : start + 3] for start in range(len(lowered) - 2)}


def _refuse_shared_trigrams(query: str, corpus: Sequence[Entry]) -> None:
    wanted = trigrams(query)
    shared: dict[str, str] = {}
    for entry in corpus:
        for gram in sorted(wanted & trigrams(entry.haystack)):
            shared.setdefault(gram, entry.id)
    if shared:
        shown = ", ".join(
            f"{gram!r} ({where})" for gram, where in list(shared.items())[:TRIGRAMS_SHOWN]
        )
        raise AuthoringError(
            f"the negative query {query!r} shares {len(shared)} trigram(s) with the corpus: "
            f"{shown}; use made-up words with rare letter combinations"
        )


def _as_known_failure(found: Probe, reason: str) -> Probe:
    """The case with an xfail naming the checks the engine fails; refused if it passes."""
    if found.record.passed:
        raise AuthoringError(
            "the engine passes this case, so it is no known failure: drop --expect-fail"
        )
    failed = {failure.type for failure in found.record.failures}
    xfail = ExpectedFailure(" ".join(reason.split()), tuple(c for c in CHECKS if c in failed))
    return replace(found, case=replace(found.case, xfail=xfail))


def _with_layer(case: Case, layer: str) -> Case:
    return replace(case, expected_layer=layer)


def _case_json(case: Case) -> dict[str, Any]:
    asked: dict[str, Any] = {"case_id": case.case_id, "query": case.query}
    # A case judged by entry writes needles only when it has some (docs/writing-fixtures.md).
    if case.needles or not case.relevant:
        asked["needles"] = list(case.needles)
    if case.relevant:
        asked["relevant"] = dict(case.relevant)
    return {
        **asked,
        "expected_layer": case.expected_layer,
        "expected_rank_ceiling": case.expected_rank_ceiling,
        **(
            {}
            if case.xfail is None
            else {"xfail": {"reason": case.xfail.reason, "checks": list(case.xfail.checks)}}
        ),
    }


def _encoded_like(raw: dict[str, Any], original: bytes) -> bytes:
    """The changed entry in the original line's style: its ending, its escaping, its BOM."""
    body = original.rstrip(b"\r\n")
    ending = original[len(body) :]
    bom = b"\xef\xbb\xbf" if body.startswith(b"\xef\xbb\xbf") else b""
    return bom + encode_entry(raw, body.removeprefix(bom), ending)
