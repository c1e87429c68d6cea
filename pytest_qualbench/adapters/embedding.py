"""The embedding a vector engine uses, and the on-disk cache of a corpus's embeddings.

Every vector engine (`dense`, `hybrid`, `chroma`, `lancedb`, `faiss`) takes
`embed=module:function`: a callable from a list of texts to a float array of
shape (len(texts), d). Without it the engines use wordllama's bundled
`l2_supercat` weights (offline; the `dense` extra). Vectors are scaled to unit
length, so every engine's score is a cosine and `min_similarity` means the
same thing in all of them.

An embedder's identity names what decides its vectors: `module:function` and a
version, the function's `qualbench_identity` attribute when it has one (a model
name and revision, say), else the SHA-256 of its module's source file. The
corpus cache (`.qualbench/embeddings/` beside the index cache) is keyed by that
identity and every chunk text: a second run with the same embedder and chunks
loads the vectors instead of calling the embedder. The files are the index
cache's format (`.npy` arrays and a JSON document behind a SHA-256 header),
so nothing in them can run code.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import pkgutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_qualbench.engine.types import IndexState
from pytest_qualbench.index_cache import IndexCache, texts_key

# Beside the index cache (.qualbench/index-cache); the plugin passes it to the engines.
EMBEDDINGS_DIR = ".qualbench/embeddings"
WORDLLAMA_MODEL = "l2_supercat"
WORDLLAMA_DIMENSIONS = 256
# The corpus is embedded this many texts per call, so a model's batch stays bounded.
BATCH_TEXTS = 512

EmbedFunction = Callable[[list[str]], Any]


class EmbedderError(ValueError):
    """An `embed=` that cannot be loaded, or an embedder that returned no valid vectors."""


@dataclass(frozen=True)
class Embedder:
    """A function from texts to vectors, and the identity its cached vectors are keyed by."""

    name: str
    identity: str
    function: EmbedFunction

    def vectors(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit-length float32 rows, one per text; EmbedderError on a wrong shape or value."""
        batches = [
            self._checked(list(texts[start : start + BATCH_TEXTS]))
            for start in range(0, len(texts), BATCH_TEXTS)
        ]
        if not batches:
            return np.zeros((0, 0), dtype=np.float32)
        if len({batch.shape[1] for batch in batches}) > 1:
            raise EmbedderError(f"embed {self.name}: batches returned different dimensions")
        return normalized(np.concatenate(batches))

    def _checked(self, texts: list[str]) -> npt.NDArray[np.float32]:
        try:
            vectors = np.asarray(self.function(texts), dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbedderError(f"embed {self.name}: not an array of numbers: {exc}") from exc
        if vectors.ndim != 2 or vectors.shape[0] != len(texts) or vectors.shape[1] == 0:
            raise EmbedderError(
                f"embed {self.name}: returned shape {vectors.shape} for {len(texts)} texts;"
                f" expected ({len(texts)}, dimensions)"
            )
        if not np.isfinite(vectors).all():
            raise EmbedderError(f"embed {self.name}: returned NaN or infinite values")
        return vectors

    @property
    def config(self) -> dict[str, object]:
        return {"embed": self.name, "identity": self.identity, "vectors": "L2-normalised"}


def normalized(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit L2 norm (zero rows stay zero), so a dot product is the cosine."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: npt.NDArray[np.float32] = np.divide(
        vectors, norms, out=np.zeros_like(vectors), where=norms > 0
    )
    return unit


@functools.cache
def bundled_wordllama() -> Any:
    """wordllama's model from the files inside its installed package, loaded once.

    `WordLlama.load()` with its defaults looks for the tokenizer in another
    folder and falls back to downloading it; loading from the package's own
    folder with downloads disabled reads only the bundled files.
    """
    try:
        import wordllama
    except ImportError as exc:
        raise EmbedderError(
            "the default embedding is wordllama's: pip install 'pytest-qualbench[dense]',"
            f" or give embed=module:function ({exc})"
        ) from exc
    package_folder = Path(wordllama.__file__).parent
    return wordllama.WordLlama.load(
        config=WORDLLAMA_MODEL,
        cache_dir=package_folder,
        dim=WORDLLAMA_DIMENSIONS,
        disable_download=True,
    )


def wordllama_vectors(texts: list[str]) -> npt.NDArray[np.float32]:
    """wordllama's embeddings of the texts (the default embedder's function)."""
    return np.asarray(bundled_wordllama().embed(texts), dtype=np.float32)


def default_embedder() -> Embedder:
    """wordllama's bundled weights; the model is loaded now, not inside a timed build."""
    bundled_wordllama()
    identity = f"wordllama {version('wordllama')} {WORDLLAMA_MODEL} {WORDLLAMA_DIMENSIONS}d"
    return Embedder(
        f"wordllama {WORDLLAMA_MODEL} (bundled in the wheel)", identity, wordllama_vectors
    )


def resolve_embedder(spec: str) -> Embedder:
    """The embedder `embed=` names: `module:function`, or the default when empty."""
    if not spec:
        return default_embedder()
    module_name, separator, attribute = spec.partition(":")
    if not separator or not module_name or not attribute:
        raise EmbedderError(f"embed {spec!r}: expected module:function")
    try:
        function = pkgutil.resolve_name(spec)
    except (ImportError, AttributeError, ValueError) as exc:
        raise EmbedderError(f"embed {spec!r}: cannot load it: {exc}") from exc
    if not callable(function):
        raise EmbedderError(f"embed {spec!r}: not callable")
    return Embedder(spec, embedder_identity(spec, function), function)


def embedder_identity(spec: str, function: object) -> str:
    """`module:function` and its version: `qualbench_identity` if set, else its module's SHA-256."""
    declared = getattr(function, "qualbench_identity", None)
    if isinstance(declared, str) and declared:
        return f"{spec} {declared}"
    module = sys.modules.get(spec.partition(":")[0]) or importlib.import_module(
        spec.partition(":")[0]
    )
    source = getattr(module, "__file__", None)
    if source is None:
        return f"{spec} (no source file)"
    return f"{spec} sha256:{hashlib.sha256(Path(source).read_bytes()).hexdigest()}"


@dataclass(frozen=True)
class EmbeddingCache:
    """A corpus's vectors on disk, one file per (embedder identity, chunk texts)."""

    directory: Path

    def vectors(self, embedder: Embedder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The texts' vectors from the cache when stored for this embedder, else embedded and stored.

        A damaged, planted or stale file is never used: its header's key or
        checksum does not match, and the texts are embedded afresh.
        """
        key = texts_key(f"embeddings\0{embedder.identity}", texts)
        store = IndexCache(self.directory)
        state, _ = store.load_state(key, key)
        if state is not None:
            cached = state.arrays.get("vectors")
            if (
                isinstance(cached, np.ndarray)
                and cached.dtype == np.float32
                and cached.ndim == 2
                and cached.shape[0] == len(texts)
                and np.isfinite(cached).all()
            ):
                return cached
        vectors = embedder.vectors(texts)
        document = {"embedder": embedder.identity, "texts": len(texts)}
        # A read-only checkout costs the next run the embedding, not this run its result.
        with contextlib.suppress(OSError):
            store.store_state(key, key, IndexState(arrays={"vectors": vectors}, document=document))
        return vectors


def corpus_vectors(
    embedder: Embedder, texts: Sequence[str], cache_directory: str
) -> npt.NDArray[np.float32]:
    """The corpus's unit vectors, through the cache when a directory is given."""
    if not cache_directory:
        return embedder.vectors(texts)
    return EmbeddingCache(Path(cache_directory)).vectors(embedder, texts)
