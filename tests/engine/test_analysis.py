"""Tokens, stopwords, stems and trigrams; and what importing the package costs."""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from pytest_qualbench.engine.analysis import (
    fold,
    identifier_parts,
    index_terms,
    query_terms,
    query_words,
    raw_words,
    tokenize,
)


def test_identifiers_yield_their_parts_after_themselves() -> None:
    assert tokenize("maxIdleConns p99_latency_ms HTTPServer") == [
        "maxidleconns",
        "max",
        "idle",
        "conns",
        "p99_latency_ms",
        "p99",
        "latency",
        "ms",
        "httpserver",
        "http",
        "server",
    ]


def test_identifier_parts_of_a_plain_word_are_empty() -> None:
    assert identifier_parts("pool") == []


def test_accented_words_are_folded_whole() -> None:
    assert tokenize("Ĉu RÉSUMÉ naïve Straße") == ["ĉu", "résumé", "naïve", "strasse"]


def test_cjk_characters_are_single_tokens() -> None:
    assert tokenize("検索エンジン設定 v2") == ["検", "索", "エ", "ン", "ジ", "ン", "設", "定", "v2"]


def test_index_terms_drop_stopwords_and_stem() -> None:
    assert index_terms("The connections are pooling") == ["connect", "pool"]


def test_query_terms_keep_stopwords_only_when_every_term_is_one() -> None:
    assert query_terms("the pooling") == ["pool"]
    assert query_terms("to be or not to be") == ["to", "be", "or", "not", "to", "be"]


def test_query_words_are_distinct_folded_words() -> None:
    assert query_words("Pool pool, p99_latency_ms!") == ["pool", "p99_latency_ms"]


def test_fold_normalizes_compatibility_forms() -> None:
    assert fold("\ufb01le \uff26\uff55\uff4c\uff4c") == "file full"


def test_importing_the_package_loads_no_heavy_library() -> None:
    code = (
        "import sys, pytest_qualbench.engine, pytest_qualbench.engine.chunking;"
        "print(sorted(m for m in ('nltk', 'numpy', 'rapidfuzz') if m in sys.modules))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert shown.strip() == "[]"


def test_stem_shortcut_for_words_not_ending_in_a_letter_matches_nltk() -> None:
    """stem() skips nltk for words no Porter rule can touch; the answer must be nltk's."""
    from nltk.stem.porter import PorterStemmer

    from pytest_qualbench.engine.analysis import stem

    nltk_stemmer = PorterStemmer()
    words = [
        "p99", "http2", "v1_2", "ids_", "2024", "x86_64", "sha256", "Error42", "café",
        "naïve", "größe", "日本", "ñ", "a1", "running2", "PROCESSES3", "tries", "running",
    ]  # fmt: skip
    for word in words:
        assert stem(word) == nltk_stemmer.stem(word), word


@given(st.text(st.characters(max_codepoint=127)))
def test_ascii_words_are_the_regex_words(text: str) -> None:
    assert raw_words(text) == re.findall(r"\w+", text)


@given(st.text("ab_1 .\x1c\x85\u00e9\u0301\ufb01\u3000x"))
def test_other_texts_words_are_the_regex_words_of_their_nfkc_form(text: str) -> None:
    assert raw_words(text) == re.findall(r"\w+", unicodedata.normalize("NFKC", text))
