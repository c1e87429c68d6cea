/* Walks of segmented postings (segmented_ids.py) in compiled code: BM25 scores of
 * candidate docs, and the intersection of postings.
 *
 * Key k's ids in segment s are local[bounds[k * S + s] : bounds[k * S + s + 1]] plus
 * s << 16, ascending within a run. The arrays come from numpy through the buffer
 * protocol, so building needs only a C compiler and Python's headers.
 *
 * Arrays read from the index cache are checked when it loads (SegmentedIds.stored), but
 * every index here is checked again against the buffers' lengths: a damaged array makes
 * a ValueError, never a read outside the buffer.
 *
 * Scores must be the bits numpy computed before this module existed: each term's share
 * is tf * (k1 + 1) / (norm + tf) * idf * query_weight, evaluated in that order in
 * float64 and added to the candidate's total term by term. Compiled with
 * -ffp-contract=off, so no multiply and add are fused.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define SEGMENT_BITS 16
#define SEGMENT_DOCS ((int64_t)1 << SEGMENT_BITS)

typedef struct {
    Py_buffer local, bounds;
    const uint16_t *ids;
    const int64_t *runs;
    Py_ssize_t id_count, run_count, segments;
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
    return 0;
}

static void postings_release(Postings *postings) {
    PyBuffer_Release(&postings->local);
    PyBuffer_Release(&postings->bounds);
}

static int postings_of(PyObject *local, PyObject *bounds, Py_ssize_t segments,
                       Postings *postings) {
    if (buffer_of(local, &postings->local, 'H', 0, "local ids") < 0) return -1;
    if (buffer_of(bounds, &postings->bounds, 'q', 0, "id bounds") < 0) {
        PyBuffer_Release(&postings->local);
        return -1;
    }
    postings->ids = postings->local.buf;
    postings->runs = postings->bounds.buf;
    postings->id_count = postings->local.shape[0];
    postings->run_count = postings->bounds.shape[0];
    postings->segments = segments;
    if (segments < 1 || (postings->run_count - 1) % segments != 0) {
        PyErr_SetString(PyExc_ValueError, "id bounds do not match the segment count");
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

/* What `galloped` finds, for a walk that takes long strides (few candidates in a long
 * run): a first probe where the ids' range puts `wanted` (interpolation), then
 * galloping from there. A query's trigrams lie in most chunks, and the candidates
 * hold them all, so the probe lands within a few rows: a cache miss or two where
 * galloping across 10^3 rows makes about 20. */
static int64_t interpolated(const uint16_t *ids, int64_t row, int64_t end, uint16_t wanted) {
    if (row >= end || ids[row] >= wanted) return row;
    if (ids[end - 1] < wanted) return end;
    /* ids[row] < wanted <= ids[end - 1] */
    int64_t last = end - 1;
    int64_t guess = row + 1 + (int64_t)((double)(wanted - ids[row]) * (double)(last - row - 1) /
                                        (double)(ids[last] - ids[row]));
    if (guess > last) guess = last;
    if (ids[guess] < wanted) return galloped(ids, guess, end, wanted);
    /* Gallop down from the guess: ids[high] >= wanted, ids[row] < wanted. */
    int64_t high = guess, step = 1;
    while (high - step > row && ids[high - step] >= wanted) {
        high -= step;
        step <<= 1;
    }
    return galloped(ids, high - step > row ? high - step : row, high, wanted);
}

/* Whether a run of `rows` rows is best walked by `walkers` ascending ids with
 * `interpolated`: when it has over 256 rows for each. Replaying a compound corpus's
 * queries at 10^5 chunks, interpolation halved the sparse walks' time and doubled the
 * dense ones'. */
static int sparse_walk(int64_t rows, Py_ssize_t walkers) { return rows > 256 * (int64_t)walkers; }

/* The first row in [row, end) whose id is at least `wanted`, by the walk chosen. */
static inline int64_t seek(int sparse, const uint16_t *ids, int64_t row, int64_t end,
                           uint16_t wanted) {
    return sparse ? interpolated(ids, row, end, wanted) : galloped(ids, row, end, wanted);
}

typedef double (*WeightReader)(const void *, int64_t);
static double weight_u8(const void *weights, int64_t row) { return ((const uint8_t *)weights)[row]; }
static double weight_u16(const void *weights, int64_t row) { return ((const uint16_t *)weights)[row]; }
static double weight_f32(const void *weights, int64_t row) { return ((const float *)weights)[row]; }
static double weight_f64(const void *weights, int64_t row) { return ((const double *)weights)[row]; }

static WeightReader weight_reader(const char *format) {
    if (format[0] == '@' || format[0] == '=') format++;
    if (strcmp(format, "B") == 0) return weight_u8;
    if (strcmp(format, "H") == 0) return weight_u16;
    if (strcmp(format, "f") == 0) return weight_f32;
    if (strcmp(format, "d") == 0) return weight_f64;
    return NULL;
}

PyDoc_STRVAR(add_scores_doc,
"add_scores(local, bounds, segments, weights, norms, terms, idfs, query_weights, k1,\n"
"           candidates, totals)\n\n"
"Add each term's BM25 share to the totals of the candidates (doc ids, fastest\n"
"ascending) its posting holds, term after term:\n"
"tf * (k1 + 1) / (norm + tf) * idf * query weight.");

static PyObject *add_scores(PyObject *module, PyObject *args) {
    PyObject *local, *bounds, *weights_object, *norms_object, *terms_object, *idfs_object;
    PyObject *query_weights_object, *candidates_object, *totals_object;
    Py_ssize_t segments;
    double k1;
    if (!PyArg_ParseTuple(args, "OOnOOOOOdOO", &local, &bounds, &segments, &weights_object,
                          &norms_object, &terms_object, &idfs_object, &query_weights_object,
                          &k1, &candidates_object, &totals_object))
        return NULL;
    Postings postings;
    if (postings_of(local, bounds, segments, &postings) < 0) return NULL;
    Py_buffer weights = {0}, norms = {0}, terms = {0}, idfs = {0}, query_weights = {0};
    Py_buffer candidates = {0}, totals = {0};
    Py_ssize_t *per_segment = NULL;
    PyObject *result = NULL;
    if (PyObject_GetBuffer(weights_object, &weights, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        goto done;
    WeightReader read_weight = weight_reader(weights.format);
    if (weights.ndim != 1 || read_weight == NULL || weights.shape[0] != postings.id_count) {
        PyErr_SetString(PyExc_ValueError, "posting weights do not match the doc ids");
        goto done;
    }
    if (buffer_of(norms_object, &norms, 'd', 0, "norms") < 0) goto done;
    if (buffer_of(terms_object, &terms, 'q', 0, "terms") < 0) goto done;
    if (buffer_of(idfs_object, &idfs, 'd', 0, "idfs") < 0) goto done;
    if (buffer_of(query_weights_object, &query_weights, 'd', 0, "query weights") < 0) goto done;
    if (buffer_of(candidates_object, &candidates, 'q', 0, "candidates") < 0) goto done;
    if (buffer_of(totals_object, &totals, 'd', 1, "totals") < 0) goto done;
    Py_ssize_t term_count = terms.shape[0], candidate_count = candidates.shape[0];
    if (idfs.shape[0] != term_count || query_weights.shape[0] != term_count ||
        totals.shape[0] != candidate_count) {
        PyErr_SetString(PyExc_ValueError, "terms, idfs, query weights or totals differ in length");
        goto done;
    }
    const int64_t *docs = candidates.buf;
    const double *norm = norms.buf;
    Py_ssize_t doc_count = norms.shape[0];
    per_segment = PyMem_Calloc((size_t)segments, sizeof(Py_ssize_t));
    if (per_segment == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t at = 0; at < candidate_count; at++) {
        if (docs[at] < 0 || docs[at] >= doc_count || docs[at] >> SEGMENT_BITS >= segments) {
            PyErr_SetString(PyExc_ValueError, "a candidate is not a doc id of the corpus");
            goto done;
        }
        per_segment[docs[at] >> SEGMENT_BITS]++;
    }
    const int64_t *term = terms.buf;
    const double *idf = idfs.buf, *query_weight = query_weights.buf;
    double *total = totals.buf, k1_plus_1 = k1 + 1;
    for (Py_ssize_t t = 0; t < term_count; t++) {
        /* Ascending candidates walk each segment's run once; a candidate at or below
         * the one before starts the walk of its run again. */
        int64_t row = 0, end = 0, previous = -1;
        int sparse = 0;
        for (Py_ssize_t at = 0; at < candidate_count; previous = docs[at], at++) {
            int64_t segment = docs[at] >> SEGMENT_BITS;
            uint16_t wanted = (uint16_t)(docs[at] & 0xFFFF);
            if (docs[at] <= previous || segment != previous >> SEGMENT_BITS) {
                if (run_of(&postings, term[t], segment, &row, &end) < 0) goto done;
                sparse = sparse_walk(end - row, per_segment[segment]);
            }
            row = seek(sparse, postings.ids, row, end, wanted);
            if (row == end || postings.ids[row] != wanted) continue;
            double tf = read_weight(weights.buf, row);
            double share = tf * k1_plus_1;
            share /= norm[docs[at]] + tf;
            share *= idf[t];
            share *= query_weight[t];
            total[at] += share;
        }
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyMem_Free(per_segment);
    PyBuffer_Release(&weights);
    PyBuffer_Release(&norms);
    PyBuffer_Release(&terms);
    PyBuffer_Release(&idfs);
    PyBuffer_Release(&query_weights);
    PyBuffer_Release(&candidates);
    PyBuffer_Release(&totals);
    postings_release(&postings);
    return result;
}

/* Keep the ids of found[0:count) (ascending) that key's posting holds; their count. */
static Py_ssize_t kept_in(const Postings *postings, int64_t key, int64_t *found,
                          Py_ssize_t count) {
    Py_ssize_t kept = 0, at = 0;
    for (Py_ssize_t segment = 0; segment < postings->segments && at < count; segment++) {
        int64_t row, end, base = (int64_t)segment << SEGMENT_BITS;
        if (run_of(postings, key, segment, &row, &end) < 0) return -1;
        Py_ssize_t stop = at;
        while (stop < count && found[stop] < base + SEGMENT_DOCS) stop++;
        int sparse = sparse_walk(end - row, stop - at);
        for (; at < stop; at++) {
            uint16_t wanted = (uint16_t)(found[at] - base);
            row = seek(sparse, postings->ids, row, end, wanted);
            if (row < end && postings->ids[row] == wanted) found[kept++] = found[at];
        }
    }
    return kept;
}

PyDoc_STRVAR(narrowed_doc,
"narrowed(local, bounds, segments, keys, few) -> bytearray\n\n"
"The ids (int64, ascending) in the postings of `keys` (ascending, distinct, ordered\n"
"rarest first by the caller), intersecting from the first key on and stopping once at\n"
"most `few` are left.");

static PyObject *narrowed(PyObject *module, PyObject *args) {
    PyObject *local, *bounds, *keys_object;
    Py_ssize_t segments, few;
    if (!PyArg_ParseTuple(args, "OOnOn", &local, &bounds, &segments, &keys_object, &few))
        return NULL;
    Postings postings;
    if (postings_of(local, bounds, segments, &postings) < 0) return NULL;
    Py_buffer keys = {0};
    PyObject *result = NULL, *out = NULL;
    if (buffer_of(keys_object, &keys, 'q', 0, "keys") < 0) goto done;
    const int64_t *key = keys.buf;
    Py_ssize_t key_count = keys.shape[0];
    if (key_count == 0) {
        result = PyByteArray_FromStringAndSize(NULL, 0);
        goto done;
    }
    int64_t first_start, first_end, last_start, last_end;
    if (run_of(&postings, key[0], 0, &first_start, &first_end) < 0) goto done;
    if (run_of(&postings, key[0], segments - 1, &last_start, &last_end) < 0) goto done;
    Py_ssize_t count = (Py_ssize_t)(last_end - first_start);
    if (count < 0) {
        PyErr_SetString(PyExc_ValueError, "id bounds are not ascending");
        goto done;
    }
    out = PyByteArray_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    if (out == NULL) goto done;
    int64_t *found = (int64_t *)PyByteArray_AS_STRING(out);
    Py_ssize_t filled = 0;
    for (Py_ssize_t segment = 0; segment < segments; segment++) {
        int64_t row, end, base = (int64_t)segment << SEGMENT_BITS;
        if (run_of(&postings, key[0], segment, &row, &end) < 0) goto done;
        if (filled + (end - row) > count) {
            PyErr_SetString(PyExc_ValueError, "id bounds are not ascending");
            goto done;
        }
        for (; row < end; row++) found[filled++] = base + postings.ids[row];
    }
    for (Py_ssize_t k = 1; k < key_count && filled > few; k++) {
        filled = kept_in(&postings, key[k], found, filled);
        if (filled < 0) goto done;
    }
    if (PyByteArray_Resize(out, filled * (Py_ssize_t)sizeof(int64_t)) < 0) goto done;
    result = out;
    out = NULL;
done:
    Py_XDECREF(out);
    PyBuffer_Release(&keys);
    postings_release(&postings);
    return result;
}

static int ascending_ids(const void *left, const void *right) {
    int64_t a = *(const int64_t *)left, b = *(const int64_t *)right;
    return (a > b) - (a < b);
}

/* Sort ids[0:count), drop repeats and ids `visible` does not flag; the count kept. */
static Py_ssize_t sorted_visible(int64_t *ids, Py_ssize_t count, const uint8_t *visible) {
    qsort(ids, (size_t)count, sizeof(int64_t), ascending_ids);
    Py_ssize_t kept = 0;
    for (Py_ssize_t at = 0; at < count; at++)
        if (visible[ids[at]] && (kept == 0 || ids[kept - 1] != ids[at])) ids[kept++] = ids[at];
    return kept;
}

/* A growing array of int64 ids, kept as a bytearray for numpy to wrap. */
typedef struct {
    PyObject *bytes;
    Py_ssize_t count, room;
} IdList;

static int id_list_push(IdList *list, int64_t id) {
    if (list->count == list->room) {
        Py_ssize_t room = list->room ? 2 * list->room : 64;
        if (PyByteArray_Resize(list->bytes, room * (Py_ssize_t)sizeof(int64_t)) < 0) return -1;
        list->room = room;
    }
    ((int64_t *)PyByteArray_AS_STRING(list->bytes))[list->count++] = id;
    return 0;
}

static PyObject *id_list_done(IdList *list, const uint8_t *visible) {
    Py_ssize_t kept = 0;
    if (list->count)
        kept = sorted_visible((int64_t *)PyByteArray_AS_STRING(list->bytes), list->count, visible);
    if (PyByteArray_Resize(list->bytes, kept * (Py_ssize_t)sizeof(int64_t)) < 0) return NULL;
    PyObject *bytes = list->bytes;
    list->bytes = NULL;
    return bytes;
}

PyDoc_STRVAR(chunks_holding_doc,
"chunks_holding(offsets, chunks, words, group_ends, visible) -> (bytearray, bytearray)\n\n"
"Word w is in chunks[offsets[w]:offsets[w + 1]]; the words are grouped, group g being\n"
"words[group_ends[g - 1]:group_ends[g]] (the words holding one query word). The\n"
"visible chunks (int64, ascending) holding a word of every group, and when there are\n"
"none, those holding a word of any group (else an empty second list).");

static PyObject *chunks_holding(PyObject *module, PyObject *args) {
    PyObject *offsets_object, *chunks_object, *words_object, *ends_object, *visible_object;
    if (!PyArg_ParseTuple(args, "OOOOO", &offsets_object, &chunks_object, &words_object,
                          &ends_object, &visible_object))
        return NULL;
    Py_buffer offsets = {0}, chunks = {0}, words = {0}, ends = {0}, visible = {0};
    uint32_t *held_groups = NULL;
    IdList every = {NULL, 0, 0}, any = {NULL, 0, 0};
    PyObject *result = NULL, *every_bytes = NULL, *any_bytes = NULL;
    if (buffer_of(offsets_object, &offsets, 'q', 0, "offsets") < 0) goto done;
    if (buffer_of(chunks_object, &chunks, 'i', 0, "chunks") < 0) goto done;
    if (buffer_of(words_object, &words, 'q', 0, "words") < 0) goto done;
    if (buffer_of(ends_object, &ends, 'q', 0, "group ends") < 0) goto done;
    if (buffer_of(visible_object, &visible, '?', 0, "visible") < 0) goto done;
    const int64_t *offset = offsets.buf, *word = words.buf, *end = ends.buf;
    const int32_t *chunk = chunks.buf;
    const uint8_t *shown = visible.buf;
    Py_ssize_t word_count = offsets.shape[0] - 1, chunk_count = visible.shape[0];
    Py_ssize_t group_count = ends.shape[0], row_count = chunks.shape[0];
    every.bytes = PyByteArray_FromStringAndSize(NULL, 0);
    any.bytes = PyByteArray_FromStringAndSize(NULL, 0);
    /* held_groups[c]: how many groups, from the first on, chunk c holds a word of. */
    held_groups = PyMem_Calloc((size_t)chunk_count + 1, sizeof(uint32_t));
    if (every.bytes == NULL || any.bytes == NULL || held_groups == NULL) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t group = 0, at = 0; group < group_count; group++) {
        if (end[group] < at || end[group] > words.shape[0]) {
            PyErr_SetString(PyExc_ValueError, "group ends are not ascending ends of the words");
            goto done;
        }
        for (; at < end[group]; at++) {
            if (word[at] < 0 || word[at] >= word_count || offset[word[at]] < 0 ||
                offset[word[at]] > offset[word[at] + 1] || offset[word[at] + 1] > row_count) {
                PyErr_SetString(PyExc_ValueError, "a word's chunk postings are out of range");
                goto done;
            }
            for (int64_t row = offset[word[at]]; row < offset[word[at] + 1]; row++) {
                int32_t c = chunk[row];
                if (c < 0 || c >= chunk_count) {
                    PyErr_SetString(PyExc_ValueError, "a chunk id is out of range");
                    goto done;
                }
                /* Counted once per group, and only after every group before it. */
                if (held_groups[c] != (uint32_t)group) continue;
                held_groups[c] = (uint32_t)group + 1;
                if (group + 1 == group_count && id_list_push(&every, c) < 0) goto done;
            }
        }
    }
    if ((every_bytes = id_list_done(&every, shown)) == NULL) goto done;
    if (PyByteArray_GET_SIZE(every_bytes) == 0) {
        /* Flag every chunk some word is in, then list the flagged in order: no sort of
         * the (many) rows of common words. */
        memset(held_groups, 0, (size_t)chunk_count * sizeof(uint32_t));
        for (Py_ssize_t at = 0; group_count && at < end[group_count - 1]; at++)
            for (int64_t row = offset[word[at]]; row < offset[word[at] + 1]; row++)
                held_groups[chunk[row]] = 1;
        for (Py_ssize_t c = 0; c < chunk_count; c++)
            if (held_groups[c] && shown[c] && id_list_push(&any, c) < 0) goto done;
    }
    if ((any_bytes = id_list_done(&any, shown)) == NULL) goto done;
    result = PyTuple_Pack(2, every_bytes, any_bytes);
done:
    Py_XDECREF(every.bytes);
    Py_XDECREF(any.bytes);
    Py_XDECREF(every_bytes);
    Py_XDECREF(any_bytes);
    PyMem_Free(held_groups);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&chunks);
    PyBuffer_Release(&words);
    PyBuffer_Release(&ends);
    PyBuffer_Release(&visible);
    return result;
}

static PyMethodDef methods[] = {
    {"chunks_holding", chunks_holding, METH_VARARGS, chunks_holding_doc},
    {"add_scores", add_scores, METH_VARARGS, add_scores_doc},
    {"narrowed", narrowed, METH_VARARGS, narrowed_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_postings",
    "Walks of segmented postings in compiled code: BM25 scores and intersections.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__postings(void) { return PyModule_Create(&module_definition); }
