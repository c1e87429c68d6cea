/* Walks of postings in compiled code: BM25 scores of candidate docs, intersections,
 * the best docs of any term, and the chunks holding a query's words.
 *
 * Key k's ids in segment s are local[bounds[k * S + s] : bounds[k * S + s + 1]] plus
 * s << 16, ascending within a run; a key held by many docs also has a bit set of them
 * (`dense_sets`), by which its rows are found without a search. The arrays come from
 * numpy through the buffer protocol, so building needs only a C compiler and Python's
 * headers.
 *
 * Arrays read from the index cache are checked when it loads (SegmentedIds.stored), but
 * every index here is checked again against the buffers' lengths: a damaged array makes
 * a ValueError, never a read outside the buffer.
 *
 * Scores must be the bits numpy computed before this module existed: each term's share
 * is tf * (k1 + 1) / (norm + tf) * idf * query_weight, evaluated in that order in
 * float64 and added to the candidate's total term by term. Compiled with
 * -ffp-contract=off (MSVC: /fp:precise), so no multiply and add are fused.
 *
 * `reference_kernel.py` is this module in Python and numpy, with the same functions and
 * results; tests/engine/test_kernel_differential.py calls both on generated input. Every
 * exported function checks its arguments and raises TypeError or ValueError: a caller's
 * mistake must never read outside a buffer, since a crash here ends the user's whole
 * pytest session. Only the stable ABI of Python 3.11 is used (Py_LIMITED_API), so one
 * build serves every later Python.
 *
 * Compiler builtins (prefetch, count of trailing zeros, branch hints) have portable
 * fallbacks, taken by MSVC and by any build defining QUALBENCH_PORTABLE_C (the
 * sanitizer stage of .ci/run builds that way too, so the fallbacks are tested here).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#if (defined(__GNUC__) || defined(__clang__)) && !defined(QUALBENCH_PORTABLE_C)
#define PREFETCH(address) __builtin_prefetch(address)
#define UNLIKELY(condition) __builtin_expect(!!(condition), 0)
#define HAS_BUILTINS 1
#else
#define PREFETCH(address) ((void)(address))
#define UNLIKELY(condition) (condition)
#define HAS_BUILTINS 0
#endif

/* Bounds that keep every id and rank computation far from int64 overflow: a segment
 * count (ids stay below 2**47) and the RRF constant. */
#define MOST_SEGMENTS ((Py_ssize_t)1 << 31)
#define MOST_RRF_K ((Py_ssize_t)1 << 40)

#define SEGMENT_BITS 16
#define SEGMENT_DOCS ((int64_t)1 << SEGMENT_BITS)

/* A dense key's set (`dense_sets`): bit i of word w, doc (w << 6) + i, is set when the
 * key's posting holds the doc, and rank[w] counts the posting's rows before word w
 * within its segment (a segment is SEGMENT_WORDS words). dense_at[key] is where the
 * key's words start, -1 for a key without a set. */
#define SEGMENT_WORDS (SEGMENT_DOCS >> 6)

typedef struct {
    Py_buffer local, bounds, dense_at, dense_bits, dense_ranks;
    const uint16_t *ids;
    const int64_t *runs;
    const int64_t *set_at;
    const uint64_t *bits;
    const uint16_t *ranks;
    Py_ssize_t id_count, run_count, segments, word_count;
} Postings;

/* Whether a buffer's struct format is one item of `format`: int64 is 'l' or 'q' by
 * platform, so integer formats are compared by kind and size. */
static int format_is(const Py_buffer *view, char format) {
    const char *given = view->format;
    if (given[0] == '@' || given[0] == '=') given++;
    if (given[0] == '\0' || given[1] != '\0') return 0;
    switch (format) {
    case 'q': return (given[0] == 'q' || given[0] == 'l') && view->itemsize == 8;
    case 'H': return given[0] == 'H' && view->itemsize == 2;
    case 'Q': return (given[0] == 'Q' || given[0] == 'L') && view->itemsize == 8;
    case 'd': return given[0] == 'd' && view->itemsize == 8;
    case 'i': return (given[0] == 'i' || (given[0] == 'l' && sizeof(long) == 4)) && view->itemsize == 4;
    case '?': return given[0] == '?' && view->itemsize == 1;
    default: return 0;
    }
}

static int buffer_of(PyObject *object, Py_buffer *view, char format, int writable,
                     const char *name) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object, view, flags) < 0) return -1;
    if (view->ndim != 1 || !format_is(view, format)) {
        PyErr_Format(PyExc_ValueError, "%s: expected a 1-d array of format '%c', got '%s'",
                     name, format, view->format);
        PyBuffer_Release(view);
        return -1;
    }
    /* numpy maps an array at any offset of a file: a misaligned one is refused, not
     * read with loads its type does not allow. */
    if ((uintptr_t)view->buf % (uintptr_t)view->itemsize != 0) {
        PyErr_Format(PyExc_ValueError, "%s: the array is not aligned", name);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static void postings_release(Postings *postings) {
    PyBuffer_Release(&postings->local);
    PyBuffer_Release(&postings->bounds);
    PyBuffer_Release(&postings->dense_at);
    PyBuffer_Release(&postings->dense_bits);
    PyBuffer_Release(&postings->dense_ranks);
}

/* The postings of these arrays, or -1 with ValueError (nothing held then). */
static int postings_of(PyObject *local, PyObject *bounds, Py_ssize_t segments,
                       PyObject *dense_at, PyObject *dense_bits, PyObject *dense_ranks,
                       Postings *postings) {
    memset(postings, 0, sizeof *postings);
    if (buffer_of(local, &postings->local, 'H', 0, "local ids") < 0 ||
        buffer_of(bounds, &postings->bounds, 'q', 0, "id bounds") < 0 ||
        buffer_of(dense_at, &postings->dense_at, 'q', 0, "dense set starts") < 0 ||
        buffer_of(dense_bits, &postings->dense_bits, 'Q', 0, "dense set bits") < 0 ||
        buffer_of(dense_ranks, &postings->dense_ranks, 'H', 0, "dense set ranks") < 0) {
        postings_release(postings);
        return -1;
    }
    postings->ids = postings->local.buf;
    postings->runs = postings->bounds.buf;
    postings->set_at = postings->dense_at.buf;
    postings->bits = postings->dense_bits.buf;
    postings->ranks = postings->dense_ranks.buf;
    postings->id_count = postings->local.shape[0];
    postings->run_count = postings->bounds.shape[0];
    postings->segments = segments;
    postings->word_count = postings->dense_bits.shape[0];
    if (segments < 1 || segments > MOST_SEGMENTS || postings->run_count < 1 ||
        (postings->run_count - 1) % segments != 0) {
        PyErr_SetString(PyExc_ValueError, "id bounds do not match the segment count");
        postings_release(postings);
        return -1;
    }
    if (postings->dense_at.shape[0] != (postings->run_count - 1) / segments ||
        postings->dense_ranks.shape[0] != postings->word_count) {
        PyErr_SetString(PyExc_ValueError, "dense sets do not match the postings");
        postings_release(postings);
        return -1;
    }
    return 0;
}

/* The rows [*start, *end) of key's run in segment, or -1 with ValueError. */
static int run_of(const Postings *postings, int64_t key, Py_ssize_t segment, int64_t *start,
                  int64_t *end) {
    Py_ssize_t keys = (postings->run_count - 1) / postings->segments;
    if (key < 0 || key >= keys) {
        PyErr_Format(PyExc_ValueError, "posting key %lld out of range", (long long)key);
        return -1;
    }
    Py_ssize_t at = (Py_ssize_t)key * postings->segments + segment;
    *start = postings->runs[at];
    *end = postings->runs[at + 1];
    if (*start < 0 || *start > *end || *end > postings->id_count) {
        PyErr_SetString(PyExc_ValueError, "id bounds out of range");
        return -1;
    }
    return 0;
}

/* The rows of key's posting, all segments, or -1 with ValueError. */
static int64_t key_rows(const Postings *postings, int64_t key) {
    int64_t start, end, unused;
    if (run_of(postings, key, 0, &start, &unused) < 0) return -1;
    if (run_of(postings, key, postings->segments - 1, &unused, &end) < 0) return -1;
    if (end < start) {
        PyErr_SetString(PyExc_ValueError, "id bounds are not ascending");
        return -1;
    }
    return end - start;
}

/* The first row in [row, end) whose id is at least `wanted` (end when none is):
 * galloping from `row`, then a binary search, so a walk over ascending ids costs
 * ~ log(gap) a step. */
static inline int64_t galloped(const uint16_t *ids, int64_t row, int64_t end, uint16_t wanted) {
    if (row >= end || ids[row] >= wanted) return row;
    int64_t low = row, step = 1;
    /* ids[low] < wanted throughout */
    while (low + step < end && ids[low + step] < wanted) {
        low += step;
        step <<= 1;
    }
    int64_t high = low + step < end ? low + step : end;
    /* ids[low] < wanted, and ids[high] >= wanted or high == end */
    while (high - low > 1) {
        int64_t middle = low + (high - low) / 2;
        if (ids[middle] < wanted)
            low = middle;
        else
            high = middle;
    }
    return high;
}

/* Where the ids' range in [start, end) puts `wanted` (interpolation): a row to probe
 * first, start when ids[start] is already at least `wanted`, end when no id is. */
static inline int64_t guessed(const uint16_t *ids, int64_t start, int64_t end, uint16_t wanted) {
    if (start >= end || ids[start] >= wanted) return start;
    int64_t last = end - 1;
    if (ids[last] < wanted) return end;
    /* ids[start] < wanted <= ids[last] */
    int64_t guess = start + 1 +
                    (int64_t)((double)(wanted - ids[start]) * (double)(last - start - 1) /
                              (double)(ids[last] - ids[start]));
    return guess > last ? last : guess;
}

/* The first row in [start, end) whose id is at least `wanted`, galloping from a guess
 * (`guessed`) up or down. */
static inline int64_t settled(const uint16_t *ids, int64_t start, int64_t end, int64_t guess,
                              uint16_t wanted) {
    if (guess >= end || ids[guess] < wanted) return galloped(ids, guess, end, wanted);
    /* ids[high] >= wanted: gallop down while the row below is too. */
    int64_t high = guess, step = 1;
    while (high - step >= start && ids[high - step] >= wanted) {
        high -= step;
        step <<= 1;
    }
    return galloped(ids, high - step >= start ? high - step : start, high, wanted);
}

/* Probes made before any is read: their cache misses overlap. */
#define PROBE_BATCH 64

/* The row of each of `count` ascending ids (`wanted`, all in one segment) in key's run
 * ids[start:end), or -1 where the run does not hold it.
 *
 * A key with a dense set (`dense_sets`) finds each row by the set's rank: a few
 * arithmetic steps an id, in a set that stays in the caches. Its postings are the
 * longest (a sixteenth of the docs or more), where a search costs most; the set
 * took the compound corpus's exact queries at 10^5 chunks from 0.660 to 0.591 ms
 * (docs/performance-history.md, "Dense keys' bit sets"). For another key:
 *
 * At most 4 rows an id: one galloping walk along the run, a step or two each. More
 * (few ids against a long run: a query's trigrams lie in most chunks): a probe where
 * interpolation puts each id, the probes of PROBE_BATCH ids prefetched together so
 * that their cache misses overlap, then a short gallop from each. Replaying a
 * compound corpus's queries at 10^5 chunks, the probes beat the walk from 4 rows an
 * id up (calls of 300-5000 candidates: 33.4 ms with the walk up to 256 rows an id,
 * 21.1 ms up to 4). */
static inline int dense_walk(int64_t rows, Py_ssize_t count) { return rows <= 4 * (int64_t)count; }

/* The set bits of a word. x86-64's baseline has no popcount instruction, and GCC's
 * builtin then calls libgcc (3.6% of the compound corpus's median queries, in
 * found_rows): the same count in a few inline steps (Hacker's Delight, 5-2), the
 * builtin wherever it is one instruction. */
static inline int64_t bits_set(uint64_t word) {
#if HAS_BUILTINS && !(defined(__x86_64__) && !defined(__POPCNT__))
    return __builtin_popcountll(word);
#else
    word -= (word >> 1) & 0x5555555555555555ull;
    word = (word & 0x3333333333333333ull) + ((word >> 2) & 0x3333333333333333ull);
    word = (word + (word >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (int64_t)((word * 0x0101010101010101ull) >> 56);
#endif
}

/* The place of a nonzero word's lowest set bit: the builtin where there is one, else the
 * bit isolated and counted below (Hacker's Delight, 5-4). */
static inline int64_t lowest_bit(uint64_t word) {
#if HAS_BUILTINS
    return __builtin_ctzll(word);
#else
    return bits_set((word & (0 - word)) - 1);
#endif
}

/* Key's set in `segment`, for ids up to `largest`: its words (and ranks in `*ranks`),
 * or NULL when the key has none or it would be read past its end (a damaged array). */
static const uint64_t *dense_set(const Postings *postings, int64_t key, Py_ssize_t segment,
                                 uint16_t largest, const uint16_t **ranks) {
    int64_t at = postings->set_at[key];
    if (at < 0 || at > postings->word_count) return NULL;
    int64_t first = at + (int64_t)segment * SEGMENT_WORDS;
    if (first + (largest >> 6) >= postings->word_count) return NULL;
    *ranks = postings->ranks + first;
    return postings->bits + first;
}

static void found_rows(const Postings *postings, int64_t key, Py_ssize_t segment, int64_t start,
                       int64_t end, const uint16_t *wanted, Py_ssize_t count, int64_t *rows) {
    const uint16_t *ids = postings->ids, *ranks = NULL;
    const uint64_t *bits =
        count ? dense_set(postings, key, segment, wanted[count - 1], &ranks) : NULL;
    if (bits != NULL) {
        /* A row by the set's rank: no search, and the set's words stay in the caches. */
        for (Py_ssize_t at = 0; at < count; at++) {
            uint64_t word = bits[wanted[at] >> 6], bit = (uint64_t)1 << (wanted[at] & 63);
            int64_t row = start + ranks[wanted[at] >> 6] + bits_set(word & (bit - 1));
            rows[at] = (word & bit) && row < end ? row : -1;
        }
        return;
    }
    if (dense_walk(end - start, count)) {
        int64_t row = start;
        for (Py_ssize_t at = 0; at < count; at++) {
            row = galloped(ids, row, end, wanted[at]);
            rows[at] = row < end && ids[row] == wanted[at] ? row : -1;
        }
        return;
    }
    for (Py_ssize_t from = 0; from < count; from += PROBE_BATCH) {
        Py_ssize_t to = from + PROBE_BATCH < count ? from + PROBE_BATCH : count;
        for (Py_ssize_t at = from; at < to; at++) {
            rows[at] = guessed(ids, start, end, wanted[at]);
            if (rows[at] < end) PREFETCH(ids + rows[at]);
        }
        for (Py_ssize_t at = from; at < to; at++) {
            int64_t row = settled(ids, start, end, rows[at], wanted[at]);
            rows[at] = row < end && ids[row] == wanted[at] ? row : -1;
        }
    }
}

/* Ascending doc ids cut by segment: the ids within their segments, and where each
 * segment's docs start (`cuts[s]` to `cuts[s + 1]`). */
typedef struct {
    uint16_t *local;
    Py_ssize_t *cuts;
} Segmented;

static void segmented_release(Segmented *docs) {
    PyMem_Free(docs->local);
    PyMem_Free(docs->cuts);
    docs->local = NULL;
    docs->cuts = NULL;
}

/* `docs` (count ids below segments << 16) cut by segment; -1 with ValueError unless
 * they ascend strictly, or MemoryError. */
static int segmented_of(const int64_t *docs, Py_ssize_t count, Py_ssize_t segments,
                        Segmented *cut) {
    cut->local = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(uint16_t));
    cut->cuts = PyMem_Calloc((size_t)segments + 1, sizeof(Py_ssize_t));
    if (cut->local == NULL || cut->cuts == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t at = 0; at < count; at++) {
        if (at && docs[at] <= docs[at - 1]) {
            PyErr_SetString(PyExc_ValueError, "doc ids are not ascending");
            return -1;
        }
        /* Its segment's count is written: an id outside the segments would write outside. */
        if (docs[at] < 0 || docs[at] >= (int64_t)segments << SEGMENT_BITS) {
            PyErr_SetString(PyExc_ValueError, "a doc id is out of range");
            return -1;
        }
        cut->local[at] = (uint16_t)(docs[at] & (SEGMENT_DOCS - 1));
        cut->cuts[(docs[at] >> SEGMENT_BITS) + 1]++;
    }
    for (Py_ssize_t segment = 0; segment < segments; segment++)
        cut->cuts[segment + 1] += cut->cuts[segment];
    return 0;
}

/* The row of each id cut by segment (`cut`) in key's posting, into `rows` (-1 where the
 * posting does not hold it, `found_rows`); 0, or -1 with ValueError. */
static int cut_rows(const Postings *postings, int64_t key, const Segmented *cut, int64_t *rows) {
    for (Py_ssize_t segment = 0; segment < postings->segments; segment++) {
        Py_ssize_t first = cut->cuts[segment], last = cut->cuts[segment + 1];
        int64_t start, end;
        if (first == last) continue;
        if (run_of(postings, key, segment, &start, &end) < 0) return -1;
        found_rows(postings, key, segment, start, end, cut->local + first, last - first,
                   rows + first);
    }
    return 0;
}

/* A query's scoring: postings' weights, the docs' length norms, and per term its key,
 * IDF and query weight. */
typedef struct {
    Py_buffer weights, norms, terms, idfs, query_weights;
    char weight_type;
    Py_ssize_t term_count, doc_count;
    const double *norm, *idf, *query_weight;
    const int64_t *term;
    double k1_plus_1;
} Scoring;

static void scoring_release(Scoring *scoring) {
    PyBuffer_Release(&scoring->weights);
    PyBuffer_Release(&scoring->norms);
    PyBuffer_Release(&scoring->terms);
    PyBuffer_Release(&scoring->idfs);
    PyBuffer_Release(&scoring->query_weights);
}

/* The scoring of these arrays over `postings`, or -1 with ValueError. Release it
 * either way. */
static int scoring_of(const Postings *postings, PyObject *weights, PyObject *norms,
                      PyObject *terms, PyObject *idfs, PyObject *query_weights, double k1,
                      Scoring *scoring) {
    if (PyObject_GetBuffer(weights, &scoring->weights, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    const char *format = scoring->weights.format;
    if (format[0] == '@' || format[0] == '=') format++;
    scoring->weight_type = format[0] != '\0' && format[1] == '\0' ? format[0] : '\0';
    int known = (scoring->weight_type == 'B' && scoring->weights.itemsize == 1) ||
                (scoring->weight_type == 'H' && scoring->weights.itemsize == 2) ||
                (scoring->weight_type == 'f' && scoring->weights.itemsize == 4) ||
                (scoring->weight_type == 'd' && scoring->weights.itemsize == 8);
    if (scoring->weights.ndim != 1 || !known || scoring->weights.shape[0] != postings->id_count ||
        (uintptr_t)scoring->weights.buf % (uintptr_t)scoring->weights.itemsize != 0) {
        PyErr_SetString(PyExc_ValueError, "posting weights do not match the doc ids");
        return -1;
    }
    if (buffer_of(norms, &scoring->norms, 'd', 0, "norms") < 0) return -1;
    if (buffer_of(terms, &scoring->terms, 'q', 0, "terms") < 0) return -1;
    if (buffer_of(idfs, &scoring->idfs, 'd', 0, "idfs") < 0) return -1;
    if (buffer_of(query_weights, &scoring->query_weights, 'd', 0, "query weights") < 0) return -1;
    scoring->term_count = scoring->terms.shape[0];
    scoring->doc_count = scoring->norms.shape[0];
    if (scoring->idfs.shape[0] != scoring->term_count ||
        scoring->query_weights.shape[0] != scoring->term_count) {
        PyErr_SetString(PyExc_ValueError, "terms, idfs and query weights differ in length");
        return -1;
    }
    /* Every walk visits each segment: exactly the segments the docs fall into. */
    Py_ssize_t segments = scoring->doc_count ? (scoring->doc_count - 1) / SEGMENT_DOCS + 1 : 1;
    if (postings->segments != segments) {
        PyErr_SetString(PyExc_ValueError, "the segment count does not match the norms");
        return -1;
    }
    if (!isfinite(k1)) {
        PyErr_SetString(PyExc_ValueError, "k1 is not finite");
        return -1;
    }
    scoring->term = scoring->terms.buf;
    Py_ssize_t keys = (postings->run_count - 1) / postings->segments;
    for (Py_ssize_t t = 0; t < scoring->term_count; t++) {
        if (scoring->term[t] < 0 || scoring->term[t] >= keys) {
            PyErr_Format(PyExc_ValueError, "posting key %lld out of range",
                         (long long)scoring->term[t]);
            return -1;
        }
    }
    scoring->norm = scoring->norms.buf;
    scoring->idf = scoring->idfs.buf;
    scoring->query_weight = scoring->query_weights.buf;
    scoring->k1_plus_1 = k1 + 1;
    return 0;
}

/* Term t's share of doc's score, its weight at `row`:
 * tf * (k1 + 1) / (norm + tf) * idf * query weight, in that order (Robertson's BM25). */
static inline double share_of(const Scoring *scoring, Py_ssize_t t, int64_t row, int64_t doc) {
    double tf;
    switch (scoring->weight_type) {
    case 'B': tf = ((const uint8_t *)scoring->weights.buf)[row]; break;
    case 'H': tf = ((const uint16_t *)scoring->weights.buf)[row]; break;
    case 'f': tf = ((const float *)scoring->weights.buf)[row]; break;
    default: tf = ((const double *)scoring->weights.buf)[row]; break;
    }
    double share = tf * scoring->k1_plus_1;
    share /= scoring->norm[doc] + tf;
    share *= scoring->idf[t];
    share *= scoring->query_weight[t];
    return share;
}

/* From this many candidates on, add_scores finds them by a slot per doc id; a posting
 * of at most SLOT_SCAN_ROWS rows a candidate is then scanned whole (`slot_scan`). */
#define SLOT_SCAN_CANDIDATES 4096
#define SLOT_SCAN_ROWS 8
/* Sums below this slot are sinks, where the shares of non-candidates go. */
#define SLOT_SINKS 8

/* Add term t's share at each row of [start, end) (segment `segment`) to the sum of
 * that row's slot: a sink (one of the first SLOT_SINKS) for a doc that is no candidate.
 * Every row's share is computed and no step waits on another's load or branch: a merge's
 * steps each wait on the last (about 2 ns a step), these overlap. */
static void slot_scan(const Scoring *scoring, Py_ssize_t t, const uint16_t *ids, int64_t start,
                      int64_t end, Py_ssize_t segment, const int32_t *slots, double *sums) {
    int64_t base = (int64_t)segment << SEGMENT_BITS, last_doc = scoring->doc_count - 1;
    for (int64_t row = start; row < end; row++) {
        int64_t doc = base + ids[row];
        /* A doc past the corpus (a damaged posting) has no norm: read doc 0's, sunk. */
        int32_t slot = doc <= last_doc ? slots[doc] : 0;
        /* Consecutive rows of non-candidates take turns among the sinks: one sink would
         * chain every such row's add on the last one's store. */
        slot = slot ? slot : (int32_t)(row & (SLOT_SINKS - 1));
        sums[slot] += share_of(scoring, t, row, doc <= last_doc ? doc : 0);
    }
}

/* Add term t's share to the totals of the candidates [first, last) (ascending, one
 * segment's, `cut`) that its rows [start, end) hold, by the walk that suits how many of
 * each there are. `rows` is scratch room for the candidates' rows. */
static void add_shares(const Postings *postings, const Scoring *scoring, Py_ssize_t t,
                       Py_ssize_t segment, int64_t start, int64_t end, const Segmented *cut,
                       const int64_t *docs, Py_ssize_t first, Py_ssize_t last, double *total,
                       int64_t *rows) {
    const uint16_t *ids = postings->ids;
    const uint16_t *local = cut->local;
    int64_t row_count = end - start;
    Py_ssize_t count = last - first;
    if (row_count == 0) return;
    if (4 * row_count < count) {
        /* A short posting among many candidates: its rows walk the candidates. */
        Py_ssize_t at = first;
        for (int64_t row = start; row < end && at < last; row++) {
            at = first + galloped(local + first, at - first, count, ids[row]);
            if (at < last && local[at] == ids[row])
                total[at] += share_of(scoring, t, row, docs[at]);
        }
    } else if (row_count < 4 * (int64_t)count) {
        /* As many rows as candidates: one merge of the two. Every step's share is
         * computed and added only where they meet (adding 0.0 changes no bit of a total
         * that started at +0.0 and took nonnegative shares: the callers' totals), so no
         * step waits on a branch. */
        Py_ssize_t at = first;
        int64_t row = start;
        while (at < last && row < end) {
            uint16_t wanted = local[at], held = ids[row];
            double share = share_of(scoring, t, row, docs[at]);
            total[at] += wanted == held ? share : 0.0;
            at += wanted <= held;
            row += held <= wanted;
        }
    } else {
        found_rows(postings, scoring->term[t], segment, start, end, local + first, count,
                   rows + first);
        /* The rows' weights lie far apart in a long posting, each read a miss of every
         * cache: all are asked for before the first is read, so that their misses
         * overlap beyond what the scoring loop's own reordering reaches. */
        const char *weights = scoring->weights.buf;
        Py_ssize_t weight_size = scoring->weights.itemsize;
        for (Py_ssize_t at = first; at < last; at++)
            if (rows[at] >= 0) PREFETCH(weights + rows[at] * weight_size);
        for (Py_ssize_t at = first; at < last; at++)
            if (rows[at] >= 0) total[at] += share_of(scoring, t, rows[at], docs[at]);
    }
}

/* Candidates being scored: their ids cut by segment and, for many of them, a slot
 * per doc id (0 for a doc no candidate is, else SLOT_SINKS + its candidate's place)
 * with a sum per slot (the first SLOT_SINKS are sinks), so that a posting's rows find
 * their candidates with no search (`slot_scan`). */
typedef struct {
    const int64_t *docs;
    Py_ssize_t count;
    Segmented cut;
    int64_t *rows;
    int32_t *slots;
    double *sums;
} Adder;

static void adder_release(Adder *adder) {
    PyMem_Free((void *)adder->docs);
    segmented_release(&adder->cut);
    PyMem_Free(adder->rows);
    PyMem_Free(adder->slots);
    PyMem_Free(adder->sums);
}

/* An adder of shares to `totals`, one a candidate of `docs` (count ascending doc ids
 * below doc_count); -1 with an exception. Release it either way. */
static int adder_of(const int64_t *docs, Py_ssize_t count, Py_ssize_t segments,
                    Py_ssize_t doc_count, const double *totals, Adder *adder) {
    /* The ids are copied: the caller's totals may share their buffer. */
    int64_t *ids = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(int64_t));
    if (ids == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (count) memcpy(ids, docs, (size_t)count * sizeof(int64_t));
    adder->docs = ids;
    adder->count = count;
    /* A slot is a candidate's place plus SLOT_SINKS, in an int32. */
    if (count >= INT32_MAX - SLOT_SINKS) {
        PyErr_SetString(PyExc_ValueError, "too many candidates");
        return -1;
    }
    for (Py_ssize_t at = 0; at < count; at++) {
        if (ids[at] < 0 || ids[at] >= doc_count) {
            PyErr_SetString(PyExc_ValueError, "a candidate is not a doc id of the corpus");
            return -1;
        }
    }
    docs = ids;
    if (segmented_of(docs, count, segments, &adder->cut) < 0) return -1;
    adder->rows = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(int64_t));
    if (adder->rows == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (count < SLOT_SCAN_CANDIDATES) return 0;
    adder->slots = PyMem_Calloc((size_t)segments * SEGMENT_DOCS, sizeof(int32_t));
    adder->sums = PyMem_Malloc((size_t)(count + SLOT_SINKS) * sizeof(double));
    if (adder->slots == NULL || adder->sums == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t sink = 0; sink < SLOT_SINKS; sink++) adder->sums[sink] = 0.0;
    for (Py_ssize_t at = 0; at < count; at++) {
        adder->slots[docs[at]] = (int32_t)(at + SLOT_SINKS);
        adder->sums[at + SLOT_SINKS] = totals[at];
    }
    return 0;
}

/* Add term t's share to the total of each candidate its posting holds (to
 * `totals`, or to the adder's sums when it keeps slots); -1 with ValueError. */
static int add_term(const Postings *postings, const Scoring *scoring, Py_ssize_t t,
                    Adder *adder, double *totals) {
    for (Py_ssize_t segment = 0; segment < postings->segments; segment++) {
        Py_ssize_t first = adder->cut.cuts[segment], last = adder->cut.cuts[segment + 1];
        int64_t start, end;
        if (first == last) continue;
        if (run_of(postings, scoring->term[t], segment, &start, &end) < 0) return -1;
        if (adder->slots != NULL && end - start <= SLOT_SCAN_ROWS * (int64_t)(last - first))
            slot_scan(scoring, t, postings->ids, start, end, segment, adder->slots, adder->sums);
        else
            add_shares(postings, scoring, t, segment, start, end, &adder->cut, adder->docs, first,
                       last, adder->slots != NULL ? adder->sums + SLOT_SINKS : totals,
                       adder->rows);
    }
    return 0;
}

/* Add the shares of the terms order[first:last] (every term in term order when `order`
 * is NULL) to the totals of `count` candidates (ascending), term after term. */
static int add_terms(const Postings *postings, const Scoring *scoring, const Py_ssize_t *order,
                     Py_ssize_t first, Py_ssize_t last, const int64_t *docs, Py_ssize_t count,
                     double *totals) {
    Adder adder = {0};
    int status = -1;
    if (adder_of(docs, count, postings->segments, scoring->doc_count, totals, &adder) < 0)
        goto done;
    for (Py_ssize_t k = first; k < last; k++)
        if (add_term(postings, scoring, order != NULL ? order[k] : k, &adder, totals) < 0)
            goto done;
    /* The sums kept by slot go back to the totals. */
    if (adder.slots != NULL)
        for (Py_ssize_t at = 0; at < count; at++) totals[at] = adder.sums[at + SLOT_SINKS];
    status = 0;
done:
    adder_release(&adder);
    return status;
}

PyDoc_STRVAR(add_scores_doc,
"add_scores(local, bounds, segments, dense_at, dense_bits, dense_ranks, weights, norms,\n"
"           terms, idfs, query_weights, k1, candidates, totals)\n\n"
"Add each term's BM25 share to the totals of the candidates (ascending doc ids) its\n"
"posting holds, term after term: tf * (k1 + 1) / (norm + tf) * idf * query weight.");

static PyObject *add_scores(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *local, *bounds, *dense_at, *dense_bits, *dense_ranks;
    PyObject *weights, *norms, *terms, *idfs, *query_weights, *candidates_object;
    PyObject *totals_object;
    Py_ssize_t segments;
    double k1;
    if (!PyArg_ParseTuple(args, "OOnOOOOOOOOdOO", &local, &bounds, &segments, &dense_at,
                          &dense_bits, &dense_ranks, &weights, &norms,
                          &terms, &idfs, &query_weights, &k1, &candidates_object,
                          &totals_object))
        return NULL;
    Postings postings;
    if (postings_of(local, bounds, segments, dense_at, dense_bits, dense_ranks, &postings) < 0)
        return NULL;
    Scoring scoring = {0};
    Py_buffer candidates = {0}, totals = {0};
    PyObject *result = NULL;
    if (scoring_of(&postings, weights, norms, terms, idfs, query_weights, k1, &scoring) < 0)
        goto done;
    if (buffer_of(candidates_object, &candidates, 'q', 0, "candidates") < 0) goto done;
    if (buffer_of(totals_object, &totals, 'd', 1, "totals") < 0) goto done;
    if (totals.shape[0] != candidates.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "candidates and totals differ in length");
        goto done;
    }
    if (add_terms(&postings, &scoring, NULL, 0, scoring.term_count, candidates.buf,
                  candidates.shape[0], totals.buf) < 0)
        goto done;
    result = Py_None;
    Py_INCREF(result);
done:
    scoring_release(&scoring);
    PyBuffer_Release(&candidates);
    PyBuffer_Release(&totals);
    postings_release(&postings);
    return result;
}

static int ascending_ids(const void *left, const void *right) {
    int64_t a = *(const int64_t *)left, b = *(const int64_t *)right;
    return (a > b) - (a < b);
}

/* A posting key and its size, ordered by size, then key. */
typedef struct {
    int64_t size, key;
} KeySize;

static int smaller_first(const void *left, const void *right) {
    KeySize a = *(const KeySize *)left, b = *(const KeySize *)right;
    if (a.size != b.size) return (a.size > b.size) - (a.size < b.size);
    return (a.key > b.key) - (a.key < b.key);
}

/* Keep the ids of found[0:count) (ascending) that key's posting holds; their count. */
static Py_ssize_t kept_in(const Postings *postings, int64_t key, int64_t *found,
                          Py_ssize_t count, int64_t *rows) {
    Segmented cut = {0};
    Py_ssize_t kept = -1;
    if (segmented_of(found, count, postings->segments, &cut) < 0) goto done;
    if (cut_rows(postings, key, &cut, rows) < 0) goto done;
    kept = 0;
    for (Py_ssize_t at = 0; at < count; at++)
        if (rows[at] >= 0) found[kept++] = found[at];
done:
    segmented_release(&cut);
    return kept;
}

/* The ids in the postings of `given` keys (none when a key is negative), intersecting
 * from the shortest posting up (ties by key) and stopping once at most `few` are left
 * (0: the ids in every posting): a PyMem array in `*found` (NULL when none are), their
 * count, or -1 with an exception. */
static Py_ssize_t narrowed_ids(const Postings *postings, const int64_t *given,
                               Py_ssize_t given_count, Py_ssize_t few, int64_t **found) {
    int64_t *rows = NULL, *key = PyMem_Malloc(((size_t)given_count + 1) * sizeof(int64_t));
    KeySize *by_size = PyMem_Malloc(((size_t)given_count + 1) * sizeof(KeySize));
    Py_ssize_t key_count = 0, filled = -1;
    *found = NULL;
    if (key == NULL || by_size == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* The distinct keys by posting size, ties by key (sorted, not inserted: a hostile
     * query may have any number). A negative key is held nowhere: no id is in every
     * posting. */
    for (Py_ssize_t at = 0; at < given_count; at++) {
        if (given[at] < 0) {
            key_count = -1;
            break;
        }
        key[key_count++] = given[at];
    }
    if (key_count > 0) {
        qsort(key, (size_t)key_count, sizeof(int64_t), ascending_ids);
        Py_ssize_t distinct = 0;
        for (Py_ssize_t at = 0; at < key_count; at++)
            if (distinct == 0 || key[distinct - 1] != key[at]) key[distinct++] = key[at];
        key_count = distinct;
        for (Py_ssize_t at = 0; at < key_count; at++) {
            by_size[at].size = key_rows(postings, key[at]);
            if (by_size[at].size < 0) goto done;
            by_size[at].key = key[at];
        }
        qsort(by_size, (size_t)key_count, sizeof(KeySize), smaller_first);
        for (Py_ssize_t at = 0; at < key_count; at++) key[at] = by_size[at].key;
    }
    if (key_count <= 0) {
        filled = 0;
        goto done;
    }
    int64_t first_start, first_end, last_start, last_end;
    if (run_of(postings, key[0], 0, &first_start, &first_end) < 0) goto done;
    if (run_of(postings, key[0], postings->segments - 1, &last_start, &last_end) < 0) goto done;
    Py_ssize_t count = (Py_ssize_t)(last_end - first_start);
    if (count < 0) {
        PyErr_SetString(PyExc_ValueError, "id bounds are not ascending");
        goto done;
    }
    *found = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(int64_t));
    rows = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(int64_t));
    if (*found == NULL || rows == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t kept = 0;
    for (Py_ssize_t segment = 0; segment < postings->segments; segment++) {
        int64_t row, end, base = (int64_t)segment << SEGMENT_BITS;
        if (run_of(postings, key[0], segment, &row, &end) < 0) goto done;
        if (kept + (end - row) > count) {
            PyErr_SetString(PyExc_ValueError, "id bounds are not ascending");
            goto done;
        }
        for (; row < end; row++) (*found)[kept++] = base + postings->ids[row];
    }
    for (Py_ssize_t k = 1; k < key_count && kept > few; k++) {
        kept = kept_in(postings, key[k], *found, kept, rows);
        if (kept < 0) goto done;
    }
    filled = kept;
done:
    if (filled < 0) {
        PyMem_Free(*found);
        *found = NULL;
    }
    PyMem_Free(rows);
    PyMem_Free(key);
    PyMem_Free(by_size);
    return filled;
}

/* A scored doc; `better` orders by score, then by the lower doc id. */
typedef struct {
    double score;
    int64_t doc;
} Scored;

/* A total order even where a score is NaN (a damaged norm, weights at the float limits):
 * NaN after every number. qsort with an order that is not total may read outside the
 * array in some C libraries. */
static int better(Scored a, Scored b) {
    if (a.score > b.score) return 1;
    if (a.score < b.score) return 0;
    int a_nan = a.score != a.score, b_nan = b.score != b.score;
    if (a_nan != b_nan) return b_nan;
    return a.doc < b.doc;
}

/* Restore the heap (worst at the root) below `at`. */
static void sift_down(Scored *heap, Py_ssize_t size, Py_ssize_t at) {
    for (;;) {
        Py_ssize_t worst = at, left = 2 * at + 1, right = left + 1;
        if (left < size && better(heap[worst], heap[left])) worst = left;
        if (right < size && better(heap[worst], heap[right])) worst = right;
        if (worst == at) return;
        Scored swap = heap[at];
        heap[at] = heap[worst];
        heap[worst] = swap;
        at = worst;
    }
}

static int best_first(const void *left, const void *right) {
    Scored a = *(const Scored *)left, b = *(const Scored *)right;
    return better(a, b) ? -1 : better(b, a) ? 1 : 0;
}

/* Push `scored` onto a heap of at most `depth` (worst at the root); the new size. */
static Py_ssize_t heap_pushed(Scored *heap, Py_ssize_t size, Py_ssize_t depth, Scored scored) {
    if (size < depth) {
        /* Sift the new leaf up. */
        Py_ssize_t at = size++;
        heap[at] = scored;
        while (at && better(heap[(at - 1) / 2], heap[at])) {
            Scored swap = heap[at];
            heap[at] = heap[(at - 1) / 2];
            heap[(at - 1) / 2] = swap;
            at = (at - 1) / 2;
        }
    } else if (depth && better(scored, heap[0])) {
        heap[0] = scored;
        sift_down(heap, size, 0);
    }
    return size;
}

/* The heap's docs and scores, best first, written from `at` on into `docs` and `scores`. */
static void sorted_into(Scored *heap, Py_ssize_t size, PyObject *docs, PyObject *scores,
                        Py_ssize_t at) {
    if (size == 0) return;
    qsort(heap, (size_t)size, sizeof(Scored), best_first);
    /* Fetched once: in the stable ABI each is a call, no longer a macro. */
    int64_t *doc_to = (int64_t *)PyByteArray_AsString(docs);
    double *score_to = (double *)PyByteArray_AsString(scores);
    for (Py_ssize_t next = 0; next < size; next++) {
        doc_to[at + next] = heap[next].doc;
        score_to[at + next] = heap[next].score;
    }
}

/* The heap's docs and scores, best first, as a tuple of two bytearrays (int64, float64). */
static PyObject *ranked_pair(Scored *heap, Py_ssize_t size) {
    PyObject *docs = PyByteArray_FromStringAndSize(NULL, size * (Py_ssize_t)sizeof(int64_t));
    PyObject *scores = PyByteArray_FromStringAndSize(NULL, size * (Py_ssize_t)sizeof(double));
    PyObject *pair = NULL;
    if (docs != NULL && scores != NULL) {
        sorted_into(heap, size, docs, scores, 0);
        pair = PyTuple_Pack(2, docs, scores);
    }
    Py_XDECREF(docs);
    Py_XDECREF(scores);
    return pair;
}

/* From this many candidates on, best_of first bounds their scores by the terms of the
 * largest shares and scores exactly only those that can reach the best. */
#define PRUNED_CANDIDATES 1024
/* The best's lowest score is first estimated once the terms not yet added could add at
 * most FIRST_ESTIMATE_REST of all terms' bound (before, the best by partial sums are
 * poor guesses, and an estimate costs a probe a guess and term), and again, at most
 * ESTIMATES times in all, each time the candidates in reach have halved. (Replayed on
 * both benchmark corpora at 10^5 chunks: docs/performance-history.md,
 * "Issue 28, round 7".) */
#define FIRST_ESTIMATE_REST 0.15
#define ESTIMATES 3
/* A sum of a query's shares in another order than term order differs from it in its
 * last bits: the bound and the estimate give it this much room. */
#define ROUNDING_ROOM 1e-6

/* The `depth` best of `count` candidates (ascending doc ids) by their `scores` pushed onto
 * `heap`; its size. Once the heap is full, a score at most its worst's is passed over
 * without a call: its doc comes later, so an equal score is no better. */
static Py_ssize_t heaped(const int64_t *docs, const double *scores, Py_ssize_t count,
                         Py_ssize_t depth, Scored *heap) {
    Py_ssize_t size = 0, at = 0;
    for (; at < count && size < depth; at++) {
        Scored scored = {scores[at], docs[at]};
        size = heap_pushed(heap, size, depth, scored);
    }
    if (!depth) return size;
    double worst = heap[0].score;
    for (; at < count; at++) {
        if (scores[at] <= worst) continue;
        Scored scored = {scores[at], docs[at]};
        size = heap_pushed(heap, size, depth, scored);
        worst = heap[0].score;
    }
    return size;
}

/* BM25 of `count` candidates (ascending) into `totals`, summed from +0.0 in term order. */
static int exact_scores(const Postings *postings, const Scoring *scoring, const int64_t *docs,
                        Py_ssize_t count, double *totals) {
    for (Py_ssize_t at = 0; at < count; at++) totals[at] = 0.0;
    return add_terms(postings, scoring, NULL, 0, scoring->term_count, docs, count, totals);
}

static int ascending_scored(const void *left, const void *right) {
    int64_t a = ((const Scored *)left)->doc, b = ((const Scored *)right)->doc;
    return (a > b) - (a < b);
}

/* A lower bound on the depth-th best exact score of the candidates: of the `depth` best
 * by their `partial` sums of the terms order[:added], the lowest of those sums with the
 * other terms' shares added, less room for rounding. `heap`, `picked` and `sums` have
 * room for depth. -INFINITY with an exception set on failure. */
static double lowest_of_best(const Postings *postings, const Scoring *scoring,
                             const Py_ssize_t *order, Py_ssize_t added, const int64_t *docs,
                             const double *partial, Py_ssize_t count, Py_ssize_t depth,
                             Scored *heap, int64_t *picked, double *sums) {
    Py_ssize_t size = heaped(docs, partial, count, depth, heap);
    qsort(heap, (size_t)size, sizeof(Scored), ascending_scored);
    for (Py_ssize_t at = 0; at < size; at++) {
        picked[at] = heap[at].doc;
        sums[at] = heap[at].score;
    }
    if (add_terms(postings, scoring, order, added, scoring->term_count, picked, size, sums) < 0)
        return -INFINITY;
    double lowest = INFINITY;
    for (Py_ssize_t at = 0; at < size; at++) lowest = sums[at] < lowest ? sums[at] : lowest;
    return lowest * (1 - ROUNDING_ROOM);
}

/* The `depth` best candidates onto `heap` (its size in `*size`) by MaxScore's bound
 * taken term at a time (Turtle and Flood 1995): the terms of the largest shares are
 * added first, to a partial sum a candidate; a candidate whose partial sum and the
 * other terms' bound fall below a lower bound on the depth-th best score cannot be
 * among the best, and is dropped, so that each later term is added to fewer
 * candidates. Those left at the end are scored exactly, in term order. 0 or -1 on error. */
static int best_pruned(const Postings *postings, const Scoring *scoring, const int64_t *docs,
                       Py_ssize_t count, Py_ssize_t depth, Scored *heap, Py_ssize_t *size) {
    Py_ssize_t term_count = scoring->term_count;
    Adder adder = {0};
    double *most = PyMem_Calloc((size_t)term_count + 1, sizeof(double));
    double *rest = PyMem_Calloc((size_t)term_count + 1, sizeof(double));
    Py_ssize_t *order = PyMem_Calloc((size_t)term_count + 1, sizeof(Py_ssize_t));
    /* The candidates in reach when last gathered, and their partial sums. */
    int64_t *kept = PyMem_Malloc((size_t)count * sizeof(int64_t));
    double *kept_sums = PyMem_Calloc((size_t)count, sizeof(double));
    int64_t *picked = PyMem_Malloc((size_t)depth * sizeof(int64_t));
    double *picked_sums = PyMem_Malloc((size_t)depth * sizeof(double));
    int status = -1;
    if (!most || !rest || !order || !kept || !kept_sums || !picked || !picked_sums) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(kept, docs, (size_t)count * sizeof(int64_t));
    Py_ssize_t kept_count = count;
    if (adder_of(kept, kept_count, postings->segments, scoring->doc_count, kept_sums, &adder) < 0)
        goto done;
    /* The partial sums: the adder's own, by slot, when it keeps slots. */
    double *partial = adder.slots != NULL ? adder.sums + SLOT_SINKS : kept_sums;
    /* Each term's largest share, with room for rounding; the terms by it, descending;
     * rest[k], what the terms order[k:] can add at most. */
    for (Py_ssize_t t = 0; t < term_count; t++) {
        most[t] = scoring->k1_plus_1 * scoring->idf[t] * scoring->query_weight[t] *
                  (1 + ROUNDING_ROOM);
        Py_ssize_t at = t;
        for (; at > 0 && most[order[at - 1]] < most[t]; at--) order[at] = order[at - 1];
        order[at] = t;
    }
    for (Py_ssize_t k = term_count; k > 0; k--) rest[k - 1] = rest[k] + most[order[k - 1]];
    double lowest = -INFINITY;
    Py_ssize_t estimates = 0, estimated_count = count;
    for (Py_ssize_t k = 0; k < term_count; k++) {
        if (add_term(postings, scoring, order[k], &adder, kept_sums) < 0) goto done;
        int last = k + 1 == term_count;
        if (rest[k + 1] > FIRST_ESTIMATE_REST * rest[0] && !last) continue;
        if (!estimates || (estimates < ESTIMATES && adder.count * 2 <= estimated_count)) {
            double estimate = lowest_of_best(postings, scoring, order, k + 1, adder.docs,
                                             partial, adder.count, depth, heap, picked,
                                             picked_sums);
            if (PyErr_Occurred()) goto done;
            lowest = estimate > lowest ? estimate : lowest;
            estimates++;
            estimated_count = adder.count;
        }
        /* None can fall out of reach while the terms left could lift any to the best. */
        if (rest[k + 1] >= lowest && !last) continue;
        /* Those still in reach are gathered, and the later terms added to them alone. */
        Py_ssize_t left = 0;
        for (Py_ssize_t at = 0; at < adder.count; at++) {
            kept[left] = adder.docs[at];
            kept_sums[left] = partial[at];
            left += partial[at] * (1 + ROUNDING_ROOM) + rest[k + 1] >= lowest;
        }
        kept_count = left;
        if (last || left == adder.count) continue;
        adder_release(&adder);
        memset(&adder, 0, sizeof adder);
        if (adder_of(kept, kept_count, postings->segments, scoring->doc_count, kept_sums,
                     &adder) < 0)
            goto done;
        partial = adder.slots != NULL ? adder.sums + SLOT_SINKS : kept_sums;
    }
    /* Every term is added: those left are scored exactly, in term order. */
    if (exact_scores(postings, scoring, kept, kept_count, kept_sums) < 0) goto done;
    *size = heaped(kept, kept_sums, kept_count, depth, heap);
    status = 0;
done:
    adder_release(&adder);
    PyMem_Free(most);
    PyMem_Free(rest);
    PyMem_Free(order);
    PyMem_Free(kept);
    PyMem_Free(kept_sums);
    PyMem_Free(picked);
    PyMem_Free(picked_sums);
    return status;
}

/* The `depth` best of `count` candidate docs (ascending; depth at most count) onto
 * `heap` (its size in `*size`): with `bounded`, many candidates are first bounded by
 * the terms of the largest shares (`best_pruned`), else each is scored exactly. 0, or
 * -1 with an exception. */
static int best_candidates(const Postings *postings, const Scoring *scoring,
                           const int64_t *docs, Py_ssize_t count, Py_ssize_t depth, int bounded,
                           Scored *heap, Py_ssize_t *size) {
    if (bounded && depth && count >= PRUNED_CANDIDATES)
        return best_pruned(postings, scoring, docs, count, depth, heap, size);
    double *totals = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(double));
    if (totals == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int status = exact_scores(postings, scoring, docs, count, totals);
    if (status == 0) *size = heaped(docs, totals, count, depth, heap);
    PyMem_Free(totals);
    return status;
}

PyDoc_STRVAR(best_of_doc,
"best_of(local, bounds, segments, dense_at, dense_bits, dense_ranks, weights, norms,\n"
"        terms, idfs, query_weights, k1, candidates, depth, bounded)\n"
"    -> (bytearray, bytearray)\n\n"
"The `depth` best of the candidates (ascending doc ids): their ids (int64) and BM25\n"
"scores (float64), best first, equal scores by doc id, each score summed in term order\n"
"as add_scores sums it. With `bounded` (no share exceeds (k1 + 1) * idf * query\n"
"weight), many candidates are first bounded by the terms of the largest shares, and\n"
"only those that can reach the best are scored exactly.");

static PyObject *best_of(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *local, *bounds, *dense_at, *dense_bits, *dense_ranks;
    PyObject *weights, *norms, *terms, *idfs, *query_weights, *candidates_object;
    Py_ssize_t segments, depth;
    double k1;
    int bounded;
    if (!PyArg_ParseTuple(args, "OOnOOOOOOOOdOnp", &local, &bounds, &segments, &dense_at,
                          &dense_bits, &dense_ranks, &weights, &norms,
                          &terms, &idfs, &query_weights, &k1, &candidates_object, &depth,
                          &bounded))
        return NULL;
    Postings postings;
    if (postings_of(local, bounds, segments, dense_at, dense_bits, dense_ranks, &postings) < 0)
        return NULL;
    Scoring scoring = {0};
    Py_buffer candidates = {0};
    Scored *heap = NULL;
    PyObject *result = NULL;
    if (scoring_of(&postings, weights, norms, terms, idfs, query_weights, k1, &scoring) < 0)
        goto done;
    if (buffer_of(candidates_object, &candidates, 'q', 0, "candidates") < 0) goto done;
    if (depth < 0) {
        PyErr_SetString(PyExc_ValueError, "a negative depth");
        goto done;
    }
    Py_ssize_t count = candidates.shape[0], size = 0;
    depth = depth < count ? depth : count;
    heap = PyMem_Calloc((size_t)depth + 1, sizeof(Scored));
    if (heap == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (best_candidates(&postings, &scoring, candidates.buf, count, depth, bounded, heap,
                        &size) < 0)
        goto done;
    result = ranked_pair(heap, size);
done:
    PyMem_Free(heap);
    scoring_release(&scoring);
    PyBuffer_Release(&candidates);
    postings_release(&postings);
    return result;
}

/* A set of ids (the trigram layer's chunks, the porter fill's docs): id i is bit i % 64
 * of word i / 64. At 10^5 chunks a set is 12.5 kB and stays in the first-level cache,
 * where a counter a chunk (400 kB) did not: marking a row's chunk costs about half of
 * counting it, and the ids come out ascending, with no sort. */
typedef uint64_t IdBits;

/* The visible ids of a set, ascending, into `ids`; their count. */
static Py_ssize_t listed_ids(const IdBits *bits, Py_ssize_t words, const uint8_t *shown,
                             int64_t *ids) {
    Py_ssize_t kept = 0;
    for (Py_ssize_t w = 0; w < words; w++)
        for (IdBits left = bits[w]; left; left &= left - 1) {
            int64_t id = (int64_t)w << 6 | lowest_bit(left);
            ids[kept] = id;
            kept += shown[id] != 0;
        }
    return kept;
}

/* The `depth` best of the visible docs holding any term, but the `skip`ped (ascending),
 * onto `heap` (its size in `*size`). The docs of every term but the one of the most rows
 * (`common`) are scored exactly (one bit a doc, listed ascending); then `common`'s
 * posting is walked for the docs holding no other term, whose score is that term's
 * share alone. With `bounded`, when the depth-th best already scores above all that
 * `common` alone can give, that walk is left out. 0, or -1 with an exception.
 *
 * Until round 8 the docs holding only `common` came from a merge of every posting
 * (MaxScore, Turtle and Flood 1995) that scored the other terms' docs again; the walk
 * scores each such doc by one share, and the merge is gone (docs/performance-history.md,
 * "The porter fill without a merge"). */
static int best_of_terms(const Postings *postings, const Scoring *scoring, const uint8_t *shown,
                         const int64_t *skip, Py_ssize_t skip_count, Py_ssize_t depth,
                         int bounded, Scored *heap, Py_ssize_t *size) {
    Py_ssize_t term_count = scoring->term_count, common = 0;
    int64_t common_rows = -1, other_rows = 0;
    *size = 0;
    if (term_count == 0 || depth == 0) return 0;
    for (Py_ssize_t t = 0; t < term_count; t++) {
        int64_t rows = 0, start, end;
        for (Py_ssize_t segment = 0; segment < postings->segments; segment++) {
            if (run_of(postings, scoring->term[t], segment, &start, &end) < 0) return -1;
            rows += end - start;
        }
        other_rows += rows;
        if (rows > common_rows) {
            common_rows = rows;
            common = t;
        }
    }
    other_rows -= common_rows;
    Py_ssize_t set_words = (scoring->doc_count + 63) / 64;
    IdBits *held = PyMem_Calloc((size_t)set_words + 1, sizeof(IdBits));
    int64_t *docs = PyMem_Malloc(((size_t)other_rows + 1) * sizeof(int64_t));
    double *totals = PyMem_Malloc(((size_t)other_rows + 1) * sizeof(double));
    int status = -1;
    if (held == NULL || docs == NULL || totals == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* The docs of the other terms, one bit each; those left out are not listed. */
    for (Py_ssize_t t = 0; t < term_count; t++) {
        if (t == common) continue;
        for (Py_ssize_t segment = 0; segment < postings->segments; segment++) {
            int64_t start, end, base = (int64_t)segment << SEGMENT_BITS;
            if (run_of(postings, scoring->term[t], segment, &start, &end) < 0) goto done;
            for (int64_t row = start; row < end; row++) {
                int64_t doc = base + postings->ids[row];
                if (doc >= scoring->doc_count) {
                    PyErr_SetString(PyExc_ValueError, "a posting id lies past the corpus");
                    goto done;
                }
                held[doc >> 6] |= (IdBits)1 << (doc & 63);
            }
        }
    }
    Py_ssize_t count = listed_ids(held, set_words, shown, docs);
    Py_ssize_t listed = 0, skip_at = 0;
    for (Py_ssize_t at = 0; at < count; at++) {
        while (skip_at < skip_count && skip[skip_at] < docs[at]) skip_at++;
        docs[listed] = docs[at];
        listed += !(skip_at < skip_count && skip[skip_at] == docs[at]);
    }
    if (exact_scores(postings, scoring, docs, listed, totals) < 0) goto done;
    *size = heaped(docs, totals, listed, depth, heap);
    status = 0;
    double alone = scoring->k1_plus_1 * scoring->idf[common] * scoring->query_weight[common] *
                   (1 + ROUNDING_ROOM);
    if (bounded && *size == depth && alone < heap[0].score) goto done;
    /* The docs holding `common` alone: scored as the other docs are, from +0.0. A doc
     * of the heap may have any id, so each is pushed unless it is no better than the
     * worst by score, then by doc id. */
    skip_at = 0;
    for (Py_ssize_t segment = 0; segment < postings->segments; segment++) {
        int64_t start, end, base = (int64_t)segment << SEGMENT_BITS;
        if (run_of(postings, scoring->term[common], segment, &start, &end) < 0) {
            status = -1;
            goto done;
        }
        for (int64_t row = start; row < end; row++) {
            int64_t doc = base + postings->ids[row];
            if (doc >= scoring->doc_count) {
                PyErr_SetString(PyExc_ValueError, "a posting id lies past the corpus");
                status = -1;
                goto done;
            }
            if (held[doc >> 6] >> (doc & 63) & 1 || !shown[doc]) continue;
            while (skip_at < skip_count && skip[skip_at] < doc) skip_at++;
            if (skip_at < skip_count && skip[skip_at] == doc) continue;
            double total = 0.0;
            total += share_of(scoring, common, row, doc);
            Scored scored = {total, doc};
            if (*size < depth || better(scored, heap[0]))
                *size = heap_pushed(heap, *size, depth, scored);
        }
    }
done:
    PyMem_Free(held);
    PyMem_Free(docs);
    PyMem_Free(totals);
    return status;
}

PyDoc_STRVAR(every_then_any_doc,
"every_then_any(local, bounds, segments, dense_at, dense_bits, dense_ranks, weights,\n"
"               norms, terms, idfs, query_weights, k1, keys, visible, depth, fill_below,\n"
"               bounded) -> (bytearray, bytearray, int)\n\n"
"A ranking in one call: the `depth` best visible docs in the postings of every one of\n"
"`keys` (int64; a negative key is held nowhere), ranked as best_of ranks them; when\n"
"fewer than `fill_below`, then the best of the other visible docs holding any of the\n"
"terms, up to `depth` in all. The docs of every term but the commonest are scored for\n"
"those, then those of the commonest alone; with `bounded` (no share exceeds (k1 + 1) *\n"
"idf * query weight), that last walk is left out when it cannot reach the best. Each\n"
"score is its terms' shares added in term order, as add_scores adds them. Returns the\n"
"docs' ids (int64) and scores (float64), each part best first, equal scores by doc id,\n"
"and how many docs hold every key.");

/* The porter layer's ranking. Its six steps (the intersection, the visible among it,
 * the terms' IDFs, the ranking, the fill, the join) were six calls from Python, each
 * paying the interpreter's cold caches after the walk before it
 * (docs/performance-history.md, round 10). */
static PyObject *every_then_any(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *local, *bounds, *dense_at, *dense_bits, *dense_ranks;
    PyObject *weights, *norms, *terms, *idfs, *query_weights, *keys_object, *visible_object;
    Py_ssize_t segments, depth, fill_below;
    double k1;
    int bounded;
    if (!PyArg_ParseTuple(args, "OOnOOOOOOOOdOOnnp", &local, &bounds, &segments, &dense_at,
                          &dense_bits, &dense_ranks, &weights, &norms, &terms, &idfs,
                          &query_weights, &k1, &keys_object, &visible_object, &depth,
                          &fill_below, &bounded))
        return NULL;
    Postings postings;
    if (postings_of(local, bounds, segments, dense_at, dense_bits, dense_ranks, &postings) < 0)
        return NULL;
    Scoring scoring = {0};
    Py_buffer keys = {0}, visible = {0};
    int64_t *every = NULL;
    Scored *heap = NULL, *rest = NULL;
    PyObject *docs = NULL, *scores = NULL, *result = NULL;
    if (scoring_of(&postings, weights, norms, terms, idfs, query_weights, k1, &scoring) < 0)
        goto done;
    if (buffer_of(keys_object, &keys, 'q', 0, "keys") < 0) goto done;
    if (buffer_of(visible_object, &visible, '?', 0, "visible") < 0) goto done;
    if (visible.shape[0] != scoring.doc_count) {
        PyErr_SetString(PyExc_ValueError, "visible differs from the norms in length");
        goto done;
    }
    if (depth < 0) {
        PyErr_SetString(PyExc_ValueError, "a negative depth");
        goto done;
    }
    Py_ssize_t count = narrowed_ids(&postings, keys.buf, keys.shape[0], 0, &every);
    if (count < 0) goto done;
    const uint8_t *shown = visible.buf;
    Py_ssize_t kept = 0;
    for (Py_ssize_t at = 0; at < count; at++) {
        if (every[at] >= scoring.doc_count) {
            PyErr_SetString(PyExc_ValueError, "posting ids out of range");
            goto done;
        }
        every[kept] = every[at];
        kept += shown[every[at]] != 0;
    }
    Py_ssize_t best_depth = depth < kept ? depth : kept, size = 0, rest_size = 0;
    heap = PyMem_Calloc((size_t)best_depth + 1, sizeof(Scored));
    if (heap == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (best_candidates(&postings, &scoring, every, kept, best_depth, bounded, heap, &size) < 0)
        goto done;
    if (size < fill_below) {
        /* No more than the corpus's docs: a huge depth must not ask for a huge heap. */
        Py_ssize_t rest_depth = depth - size < scoring.doc_count ? depth - size : scoring.doc_count;
        rest = PyMem_Calloc((size_t)rest_depth + 1, sizeof(Scored));
        if (rest == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        if (best_of_terms(&postings, &scoring, shown, every, kept, rest_depth, bounded, rest,
                          &rest_size) < 0)
            goto done;
    }
    docs = PyByteArray_FromStringAndSize(NULL, (size + rest_size) * (Py_ssize_t)sizeof(int64_t));
    scores = PyByteArray_FromStringAndSize(NULL, (size + rest_size) * (Py_ssize_t)sizeof(double));
    if (docs == NULL || scores == NULL) goto done;
    sorted_into(heap, size, docs, scores, 0);
    sorted_into(rest, rest_size, docs, scores, size);
    result = Py_BuildValue("(OOn)", docs, scores, size);
done:
    Py_XDECREF(docs);
    Py_XDECREF(scores);
    PyMem_Free(every);
    PyMem_Free(heap);
    PyMem_Free(rest);
    scoring_release(&scoring);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&visible);
    postings_release(&postings);
    return result;
}

/* The chunks of one call of chunks_holding: word w's chunks are key w of `postings`
 * (`ChunkWords.chunk_ids`), and the query words' groups of chunk words. */
typedef struct {
    const Postings *postings;
    const int64_t *word, *end;
    const uint8_t *shown;
    Py_ssize_t group_count, chunk_count;
} WordGroups;

/* Key's whole dense set, `words` words (key in range), or NULL when it has none or it
 * would be read past the sets' end (a damaged array). */
static const uint64_t *whole_set(const Postings *postings, int64_t key, Py_ssize_t words) {
    int64_t at = postings->set_at[key];
    if (at < 0 || at > postings->word_count - words) return NULL;
    return postings->bits + at;
}

/* Word `word`'s chunks marked in `bits` (`words` words): its dense set or'ed in whole
 * when it has one (`ChunkWords`: a word in a sixty-fourth of the chunks or more), else
 * its rows walked. -1 with ValueError for a chunk out of range, checked as each row is met (a
 * branch never taken on a sound index costs less than a pass of its own), and for a
 * set's bit past the chunks. */
static int word_chunks(const WordGroups *groups, int64_t word, IdBits *bits, Py_ssize_t words) {
    const Postings *postings = groups->postings;
    const uint64_t *set = whole_set(postings, word, words);
    if (set != NULL) {
        for (Py_ssize_t w = 0; w < words; w++) bits[w] |= set[w];
        Py_ssize_t tail = groups->chunk_count & 63;
        if (tail && bits[words - 1] >> tail) {
            PyErr_SetString(PyExc_ValueError, "a chunk id is out of range");
            return -1;
        }
        return 0;
    }
    uint32_t count = (uint32_t)groups->chunk_count;
    for (Py_ssize_t segment = 0; segment < postings->segments; segment++) {
        int64_t row, end;
        uint32_t base = (uint32_t)segment << SEGMENT_BITS;
        if (run_of(postings, word, segment, &row, &end) < 0) return -1;
        for (; row < end; row++) {
            uint32_t chunk = base + postings->ids[row];
            if (UNLIKELY(chunk >= count)) {
                PyErr_SetString(PyExc_ValueError, "a chunk id is out of range");
                return -1;
            }
            bits[chunk >> 6] |= (IdBits)1 << (chunk & 63);
        }
    }
    return 0;
}

/* The chunks of group `group`'s words marked in `bits` (`words` words, zeroed here);
 * -1 with ValueError for a chunk out of range. */
static int group_chunks(const WordGroups *groups, Py_ssize_t group, IdBits *bits,
                        Py_ssize_t words) {
    memset(bits, 0, (size_t)words * sizeof(IdBits));
    for (Py_ssize_t at = group ? groups->end[group - 1] : 0; at < groups->end[group]; at++)
        if (word_chunks(groups, groups->word[at], bits, words) < 0) return -1;
    return 0;
}

/* A word posting without a dense set and longer than this many rows a candidate is
 * probed for the candidates rather than walked whole. */
#define PROBED_ROWS 16

/* Which of the candidate chunks (ascending, `count`, cut by segment in `cut`) group
 * `group`'s words hold, marked in `bits` (zeroed here): a word's dense set is or'ed in,
 * its rows walked, or, when they outnumber the candidates PROBED_ROWS times over,
 * searched for each candidate (`found_rows`, into `rows`). -1 with ValueError for a
 * chunk out of range among those walked. */
static int group_candidates(const WordGroups *groups, Py_ssize_t group, const Segmented *cut,
                            const int64_t *candidates, Py_ssize_t count, int64_t *rows,
                            IdBits *bits, Py_ssize_t words) {
    const Postings *postings = groups->postings;
    memset(bits, 0, (size_t)words * sizeof(IdBits));
    for (Py_ssize_t at = group ? groups->end[group - 1] : 0; at < groups->end[group]; at++) {
        int64_t word = groups->word[at], held = key_rows(postings, word);
        if (held < 0) return -1;
        if (whole_set(postings, word, words) != NULL || held <= PROBED_ROWS * (int64_t)count) {
            if (word_chunks(groups, word, bits, words) < 0) return -1;
            continue;
        }
        if (cut_rows(postings, word, cut, rows) < 0) return -1;
        for (Py_ssize_t c = 0; c < count; c++)
            if (rows[c] >= 0) bits[candidates[c] >> 6] |= (IdBits)1 << (candidates[c] & 63);
    }
    return 0;
}

/* The visible chunks of a set, ascending, as a bytearray of int64. */
static PyObject *visible_chunks(const IdBits *bits, Py_ssize_t words, const uint8_t *shown) {
    Py_ssize_t most = 0;
    for (Py_ssize_t w = 0; w < words; w++) most += bits_set(bits[w]);
    PyObject *result = PyByteArray_FromStringAndSize(NULL, most * (Py_ssize_t)sizeof(int64_t));
    if (result == NULL) return NULL;
    Py_ssize_t kept = listed_ids(bits, words, shown, (int64_t *)PyByteArray_AsString(result));
    if (PyByteArray_Resize(result, kept * (Py_ssize_t)sizeof(int64_t)) < 0) Py_CLEAR(result);
    return result;
}

PyDoc_STRVAR(chunks_holding_doc,
"chunks_holding(local, bounds, segments, dense_at, dense_bits, dense_ranks, words,\n"
"               group_ends, visible) -> (bytearray, bytearray)\n\n"
"Word w's chunks are key w of the postings (local, bounds, ... as best_of takes them);\n"
"the words are grouped, group g being words[group_ends[g - 1]:group_ends[g]] (the words\n"
"holding one query word). The visible chunks (int64, ascending) holding a word of every\n"
"group, and when there are none, those holding a word of any group (else an empty\n"
"second list).");

static PyObject *chunks_holding(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *local, *bounds, *dense_at, *dense_bits, *dense_ranks;
    PyObject *words_object, *ends_object, *visible_object;
    Py_ssize_t segments;
    if (!PyArg_ParseTuple(args, "OOnOOOOOO", &local, &bounds, &segments, &dense_at, &dense_bits,
                          &dense_ranks, &words_object, &ends_object, &visible_object))
        return NULL;
    Postings postings;
    if (postings_of(local, bounds, segments, dense_at, dense_bits, dense_ranks, &postings) < 0)
        return NULL;
    Py_buffer words = {0}, ends = {0}, visible = {0};
    IdBits *scratch = NULL;
    int64_t *candidates = NULL, *rows = NULL;
    KeySize *by_rows = NULL;
    Segmented cut = {0};
    PyObject *result = NULL, *every = NULL, *any = NULL;
    if (buffer_of(words_object, &words, 'q', 0, "words") < 0) goto done;
    if (buffer_of(ends_object, &ends, 'q', 0, "group ends") < 0) goto done;
    if (buffer_of(visible_object, &visible, '?', 0, "visible") < 0) goto done;
    if (visible.shape[0] > (Py_ssize_t)segments * SEGMENT_DOCS) {
        PyErr_SetString(PyExc_ValueError, "visible is longer than the postings' segments");
        goto done;
    }
    WordGroups groups = {&postings, words.buf, ends.buf, visible.buf, ends.shape[0],
                         visible.shape[0]};
    by_rows = PyMem_Malloc(((size_t)groups.group_count + 1) * sizeof(KeySize));
    if (by_rows == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* Each group's rows; some query word no chunk word holds: no chunk holds them all. */
    int some_group_empty = 0;
    for (Py_ssize_t group = 0, at = 0; group < groups.group_count; group++) {
        if (groups.end[group] < at || groups.end[group] > words.shape[0]) {
            PyErr_SetString(PyExc_ValueError, "group ends are not ascending ends of the words");
            goto done;
        }
        some_group_empty |= groups.end[group] == at;
        by_rows[group].key = group;
        by_rows[group].size = 0;
        for (; at < groups.end[group]; at++) {
            int64_t held = key_rows(&postings, groups.word[at]);
            if (held < 0) goto done;
            by_rows[group].size += held;
        }
    }
    /* Three sets: the chunks of every group so far, of the group at hand, of any group;
     * and the candidates, the visible chunks of every group so far, with their rows. */
    Py_ssize_t set_words = (groups.chunk_count + 63) / 64;
    scratch = PyMem_Calloc((size_t)set_words * 3 + 1, sizeof(IdBits));
    candidates = PyMem_Malloc(((size_t)set_words * 64 + 1) * sizeof(int64_t));
    rows = PyMem_Malloc(((size_t)set_words * 64 + 1) * sizeof(int64_t));
    if (scratch == NULL || candidates == NULL || rows == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    IdBits *in_every = scratch, *in_group = in_every + set_words,
              *in_any = in_group + set_words;
    /* The groups by their rows, fewest first: the chunks of the first are the
     * candidates, and a long posting of a later group is searched for them, not walked. */
    qsort(by_rows, (size_t)groups.group_count, sizeof(KeySize), smaller_first);
    Py_ssize_t count = 0;
    if (groups.group_count && !some_group_empty) {
        if (group_chunks(&groups, by_rows[0].key, in_every, set_words) < 0) goto done;
        count = listed_ids(in_every, set_words, groups.shown, candidates);
        for (Py_ssize_t k = 1; k < groups.group_count && count; k++) {
            segmented_release(&cut);
            if (segmented_of(candidates, count, segments, &cut) < 0) goto done;
            if (group_candidates(&groups, by_rows[k].key, &cut, candidates, count, rows,
                                 in_group, set_words) < 0)
                goto done;
            for (Py_ssize_t w = 0; w < set_words; w++) in_every[w] &= in_group[w];
            count = listed_ids(in_every, set_words, groups.shown, candidates);
        }
    }
    every = PyByteArray_FromStringAndSize((const char *)candidates,
                                          count * (Py_ssize_t)sizeof(int64_t));
    if (every == NULL) goto done;
    if (count == 0) {
        for (Py_ssize_t group = 0; group < groups.group_count; group++) {
            if (group_chunks(&groups, group, in_group, set_words) < 0) goto done;
            for (Py_ssize_t w = 0; w < set_words; w++) in_any[w] |= in_group[w];
        }
        any = visible_chunks(in_any, set_words, groups.shown);
    } else {
        any = PyByteArray_FromStringAndSize(NULL, 0);
    }
    if (any == NULL) goto done;
    result = PyTuple_Pack(2, every, any);
done:
    Py_XDECREF(every);
    Py_XDECREF(any);
    segmented_release(&cut);
    PyMem_Free(scratch);
    PyMem_Free(candidates);
    PyMem_Free(rows);
    PyMem_Free(by_rows);
    PyBuffer_Release(&words);
    PyBuffer_Release(&ends);
    PyBuffer_Release(&visible);
    postings_release(&postings);
    return result;
}

PyDoc_STRVAR(words_first_doc,
"words_first(local, bounds, segments, dense_at, dense_bits, dense_ranks, words, docs,\n"
"            scores) -> (bytearray, bytearray)\n\n"
"Word w's chunks are key w of the postings (as chunks_holding takes them). The ranking\n"
"`docs` (int64, distinct) with its `scores` (float64), the docs in the chunks of every\n"
"one of the `words` (int64) moved before the others, each part in its order: the docs\n"
"and scores, as int64 and float64.");

/* The trigram layer's ranking, its chunks holding every query word as a word of their
 * own first (`TrigramLayer.search`): its at most `depth` docs, sorted, are found in each
 * word's postings (`found_rows`), with no set the size of the corpus. */
static PyObject *words_first(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *local, *bounds, *dense_at, *dense_bits, *dense_ranks;
    PyObject *words_object, *docs_object, *scores_object;
    Py_ssize_t segments;
    if (!PyArg_ParseTuple(args, "OOnOOOOOO", &local, &bounds, &segments, &dense_at, &dense_bits,
                          &dense_ranks, &words_object, &docs_object, &scores_object))
        return NULL;
    Postings postings;
    if (postings_of(local, bounds, segments, dense_at, dense_bits, dense_ranks, &postings) < 0)
        return NULL;
    Py_buffer words = {0}, docs = {0}, scores = {0};
    PyObject *result = NULL, *docs_out = NULL, *scores_out = NULL;
    uint8_t *held = NULL;
    KeySize *by_doc = NULL;
    int64_t *sorted = NULL, *rows = NULL;
    Segmented cut = {0};
    if (buffer_of(words_object, &words, 'q', 0, "words") < 0) goto done;
    if (buffer_of(docs_object, &docs, 'q', 0, "docs") < 0) goto done;
    if (buffer_of(scores_object, &scores, 'd', 0, "scores") < 0) goto done;
    const int64_t *word = words.buf, *doc = docs.buf;
    const double *score = scores.buf;
    Py_ssize_t count = docs.shape[0];
    if (scores.shape[0] != count) {
        PyErr_SetString(PyExc_ValueError, "scores differ from the docs in length");
        goto done;
    }
    for (Py_ssize_t at = 0; at < words.shape[0]; at++)
        if (key_rows(&postings, word[at]) < 0) goto done;
    for (Py_ssize_t at = 0; at < count; at++) {
        if (doc[at] < 0 || doc[at] >= (int64_t)segments * SEGMENT_DOCS) {
            PyErr_SetString(PyExc_ValueError, "a doc id is out of range");
            goto done;
        }
    }
    held = PyMem_Malloc((size_t)count + 1);
    by_doc = PyMem_Malloc(((size_t)count + 1) * sizeof(KeySize));
    sorted = PyMem_Malloc(((size_t)count + 1) * sizeof(int64_t));
    rows = PyMem_Malloc(((size_t)count + 1) * sizeof(int64_t));
    docs_out = PyByteArray_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    scores_out = PyByteArray_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(double));
    if (held == NULL || by_doc == NULL || sorted == NULL || rows == NULL || docs_out == NULL ||
        scores_out == NULL) {
        if (docs_out != NULL && scores_out != NULL) PyErr_NoMemory();
        goto done;
    }
    /* The docs ascending (a doc as `size`, its place as `key`), cut by segment once for
     * every word. */
    for (Py_ssize_t at = 0; at < count; at++) {
        held[at] = 1;
        by_doc[at].size = doc[at];
        by_doc[at].key = at;
    }
    qsort(by_doc, (size_t)count, sizeof(KeySize), smaller_first);
    for (Py_ssize_t at = 0; at < count; at++) sorted[at] = by_doc[at].size;
    if (segmented_of(sorted, count, segments, &cut) < 0) goto done;
    for (Py_ssize_t k = 0; k < words.shape[0]; k++) {
        if (cut_rows(&postings, word[k], &cut, rows) < 0) goto done;
        for (Py_ssize_t at = 0; at < count; at++) held[by_doc[at].key] &= rows[at] >= 0;
    }
    Py_ssize_t first = 0;
    for (Py_ssize_t at = 0; at < count; at++) first += held[at];
    int64_t *docs_to = (int64_t *)PyByteArray_AsString(docs_out);
    double *scores_to = (double *)PyByteArray_AsString(scores_out);
    for (Py_ssize_t at = 0, before = 0, after = first; at < count; at++) {
        Py_ssize_t to = held[at] ? before++ : after++;
        docs_to[to] = doc[at];
        scores_to[to] = score[at];
    }
    result = PyTuple_Pack(2, docs_out, scores_out);
done:
    Py_XDECREF(docs_out);
    Py_XDECREF(scores_out);
    PyMem_Free(held);
    PyMem_Free(by_doc);
    PyMem_Free(sorted);
    PyMem_Free(rows);
    segmented_release(&cut);
    PyBuffer_Release(&words);
    PyBuffer_Release(&docs);
    PyBuffer_Release(&scores);
    postings_release(&postings);
    return result;
}

/* A fused doc: its score so far, and the rankings (bit i for ranking i) that hold it
 * and that match it in full. A slot of `FusedDocs` with `ranked` 0 is free. */
typedef struct {
    double score;
    int64_t doc;
    uint64_t ranked, matched;
} FusedDoc;

/* The fused docs of one call, an open-addressing table of a power of two slots, at
 * least twice the rows: a doc's slot is found as its rows arrive, in ranking order,
 * so its shares are added in that order with no sort. */
typedef struct {
    FusedDoc *slots;
    uint64_t mask;
} FusedDocs;

static FusedDoc *fused_doc_of(const FusedDocs *docs, int64_t doc) {
    /* Fibonacci hashing: doc ids are dense, so their high bits after the multiply spread. */
    uint64_t at = ((uint64_t)doc * 0x9E3779B97F4A7C15ull) >> 32 & docs->mask;
    while (docs->slots[at].ranked && docs->slots[at].doc != doc) at = (at + 1) & docs->mask;
    docs->slots[at].doc = doc;
    return &docs->slots[at];
}

/* numpy's pairwise summation of doubles, order for order (numpy/_core/src/umath/
 * loops_utils.h.src, `pairwise_sum`): below 8 values one by one from 0.0, up to 128 in
 * eight interleaved partial sums, longer halved at a multiple of 8. It is what
 * `np.add.reduce` adds a contiguous float64 array with, so sums match numpy's to the bit. */
static double pairwise_sum(const double *values, Py_ssize_t count) {
    if (count < 8) {
        double sum = 0.0;
        for (Py_ssize_t at = 0; at < count; at++) sum += values[at];
        return sum;
    }
    if (count <= 128) {
        double partial[8];
        for (int lane = 0; lane < 8; lane++) partial[lane] = values[lane];
        Py_ssize_t at = 8;
        for (; at < count - count % 8; at += 8)
            for (int lane = 0; lane < 8; lane++) partial[lane] += values[at + lane];
        double sum = ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
                     ((partial[4] + partial[5]) + (partial[6] + partial[7]));
        for (; at < count; at++) sum += values[at];
        return sum;
    }
    Py_ssize_t half = count / 2;
    half -= half % 8;
    return pairwise_sum(values, half) + pairwise_sum(values + half, count - half);
}

/* The scores' population standard deviation as numpy's `std` computes it, to the bit:
 * the mean by pairwise summation over the count, then the squared deviations summed the
 * same way, over the count, square-rooted; 0 for no scores. `squares` holds `count`. */
static double spread_of(const double *scores, Py_ssize_t count, double *squares) {
    if (count == 0) return 0.0;
    double mean = pairwise_sum(scores, count) / (double)count;
    for (Py_ssize_t at = 0; at < count; at++) {
        double deviation = scores[at] - mean;
        squares[at] = deviation * deviation;
    }
    return sqrt(pairwise_sum(squares, count) / (double)count);
}

/* Ranking `layer`'s rows added to `docs`: the doc at rank r (from 1) gets
 * weight * (1 / (k + r) + gap_weight * gap), the RRF share (Cormack et al. 2009) plus
 * its score gap: its score above the ranking's lowest over the ranking's spread
 * (`spread_of`; z-score normalisation shifted to the lowest, Montague and Aslam 2001; no
 * gaps for a spread of 0). `squares` holds `count`. ValueError (-1) when the ranking
 * lists a doc twice. */
static int ranking_added(FusedDocs *docs, Py_ssize_t layer, const int64_t *ranked,
                         const double *scores, Py_ssize_t count, double weight, Py_ssize_t full,
                         Py_ssize_t k, double gap_weight, double *squares) {
    double lowest = INFINITY, spread = 0.0;
    if (gap_weight != 0.0) {
        for (Py_ssize_t at = 0; at < count; at++)
            lowest = scores[at] < lowest ? scores[at] : lowest;
        spread = spread_of(scores, count, squares);
    }
    uint64_t bit = (uint64_t)1 << layer;
    for (Py_ssize_t at = 0; at < count; at++) {
        double share = 1.0 / (double)(k + at + 1);
        if (gap_weight != 0.0) {
            double gap = spread <= 0.0 ? 0.0 : (scores[at] - lowest) / spread;
            share = share + gap_weight * gap;
        }
        FusedDoc *doc = fused_doc_of(docs, ranked[at]);
        if (doc->ranked & bit) {
            PyErr_SetString(PyExc_ValueError, "a ranking lists a doc twice");
            return -1;
        }
        doc->score += weight * share;
        doc->ranked |= bit;
        doc->matched |= at < full ? bit : 0;
    }
    return 0;
}

PyDoc_STRVAR(fused_doc,
"fused(rankings, k, gap_weight, limit) -> (list[int], list[float], list[int])\n\n"
"Weighted Reciprocal Rank Fusion of at most 63 rankings, each a tuple (docs, scores,\n"
"weight, full): docs (int64, each once) best first, their scores (float64; read only\n"
"when gap_weight is not 0), the ranking's weight, and how many of its first docs match\n"
"the query in full. The doc at rank r (from 1) gets weight * (1 / (k + r) + gap_weight\n"
"* gap), gap = (score - the lowest score) / spread, the spread being the scores'\n"
"population standard deviation as numpy's std computes it (no gaps when it is 0),\n"
"added to its fused score from +0.0 ranking by ranking. Returns the best `limit` docs\n"
"(all when limit < 0), best first, equal scores by doc id: their ids, fused scores and\n"
"the rankings that found each (bit i for ranking i): those matching it in full when\n"
"any does, else every ranking holding it.");

static PyObject *fused(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *rankings_object;
    Py_ssize_t k, limit;
    double gap_weight;
    if (!PyArg_ParseTuple(args, "Ondn", &rankings_object, &k, &gap_weight, &limit)) return NULL;
    if (k < 0 || k > MOST_RRF_K) {
        PyErr_SetString(PyExc_ValueError, "the RRF constant is negative or too large");
        return NULL;
    }
    if (!isfinite(gap_weight)) {
        PyErr_SetString(PyExc_ValueError, "the gap weight is not finite");
        return NULL;
    }
    /* A tuple of its own: reading a ranking's weight may run Python code (__float__), which
     * must not be able to shrink what is being read. */
    PyObject *rankings = PySequence_Tuple(rankings_object);
    if (rankings == NULL) return NULL;
    Py_ssize_t layer_count = PyTuple_Size(rankings), count = 0, longest = 0, held = 0;
    Py_buffer *views = PyMem_Calloc((size_t)layer_count * 2 + 1, sizeof(Py_buffer));
    double *weights = PyMem_Calloc((size_t)layer_count + 1, sizeof(double));
    Py_ssize_t *full = PyMem_Calloc((size_t)layer_count + 1, sizeof(Py_ssize_t));
    FusedDocs docs = {NULL, 0};
    Scored *heap = NULL;
    double *squares = NULL;
    PyObject *ids = NULL, *scores = NULL, *found = NULL, *result = NULL;
    if (views == NULL || weights == NULL || full == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (layer_count > 63) {
        PyErr_SetString(PyExc_ValueError, "more than 63 rankings");
        goto done;
    }
    for (; held < layer_count; held++) {
        PyObject *docs_object, *scores_object, *ranking = PyTuple_GetItem(rankings, held);
        if (ranking == NULL) goto done;
        if (!PyTuple_Check(ranking)) {
            PyErr_SetString(PyExc_TypeError,
                            "a ranking: expected a tuple (docs, scores, weight, full)");
            goto done;
        }
        if (!PyArg_ParseTuple(ranking, "OOdn;a ranking", &docs_object, &scores_object,
                              &weights[held], &full[held]))
            goto done;
        if (buffer_of(docs_object, &views[2 * held], 'q', 0, "docs") < 0) goto done;
        if (buffer_of(scores_object, &views[2 * held + 1], 'd', 0, "scores") < 0) {
            PyBuffer_Release(&views[2 * held]);
            goto done;
        }
        count += views[2 * held].shape[0];
        longest = views[2 * held].shape[0] > longest ? views[2 * held].shape[0] : longest;
    }
    for (Py_ssize_t layer = 0; layer < layer_count; layer++) {
        if (!isfinite(weights[layer])) {
            PyErr_SetString(PyExc_ValueError, "a ranking's weight is not finite");
            goto done;
        }
        if (full[layer] < 0) {
            PyErr_SetString(PyExc_ValueError, "a negative full-match count");
            goto done;
        }
        if (gap_weight == 0.0) continue;
        if (views[2 * layer + 1].shape[0] != views[2 * layer].shape[0]) {
            PyErr_SetString(PyExc_ValueError, "scores differ from the docs in length");
            goto done;
        }
        const double *layer_scores = views[2 * layer + 1].buf;
        for (Py_ssize_t at = 0; at < views[2 * layer + 1].shape[0]; at++) {
            if (!isfinite(layer_scores[at])) {
                PyErr_SetString(PyExc_ValueError, "a ranking's scores are not finite");
                goto done;
            }
        }
    }
    uint64_t capacity = 16;
    while (capacity < 2 * (uint64_t)count) capacity <<= 1;
    docs.slots = PyMem_Calloc((size_t)capacity, sizeof(FusedDoc));
    docs.mask = capacity - 1;
    squares = PyMem_Malloc(((size_t)longest + 1) * sizeof(double));
    if (docs.slots == NULL || squares == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t layer = 0; layer < layer_count; layer++)
        if (ranking_added(&docs, layer, views[2 * layer].buf, views[2 * layer + 1].buf,
                          views[2 * layer].shape[0], weights[layer], full[layer], k, gap_weight,
                          squares) < 0)
            goto done;
    /* The best `limit` (equal scores by doc id), best first. */
    Py_ssize_t depth = limit >= 0 && limit < count ? limit : count, size = 0;
    heap = PyMem_Calloc((size_t)depth + 1, sizeof(Scored));
    if (heap == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (uint64_t at = 0; at < capacity; at++)
        if (docs.slots[at].ranked) {
            Scored scored = {docs.slots[at].score, docs.slots[at].doc};
            size = heap_pushed(heap, size, depth, scored);
        }
    qsort(heap, (size_t)size, sizeof(Scored), best_first);
    /* Lists, not arrays: a query reads its ten docs one by one, and numpy's `tolist` of
     * each column cost more than the fusion itself. */
    ids = PyList_New(size);
    scores = PyList_New(size);
    found = PyList_New(size);
    if (ids == NULL || scores == NULL || found == NULL) goto done;
    for (Py_ssize_t at = 0; at < size; at++) {
        const FusedDoc *doc = fused_doc_of(&docs, heap[at].doc);
        PyObject *id = PyLong_FromLongLong(doc->doc);
        PyObject *score = PyFloat_FromDouble(doc->score);
        PyObject *bits = PyLong_FromUnsignedLongLong(doc->matched ? doc->matched : doc->ranked);
        if (id == NULL || score == NULL || bits == NULL) {
            Py_XDECREF(id);
            Py_XDECREF(score);
            Py_XDECREF(bits);
            goto done;
        }
        /* Each steals its item, even on failure (which a fresh list of this size has none). */
        if (PyList_SetItem(ids, at, id) < 0 || PyList_SetItem(scores, at, score) < 0 ||
            PyList_SetItem(found, at, bits) < 0)
            goto done;
    }
    result = PyTuple_Pack(3, ids, scores, found);
done:
    for (Py_ssize_t layer = 0; layer < held; layer++) {
        PyBuffer_Release(&views[2 * layer]);
        PyBuffer_Release(&views[2 * layer + 1]);
    }
    Py_XDECREF(ids);
    Py_XDECREF(scores);
    Py_XDECREF(found);
    PyMem_Free(views);
    PyMem_Free(weights);
    PyMem_Free(full);
    PyMem_Free(docs.slots);
    PyMem_Free(heap);
    PyMem_Free(squares);
    Py_DECREF(rankings);
    return result;
}

/* The positions in `known` (ascending int64) of the word's distinct trigram keys, each
 * three code points packed as c0 << 42 | c1 << 21 | c2, ascending by key, -1 for a key
 * `known` does not hold: a PyMem array in `*ids` and their count, or -1 with
 * MemoryError. */
static Py_ssize_t looked_up_trigrams(const int64_t *known, Py_ssize_t known_count,
                                     PyObject *word, int64_t **ids) {
    Py_ssize_t length = PyUnicode_GetLength(word), count = length > 2 ? length - 2 : 0;
    int64_t *wanted = PyMem_Malloc((size_t)count * sizeof(int64_t) + 1);
    *ids = wanted;
    if (length < 0) return -1;
    if (wanted == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    /* The code points, each read once (the stable ABI has no direct access to them). */
    Py_UCS4 previous = 0, last = 0;
    for (Py_ssize_t at = 0; at < length; at++) {
        Py_UCS4 point = PyUnicode_ReadChar(word, at);
        if (point == (Py_UCS4)-1 && PyErr_Occurred()) return -1;
        if (at >= 2)
            wanted[at - 2] = (int64_t)previous << 42 | (int64_t)last << 21 | (int64_t)point;
        previous = last;
        last = point;
    }
    qsort(wanted, (size_t)count, sizeof(int64_t), ascending_ids);
    Py_ssize_t distinct = 0;
    for (Py_ssize_t at = 0; at < count; at++)
        if (!distinct || wanted[distinct - 1] != wanted[at]) wanted[distinct++] = wanted[at];
    for (Py_ssize_t at = 0; at < distinct; at++) {
        /* The first key not below the wanted one. */
        Py_ssize_t low = 0, high = known_count;
        while (low < high) {
            Py_ssize_t middle = low + (high - low) / 2;
            if (known[middle] < wanted[at]) low = middle + 1;
            else high = middle;
        }
        wanted[at] = low < known_count && known[low] == wanted[at] ? low : -1;
    }
    return distinct;
}

PyDoc_STRVAR(trigram_ids_doc,
"trigram_ids(keys, word) -> list[int]\n\n"
"The positions in `keys` (ascending int64) of the word's distinct trigram keys, each\n"
"three code points packed as c0 << 42 | c1 << 21 | c2, ascending by key; -1 for a key\n"
"`keys` does not hold.");

static PyObject *trigram_ids(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *keys_object, *word;
    if (!PyArg_ParseTuple(args, "OU", &keys_object, &word)) return NULL;
    Py_buffer keys;
    if (buffer_of(keys_object, &keys, 'q', 0, "keys") < 0) return NULL;
    int64_t *found = NULL;
    PyObject *ids = NULL;
    Py_ssize_t count = looked_up_trigrams(keys.buf, keys.shape[0], word, &found);
    if (count < 0) goto done;
    ids = PyList_New(count);
    for (Py_ssize_t at = 0; ids != NULL && at < count; at++) {
        PyObject *id = PyLong_FromLongLong(found[at]);
        if (id == NULL) {
            Py_CLEAR(ids);
            break;
        }
        if (PyList_SetItem(ids, at, id) < 0) {
            Py_CLEAR(ids);
            break;
        }
    }
done:
    PyMem_Free(found);
    PyBuffer_Release(&keys);
    return ids;
}

PyDoc_STRVAR(words_containing_doc,
"words_containing(keys, local, bounds, segments, dense_at, dense_bits, dense_ranks, words,\n"
"                 word, few) -> (bytearray, int)\n\n"
"The ids (int64, ascending) of the `words` (a list of str) holding `word` as a\n"
"substring: those in the postings of all the word's trigrams (`keys` ascending, key k's\n"
"word ids posting k of local and bounds), intersected from the shortest posting up\n"
"(ties by key) until at most `few` are left, then checked; and the id of `word`\n"
"itself among them (the one as long), or -1.");

static PyObject *words_containing(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *keys_object, *local, *bounds, *dense_at, *dense_bits, *dense_ranks, *words, *word;
    Py_ssize_t segments, few;
    if (!PyArg_ParseTuple(args, "OOOnOOOO!Un", &keys_object, &local, &bounds, &segments,
                          &dense_at, &dense_bits, &dense_ranks,
                          &PyList_Type, &words, &word, &few))
        return NULL;
    Postings postings;
    if (postings_of(local, bounds, segments, dense_at, dense_bits, dense_ranks, &postings) < 0)
        return NULL;
    Py_buffer keys = {0};
    int64_t *trigrams = NULL, *found = NULL;
    PyObject *result = NULL;
    if (buffer_of(keys_object, &keys, 'q', 0, "keys") < 0) goto done;
    Py_ssize_t trigram_count = looked_up_trigrams(keys.buf, keys.shape[0], word, &trigrams);
    if (trigram_count < 0) goto done;
    Py_ssize_t count = narrowed_ids(&postings, trigrams, trigram_count, few, &found);
    if (count < 0) goto done;
    /* Holding the word's trigrams is not holding the word ("cabca" and "abcab"). */
    Py_ssize_t kept = 0;
    int64_t own = -1;
    Py_ssize_t word_length = PyUnicode_GetLength(word);
    for (Py_ssize_t at = 0; at < count; at++) {
        /* The list's size is read each time: nothing below runs Python code, but a list
         * is never trusted to keep its length. */
        if (found[at] >= PyList_Size(words)) {
            PyErr_SetString(PyExc_ValueError, "a word id is out of range");
            goto done;
        }
        PyObject *candidate = PyList_GetItem(words, found[at]);
        if (candidate == NULL) goto done;
        if (!PyUnicode_Check(candidate)) {
            PyErr_SetString(PyExc_TypeError, "the words must be str");
            goto done;
        }
        int holds = PyUnicode_Contains(candidate, word);
        if (holds < 0) goto done;
        /* A word holding `word` and as long is `word`. */
        if (holds && PyUnicode_GetLength(candidate) == word_length) own = found[at];
        found[kept] = found[at];
        kept += holds;
    }
    PyObject *ids =
        PyByteArray_FromStringAndSize((const char *)found, kept * (Py_ssize_t)sizeof(int64_t));
    PyObject *own_id = PyLong_FromLongLong(own);
    if (ids != NULL && own_id != NULL) result = PyTuple_Pack(2, ids, own_id);
    Py_XDECREF(ids);
    Py_XDECREF(own_id);
done:
    PyMem_Free(trigrams);
    PyMem_Free(found);
    PyBuffer_Release(&keys);
    postings_release(&postings);
    return result;
}

PyDoc_STRVAR(known_terms_doc,
"known_terms(bounds, segments, terms, query_weights, size)\n"
"    -> (bytearray, bytearray, bytearray)\n\n"
"Of the `terms` (a list of int, a negative one held nowhere), those whose postings\n"
"hold a doc, in order, as int64; with each one's IDF log((size + 1) / df) and its\n"
"query weight (the list `query_weights`, one a term) as float64: the three arrays a\n"
"compiled ranking takes. The IDF is bm25.idf's, the same division and libm log.");

/* A query's terms as the rankings take them. In Python a term's rows and IDF cost
 * 0.4 us each: a trigram query's 30-40 terms were 12-15 us a ranking, more than
 * ranking a few candidates over them (docs/performance-history.md, round 8). */
static PyObject *known_terms(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *bounds_object, *terms_object, *weights_object;
    Py_ssize_t segments, size;
    if (!PyArg_ParseTuple(args, "OnOOn", &bounds_object, &segments, &terms_object,
                          &weights_object, &size))
        return NULL;
    Py_buffer bounds;
    if (buffer_of(bounds_object, &bounds, 'q', 0, "id bounds") < 0) return NULL;
    PyObject *terms = NULL, *weights = NULL, *result = NULL;
    int64_t *known = NULL;
    double *idfs = NULL, *query_weights = NULL;
    /* Tuples of their own: reading an item may run Python code (__index__, __float__),
     * which must not be able to shrink what is being read. */
    terms = PySequence_Tuple(terms_object);
    if (terms == NULL) goto done;
    weights = PySequence_Tuple(weights_object);
    if (weights == NULL) goto done;
    Py_ssize_t count = PyTuple_Size(terms);
    if (PyTuple_Size(weights) != count) {
        PyErr_SetString(PyExc_ValueError, "terms and query weights differ in length");
        goto done;
    }
    if (segments < 1 || segments > MOST_SEGMENTS || bounds.shape[0] < 1 ||
        (bounds.shape[0] - 1) % segments != 0) {
        PyErr_SetString(PyExc_ValueError, "id bounds do not match the segment count");
        goto done;
    }
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "a negative corpus size");
        goto done;
    }
    const int64_t *runs = bounds.buf;
    int64_t keys = (bounds.shape[0] - 1) / segments;
    known = PyMem_Malloc(((size_t)count + 1) * sizeof(int64_t));
    idfs = PyMem_Malloc(((size_t)count + 1) * sizeof(double));
    query_weights = PyMem_Malloc(((size_t)count + 1) * sizeof(double));
    if (known == NULL || idfs == NULL || query_weights == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t kept = 0;
    for (Py_ssize_t at = 0; at < count; at++) {
        long long term = PyLong_AsLongLong(PyTuple_GetItem(terms, at));
        if (term == -1 && PyErr_Occurred()) goto done;
        double weight = PyFloat_AsDouble(PyTuple_GetItem(weights, at));
        if (weight == -1.0 && PyErr_Occurred()) goto done;
        if (term < 0) continue;
        if (term >= keys) {
            PyErr_Format(PyExc_ValueError, "posting key %lld out of range", term);
            goto done;
        }
        int64_t start = runs[term * segments], end = runs[(term + 1) * segments];
        /* Checked before the subtraction: damaged bounds must not overflow it. */
        if (start < 0 || end < start) {
            PyErr_SetString(PyExc_ValueError, "id bounds are not ascending");
            goto done;
        }
        int64_t rows = end - start;
        /* A term with an empty posting adds nothing (and has no IDF). */
        if (rows == 0) continue;
        known[kept] = term;
        idfs[kept] = log(((double)size + 1.0) / (double)rows);
        query_weights[kept] = weight;
        kept++;
    }
    PyObject *arrays[3] = {
        PyByteArray_FromStringAndSize((const char *)known, kept * (Py_ssize_t)sizeof(int64_t)),
        PyByteArray_FromStringAndSize((const char *)idfs, kept * (Py_ssize_t)sizeof(double)),
        PyByteArray_FromStringAndSize((const char *)query_weights,
                                      kept * (Py_ssize_t)sizeof(double)),
    };
    if (arrays[0] != NULL && arrays[1] != NULL && arrays[2] != NULL)
        result = PyTuple_Pack(3, arrays[0], arrays[1], arrays[2]);
    for (int at = 0; at < 3; at++) Py_XDECREF(arrays[at]);
done:
    PyMem_Free(known);
    PyMem_Free(idfs);
    PyMem_Free(query_weights);
    Py_XDECREF(terms);
    Py_XDECREF(weights);
    PyBuffer_Release(&bounds);
    return result;
}

static PyMethodDef methods[] = {
    {"best_of", best_of, METH_VARARGS, best_of_doc},
    {"every_then_any", every_then_any, METH_VARARGS, every_then_any_doc},
    {"chunks_holding", chunks_holding, METH_VARARGS, chunks_holding_doc},
    {"words_first", words_first, METH_VARARGS, words_first_doc},
    {"add_scores", add_scores, METH_VARARGS, add_scores_doc},
    {"fused", fused, METH_VARARGS, fused_doc},
    {"trigram_ids", trigram_ids, METH_VARARGS, trigram_ids_doc},
    {"words_containing", words_containing, METH_VARARGS, words_containing_doc},
    {"known_terms", known_terms, METH_VARARGS, known_terms_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_postings",
    "Walks of segmented postings in compiled code: BM25 scores and intersections.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__postings(void) { return PyModule_Create(&module_definition); }
