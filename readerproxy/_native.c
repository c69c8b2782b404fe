/* readerproxy._native: optional C kernels; the pure-Python code stays the reference and fallback.
 *
 * Each kernel below has a header comment saying what it computes and which Python function is its
 * reference: scan (document._scan_fast), walk (scan itself, of the tree's serialisation), tree_leaves and complete_tree_leaves (the numpy walk of
 * learn.model.TreeModel.log_odds), inherit and word_counts (extractors.heuristic.inherit and
 * own_text), class_counts, containing, element_counts, repeated_items and key_counts (learn.blocks'
 * _character_counts, _containing, _element_counts, repeated_items and the same-tag sibling counts of
 * _columns), block_columns, block_neighbours and structure_columns (learn.blocks._columns and
 * structure_columns with page_type_columns' item counts, written into the feature matrix; numpy
 * still takes every logarithm) and context_columns (learn.blocks.context_features). They count and
 * copy; where a float is computed (inherit's sums, the block kernels' divisions, means and dot
 * products) it is the same operations in the same order.
 *
 * scan(serialised, tags, void_tags) -> tuple | None
 *     Exactly what readerproxy.document._scan_fast computes, in one pass over the serialisation:
 *     (kind, owner, length, text, chars, in_anchor, newline_after, parent, start, end), the fields of
 *     document._Scan in that order, each array as a bytearray of its dtype (int8, int32, int32, list
 *     of str, int32, bool, bool, int32, int32, int32) for np.frombuffer; then four lists read from
 *     the same start tags: (ident, classes, role, unsure); then the elements' tag names.
 *     `tags` is either the list of the elements' lower-case tag names (checked against the start
 *     tags, and returned as the last field), or the number of elements: the names are then read from
 *     the start tags (ASCII lower-cased, one str object per distinct name), declining any name that
 *     holds a character outside printable ASCII, a quote or a slash (whose lower-case form
 *     document._tag_names might give differently). The first three hold, per element, the
 *     value of its "id", "class" and "role" attribute as selectolax's `node.attributes.get(name)`
 *     gives it (None for an element without one); `unsure` lists the elements whose three values the
 *     caller must read from the node instead (their entries in the three lists are then None).
 *     Lexbor serialises every attribute as ` name="value"`, a valueless one too (as `name=""`, while
 *     `attributes` gives None for it and "" for an explicit empty value: so an empty id, class or
 *     role is unsure), escaping exactly "&", '"', U+00A0, "<" and ">" in the value (&amp; &quot;
 *     &nbsp; &lt; &gt;, decoded here); any other "&", a name that is one of the three but for case,
 *     one of them twice, or a tag that does not read as that pattern makes the element unsure. The
 *     names are compared as serialised, which is the key `attributes` uses (the qualified name, as
 *     "xlink:role" on SVG; foreign elements' adjusted names such as "viewBox" never equal the three).
 *     None wherever _scan_fast
 *     declines (a NUL, no "<", no element, a "<" that is text, an element count or tag name that does not match
 *     `tags`, an end tag that closes nothing or another element, ...), and also on a "&" that is not
 *     one of Lexbor's four text escapes (&amp; &lt; &gt; &nbsp;), which _scan_fast would hand to
 *     html.unescape: the caller then falls back to _scan_fast. The tags' "<...>" spans are read as
 *     document._tag_spans reads them: up to the first ">" when that is regular, else as the regular
 *     expression document._TOKEN matches from the "<" (token_end below follows its backtracking).
 *
 * tags_in_source(html, names) -> list: which of the names some "<" of the page is followed by
 *     (document._tags_in_source; its comment below); source_tags(html, names) -> (list, int): the same
 *     list and html.count("<") in one pass (clean.source_tags).
 *
 * hidden_candidates(root, n_elements) -> (list, list, list) | None: the elements that the selector list
 *     clean._HIDDEN_OR_SCREEN_READER matches, read from Lexbor's tree as the walk reads it, with their
 *     subtrees, and those with an aria-controls attribute (clean._unseen_candidates; its comment below).
 *     Reference: the queries themselves.
 *
 * early_read(root) -> (str | None, list, int, list) | None: what clean.read_before_cleaning reads with the
 *     query clean._BEFORE_CLEANING (the title's text, JSON-LD and print stylesheet texts, any <noscript>),
 *     read from Lexbor's tree without the query (its comment below). Reference: the query.
 *
 * attributed_elements(root, n_elements, first, names) -> dict | None: the elements from index `first` on that
 *     carry one of the attributes named, with those attributes (views.posts._attributed; its comment below).
 *     Reference: `node.attributes` of every element (views.posts.attributed_reference).
 *
 * tree_leaves(x, feature, threshold, child, value, roots, max_depth) -> bytearray
 *     For every row of x (float64, rows x features, C order) and every tree, the value of the leaf
 *     reached: float64, rows x trees, row-major. The reference is the numpy walk of
 *     readerproxy.learn.model.TreeModel.log_odds over the packed tables of TreeModel.__post_init__
 *     (`child[2 * node + (x <= threshold)]`, intp tables); the caller sums the leaves with numpy in
 *     the same order as before, so scores stay bit-identical.
 *
 * walk(root, n_elements, void_tags) -> tuple | None
 *     scan's fields for the tree `root` (a selectolax LexborNode, the <html> element) belongs to, read from
 *     the tree through Lexbor's own functions instead of from its serialisation (see the comment at
 *     native_walk). lexbor_setup(path, node_type) finds those functions once (through dlfcn: without
 *     <dlfcn.h>, or built with -DREADERPROXY_NO_DLFCN, it answers False and HAVE_WALK is 0; the other
 *     kernels are unchanged).
 *
 * word_buckets(text, start, buckets, first=None, last=None, lower=False), count_parts(text, parts) and
 *     count_prices(text, signs, codes): the page-kind features' word hashing (pagewords._add_words),
 *     class-word counts (str.count per part in pagekind.class_word_counts) and price count
 *     (pagekind.count_prices), each in one pass; their comments below.
 *
 * No threads. Global state: the Lexbor functions lexbor_setup finds (and the LexborNode type), and the
 * CRC-32 table built when the module is loaded.
 * Bad arguments raise TypeError or ValueError.
 * SOURCE_HASH is the SHA-256 of this file, passed at compile time (hatch_build.py), so that
 * readerproxy._speedups can refuse a module compiled from an older source.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#ifndef READERPROXY_NATIVE_SOURCE_HASH
#define READERPROXY_NATIVE_SOURCE_HASH ""
#endif

enum { TEXT = 0, OPEN = 1, CLOSE = 2 };

typedef struct {
    int32_t owner, length, chars;
    int8_t kind;
    uint8_t in_anchor, newline_after;
} Token;

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t len;
} Str;

/* The character at i, or 0 past the end (as _scan_fast's padding reads it). */
static inline Py_UCS4 at(const Str *s, Py_ssize_t i) {
    return i < s->len ? PyUnicode_READ(s->kind, s->data, i) : 0;
}

static inline int ascii_letter(Py_UCS4 c) { return ((c | 0x20) >= 'a') && ((c | 0x20) <= 'z'); }
static inline Py_UCS4 ascii_lower(Py_UCS4 c) { return (c >= 'A' && c <= 'Z') ? (c | 0x20) : c; }

/* From `from` (just after a tag name), the end of `(?:[^>"]|"[^"]*")*>`: index after ">", or -1. */
static Py_ssize_t attributes_end(const Str *s, Py_ssize_t from) {
    for (Py_ssize_t i = from; i < s->len; i++) {
        Py_UCS4 c = PyUnicode_READ(s->kind, s->data, i);
        if (c == '>') return i + 1;
        if (c == '"') {
            do {
                i++;
            } while (i < s->len && PyUnicode_READ(s->kind, s->data, i) != '"');
            if (i >= s->len) return -1;
        }
    }
    return -1;
}

/* document._TOKEN.match(s, lt).end(), or -1 for no match (s[lt] is "<"). */
static Py_ssize_t token_end(const Str *s, Py_ssize_t lt) {
    Py_ssize_t p = lt + 1;
    if (at(s, p) == '/') p++;
    if (ascii_letter(at(s, p))) { /* <(/?)([A-Za-z][^\t\n\f\r />]*)(?:[^>"]|"[^"]*")*> */
        Py_ssize_t q = p + 1;
        for (Py_UCS4 c; q < s->len && (c = PyUnicode_READ(s->kind, s->data, q)) != '\t' && c != '\n' &&
                        c != '\f' && c != '\r' && c != ' ' && c != '/' && c != '>';
             q++) {
        }
        /* Greedy name first; a shorter name only changes the match when the characters given back
         * hold a '"' (elsewhere the attribute pattern reads them the same way), so backtrack to each
         * '"' of the name, last first. */
        Py_ssize_t end = attributes_end(s, q);
        for (Py_ssize_t g = q - 1; end < 0 && g > p; g--)
            if (PyUnicode_READ(s->kind, s->data, g) == '"') end = attributes_end(s, g);
        if (end >= 0) return end;
    }
    Py_UCS4 c1 = at(s, lt + 1);
    if (c1 == '!' && at(s, lt + 2) == '-' && at(s, lt + 3) == '-') { /* !--.*?--> */
        for (Py_ssize_t i = lt + 4; i + 2 < s->len; i++)
            if (at(s, i) == '-' && at(s, i + 1) == '-' && at(s, i + 2) == '>') return i + 3;
    }
    if (c1 == '!' || c1 == '?') { /* ![^>]*> and \?[^>]*> */
        for (Py_ssize_t i = lt + 2; i < s->len; i++)
            if (PyUnicode_READ(s->kind, s->data, i) == '>') return i + 1;
    }
    return -1;
}

/* Last character of the "<...>" at lt as document._tag_spans finds it, or -1 (the page is declined). */
static Py_ssize_t span_end(const Str *s, Py_ssize_t lt) {
    Py_UCS4 first = at(s, lt + 1), second = at(s, lt + 2);
    int element = ascii_letter(first) || (first == '/' && ascii_letter(second));
    int markup = first == '!' || first == '?';
    Py_ssize_t gt = -1, quotes = 0, i = lt + 1, len = s->len;
    const int kind = s->kind;
    const void *data = s->data;
    /* For speed, a loop per kind of string: it reads every character of every tag. */
#define TAG_END(UNIT)                                                                                                \
    for (const UNIT *units = data; i < len; i++) {                                                                   \
        Py_UCS4 c = units[i];                                                                                        \
        if (c == '>' || c == '<' || c == 0) break;                                                                   \
        quotes += c == '"';                                                                                          \
    }
    if (kind == PyUnicode_1BYTE_KIND) {
        TAG_END(Py_UCS1)
    } else if (kind == PyUnicode_2BYTE_KIND) {
        TAG_END(Py_UCS2)
    } else {
        TAG_END(Py_UCS4)
    }
#undef TAG_END
    Py_UCS4 stop = at(s, i);
    if (i < len && stop == 0) return -1;
    if (stop == '>') gt = i; /* else a "<" before the first ">", or none: irregular */
    int regular = gt >= 0 && (element || markup) && !(element && quotes % 2 == 1);
    if (regular && first == '!' && second == '-' && at(s, lt + 3) == '-') /* a comment must end with "-->" */
        regular = gt - lt >= 6 && at(s, gt - 1) == '-' && at(s, gt - 2) == '-';
    if (regular) return gt;
    Py_ssize_t end = token_end(s, lt);
    for (Py_ssize_t i = lt + 1; i < end; i++)
        if (PyUnicode_READ(kind, data, i) == 0) return -1;
    return end < 0 ? -1 : end - 1;
}

typedef struct {
    Str s;
    PyObject *serialised, *text, *empty;
    PyObject *attribute[3], *unsure; /* ident, classes, role per element; the elements to read from the node */
    Token *tokens;
    Py_ssize_t n_tokens, capacity;
    Py_UCS4 *decoded; /* room for one piece of text with its escapes decoded (made when needed) */
} Scanner;

static Token *new_token(Scanner *sc) {
    if (sc->n_tokens == sc->capacity) {
        Py_ssize_t capacity = sc->capacity ? 2 * sc->capacity : 1024;
        Token *grown = PyMem_Realloc(sc->tokens, (size_t)capacity * sizeof(Token));
        if (grown == NULL) return (Token *)PyErr_NoMemory();
        sc->tokens = grown;
        sc->capacity = capacity;
    }
    return &sc->tokens[sc->n_tokens++];
}

/* Lexbor's serialiser escapes these in text and in attribute values (see the header). */
typedef struct {
    const char *name; /* what follows the "&" */
    Py_UCS4 code;
} Escape;
static const Escape TEXT_ESCAPES[] = {{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"nbsp;", 0xA0}};
static const Escape ATTRIBUTE_ESCAPES[] = {{"amp;", '&'}, {"quot;", '"'}, {"nbsp;", 0xA0}, {"lt;", '<'}, {"gt;", '>'}};
#define N_TEXT_ESCAPES (sizeof TEXT_ESCAPES / sizeof TEXT_ESCAPES[0])
#define N_ATTRIBUTE_ESCAPES (sizeof ATTRIBUTE_ESCAPES / sizeof ATTRIBUTE_ESCAPES[0])

/* The character that the escape at s[*i] (an "&", within s[..b]) stands for, with *i moved onto its
 * ";"; 0 when it is none of `escapes` (no escape stands for NUL). */
static Py_UCS4 unescape_at(const Str *s, Py_ssize_t *i, Py_ssize_t b, const Escape *escapes, size_t count) {
    for (size_t e = 0; e < count; e++) {
        Py_ssize_t k = 0, size = (Py_ssize_t)strlen(escapes[e].name);
        while (k < size && *i + 1 + k < b && at(s, *i + 1 + k) == (Py_UCS4)escapes[e].name[k]) k++;
        if (k == size) {
            *i += size;
            return escapes[e].code;
        }
    }
    return 0;
}

/* One line of text, s[a:b] (ending with its "\n" if it has one) with `chars` non-space characters,
 * unescaped if `escaped` (then counted again). 1 ok, 0 declined, -1 error. */
static int text_piece(Scanner *sc, Py_ssize_t a, Py_ssize_t b, Py_ssize_t chars, int escaped, int owner,
                      int in_anchor) {
    const Str *s = &sc->s;
    Py_ssize_t n = 0;
    PyObject *piece;
    if (!escaped) {
        n = b - a;
        piece = PyUnicode_Substring(sc->serialised, a, b);
    } else {
        chars = 0;
        if (sc->decoded == NULL && (sc->decoded = PyMem_Malloc((size_t)s->len * sizeof(Py_UCS4) + 1)) == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t i = a; i < b; i++) {
            Py_UCS4 c = PyUnicode_READ(s->kind, s->data, i);
            if (c == '&' && (c = unescape_at(s, &i, b, TEXT_ESCAPES, N_TEXT_ESCAPES)) == 0)
                return 0; /* html.unescape would decide: leave the page to _scan_fast */
            chars += !Py_UNICODE_ISSPACE(c);
            sc->decoded[n++] = c;
        }
        piece = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, sc->decoded, n);
    }
    if (piece == NULL) return -1;
    if (PyList_Append(sc->text, piece) < 0) {
        Py_DECREF(piece);
        return -1;
    }
    Py_DECREF(piece);
    Token *t = new_token(sc);
    if (t == NULL) return -1;
    *t = (Token){.owner = owner, .length = (int32_t)n, .chars = (int32_t)chars, .kind = TEXT,
                 .in_anchor = (uint8_t)in_anchor, .newline_after = at(s, b - 1) == '\n'};
    return 1;
}

/* The text from `a` to the next "<" (or the end), one token per line, in one pass that also counts
 * the non-space characters (str.isspace). The position of that "<" (or the length), -1 declined, -2 error.
 * For speed, one loop per kind of string (TEXT_GAP below), reading its code units directly: the loop
 * visits every character of the page's text. */
#define TEXT_GAP(NAME, UNIT)                                                                                         \
    static Py_ssize_t NAME(Scanner *sc, Py_ssize_t a, int owner, int in_anchor) {                                    \
        const UNIT *data = sc->s.data;                                                                               \
        Py_ssize_t i = a, piece = a, chars = 0;                                                                      \
        int escaped = 0, done;                                                                                       \
        const Py_ssize_t len = sc->s.len;                                                                            \
        for (; i < len; i++) {                                                                                       \
            Py_UCS4 c = data[i];                                                                                     \
            if (c == '<') break;                                                                                     \
            if (c == 0) return -1; /* _scan_fast declines a NUL anywhere */                                          \
            escaped |= c == '&';                                                                                     \
            chars += !Py_UNICODE_ISSPACE(c);                                                                         \
            if (c == '\n') {                                                                                         \
                if ((done = text_piece(sc, piece, i + 1, chars, escaped, owner, in_anchor)) <= 0) return done - 1;   \
                piece = i + 1;                                                                                       \
                chars = escaped = 0;                                                                                 \
            }                                                                                                        \
        }                                                                                                            \
        if (piece < i && (done = text_piece(sc, piece, i, chars, escaped, owner, in_anchor)) <= 0) return done - 1;  \
        return i;                                                                                                    \
    }
TEXT_GAP(text_gap_1, Py_UCS1)
TEXT_GAP(text_gap_2, Py_UCS2)
TEXT_GAP(text_gap_4, Py_UCS4)

static Py_ssize_t text_gap(Scanner *sc, Py_ssize_t a, int owner, int in_anchor) {
    switch (sc->s.kind) {
    case PyUnicode_1BYTE_KIND: return text_gap_1(sc, a, owner, in_anchor);
    case PyUnicode_2BYTE_KIND: return text_gap_2(sc, a, owner, in_anchor);
    default: return text_gap_4(sc, a, owner, in_anchor);
    }
}

/* The value s[a:b] of an attribute with Lexbor's attribute escapes decoded (see the header), or NULL
 * with no error set when it holds another "&" (the element is then unsure). */
static PyObject *attribute_value(Scanner *sc, Py_ssize_t a, Py_ssize_t b) {
    const Str *s = &sc->s;
    if (PyUnicode_FindChar(sc->serialised, '&', a, b, 1) == -1) return PyUnicode_Substring(sc->serialised, a, b);
    if (sc->decoded == NULL && (sc->decoded = PyMem_Malloc((size_t)s->len * sizeof(Py_UCS4) + 1)) == NULL)
        return PyErr_NoMemory();
    Py_ssize_t n = 0;
    for (Py_ssize_t i = a; i < b; i++) {
        Py_UCS4 c = PyUnicode_READ(s->kind, s->data, i);
        if (c == '&' && (c = unescape_at(s, &i, b, ATTRIBUTE_ESCAPES, N_ATTRIBUTE_ESCAPES)) == 0) return NULL;
        sc->decoded[n++] = c;
    }
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, sc->decoded, n);
}

/* The index of the first `c` (an ASCII character) of data[i:end] (a str's data of that kind), or -1.
 * For speed, memchr (vectorised by the C library) for the byte of `c`, then a check that the byte
 * found is a whole character, on little-endian machines; else a loop per character. */
static Py_ssize_t next_ascii(int kind, const void *data, Py_ssize_t i, Py_ssize_t end, char c) {
    const char *bytes = data;
#if PY_LITTLE_ENDIAN
    for (Py_ssize_t at_byte = i * kind, end_byte = end * kind; at_byte < end_byte;) {
        const char *found = memchr(bytes + at_byte, c, (size_t)(end_byte - at_byte));
        if (found == NULL) return -1;
        Py_ssize_t offset = found - bytes;
        int whole = offset % kind == 0;
        for (int extra = 1; whole && extra < kind; extra++) whole = bytes[offset + extra] == 0;
        if (whole) return offset / kind;
        at_byte = offset + 1;
    }
    return -1;
#else
    for (; i < end; i++)
        if (PyUnicode_READ(kind, data, i) == (Py_UCS4)c) return i;
    return -1;
#endif
}

/* Which of "id", "class", "role" the name s[a:b] is (0, 1, 2), -1 none, -2 one of them but for case. */
static int attribute_index(const Str *s, Py_ssize_t a, Py_ssize_t b) {
    static const char *const wanted[3] = {"id", "class", "role"};
    for (int w = 0; w < 3; w++) {
        Py_ssize_t size = (Py_ssize_t)strlen(wanted[w]), k = 0;
        int exact = 1;
        if (b - a != size) continue;
        for (; k < size; k++) {
            Py_UCS4 c = PyUnicode_READ(s->kind, s->data, a + k);
            if (ascii_lower(c) != (Py_UCS4)wanted[w][k]) break;
            exact &= c == (Py_UCS4)wanted[w][k];
        }
        if (k == size) return exact ? w : -2;
    }
    return -1;
}

/* The id, class and role of element k from its start tag's attributes s[from:gt] (s[gt] is ">"),
 * serialised as ( name="value")*: into sc->attribute, or k into sc->unsure. 0 ok, -1 error. */
static int read_attributes(Scanner *sc, Py_ssize_t k, Py_ssize_t from, Py_ssize_t gt) {
    const Str *s = &sc->s;
    PyObject *found[3] = {NULL, NULL, NULL};
    int sure = 1;
    for (Py_ssize_t p = from; p < gt && sure;) {
        if (at(s, p) != ' ') {
            sure = 0;
            break;
        }
        Py_ssize_t name = ++p;
        for (Py_UCS4 c; p < gt && (c = at(s, p)) != '=' && c != ' '; p++)
            if (c == '"' || c == '\'' || c == '<' || c == '&') sure = 0;
        int which = attribute_index(s, name, p);
        if (p == name || !sure || at(s, p) != '=' || at(s, p + 1) != '"' || which == -2) {
            sure = 0;
            break;
        }
        Py_ssize_t value = p += 2;
        Py_ssize_t quote = next_ascii(s->kind, s->data, p, gt, '"');
        p = quote < 0 ? gt : quote;
        if (p >= gt) {
            sure = 0;
            break;
        }
        p++; /* past the closing quote */
        if (which < 0) continue;
        if (found[which] != NULL || p - 1 == value) { /* twice, or empty: None or "" cannot be told */
            sure = 0;
            break;
        }
        found[which] = attribute_value(sc, value, p - 1);
        if (found[which] == NULL) {
            if (PyErr_Occurred()) goto error;
            sure = 0;
        }
    }
    if (!sure) {
        PyObject *index = PyLong_FromSsize_t(k);
        int failed = index == NULL || PyList_Append(sc->unsure, index) < 0;
        Py_XDECREF(index);
        for (int w = 0; w < 3; w++) Py_CLEAR(found[w]);
        return failed ? -1 : 0;
    }
    for (int w = 0; w < 3; w++) {
        if (found[w] == NULL) continue;
        PyObject *none = PyList_GET_ITEM(sc->attribute[w], k);
        PyList_SET_ITEM(sc->attribute[w], k, found[w]); /* steals the reference */
        Py_DECREF(none);
    }
    return 0;
error:
    for (int w = 0; w < 3; w++) Py_CLEAR(found[w]);
    return -1;
}

/* The distinct tag names of a page read from its start tags (scan's read mode): an open-addressing
 * table from the ASCII name to its str object (borrowed from the names list, which holds every one)
 * and its flags (1: void, 2: "a"). */
typedef struct {
    PyObject *name;
    uint64_t hash;
    uint8_t flags;
} NameSlot;
typedef struct {
    NameSlot *slots;
    Py_ssize_t size, used; /* size: a power of two, or 0 before the first name */
} NameTable;

static int name_table_grow(NameTable *table) {
    Py_ssize_t size = table->size ? 2 * table->size : 64;
    NameSlot *slots = PyMem_Calloc((size_t)size, sizeof(NameSlot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < table->size; i++) {
        if (table->slots[i].name == NULL) continue;
        Py_ssize_t j = (Py_ssize_t)(table->slots[i].hash & (uint64_t)(size - 1));
        while (slots[j].name != NULL) j = (j + 1) & (size - 1);
        slots[j] = table->slots[i];
    }
    PyMem_Free(table->slots);
    table->slots = slots;
    table->size = size;
    return 0;
}

/* Tags whose text Lexbor serialises raw (not escaped): walk declines a page with text inside one. */
static int raw_text_name(PyObject *name) {
    static const char *const raw[] = {"script", "style", "xmp", "iframe", "noembed", "noframes", "plaintext", "noscript"};
    for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++)
        if (PyUnicode_CompareWithASCIIString(name, raw[i]) == 0) return 1;
    return 0;
}

/* What read_name says of a tag name (bits of an element's flags; computed once per name). */
enum { NAME_VOID = 1, NAME_ANCHOR = 2, NAME_RAW_TEXT = 4, NAME_TEMPLATE = 8 };

/* The name of the start tag whose name begins at s[a] (up to the first " " or ">", before gt): its
 * str (found in the table, or made and added) into names[k] and its NAME_* flags into *flags. 1 ok,
 * 0 declined (a name the scan does not read, see the header), -1 error. */
static int read_name(NameTable *table, const Str *s, Py_ssize_t a, Py_ssize_t gt, PyObject *void_tags,
                     PyObject *names, Py_ssize_t k, uint8_t *flags) {
    uint64_t hash = 1469598103934665603ULL; /* FNV-1a over the lower-cased name */
    Py_ssize_t b = a;
    for (Py_UCS4 c; b < gt && (c = PyUnicode_READ(s->kind, s->data, b)) != ' ' && c != '>'; b++) {
        if (c <= 0x20 || c >= 0x7F || c == '"' || c == '/') return 0;
        hash = (hash ^ ascii_lower(c)) * 1099511628211ULL;
    }
    if (b == a) return 0;
    if (2 * (table->used + 1) > table->size && name_table_grow(table) < 0) return -1;
    Py_ssize_t j = (Py_ssize_t)(hash & (uint64_t)(table->size - 1));
    for (; table->slots[j].name != NULL; j = (j + 1) & (table->size - 1)) {
        NameSlot *slot = &table->slots[j];
        if (slot->hash != hash || PyUnicode_GET_LENGTH(slot->name) != b - a) continue;
        const Py_UCS1 *known = PyUnicode_1BYTE_DATA(slot->name);
        Py_ssize_t i = 0;
        while (i < b - a && known[i] == ascii_lower(PyUnicode_READ(s->kind, s->data, a + i))) i++;
        if (i == b - a) {
            PyList_SetItem(names, k, Py_NewRef(slot->name));
            *flags = slot->flags;
            return 1;
        }
    }
    PyObject *name = PyUnicode_New(b - a, 0x7F);
    if (name == NULL) return -1;
    for (Py_ssize_t i = 0; i < b - a; i++)
        PyUnicode_1BYTE_DATA(name)[i] = (Py_UCS1)ascii_lower(PyUnicode_READ(s->kind, s->data, a + i));
    int is_void = PySet_Contains(void_tags, name);
    if (is_void < 0) {
        Py_DECREF(name);
        return -1;
    }
    uint8_t these = (uint8_t)((is_void ? NAME_VOID : 0) | (PyUnicode_CompareWithASCIIString(name, "a") == 0 ? NAME_ANCHOR : 0) |
                              (raw_text_name(name) ? NAME_RAW_TEXT : 0) |
                              (PyUnicode_CompareWithASCIIString(name, "template") == 0 ? NAME_TEMPLATE : 0));
    table->slots[j] = (NameSlot){.name = name, .hash = hash, .flags = these};
    table->used++;
    PyList_SetItem(names, k, name); /* the list holds the reference the table borrows */
    *flags = these;
    return 1;
}

static PyObject *bytes_of(const void *data, Py_ssize_t size) {
    return PyByteArray_FromStringAndSize((const char *)data, size);
}

/* A list of n Nones, or NULL with an error set. */
static PyObject *list_of_none(Py_ssize_t n) {
    PyObject *list = PyList_New(n);
    if (list != NULL)
        for (Py_ssize_t k = 0; k < n; k++) PyList_SET_ITEM(list, k, Py_NewRef(Py_None));
    return list;
}

/* The Python objects scan and walk fill: the texts, the empty str of every tag, the unsure list and the id,
 * class and role lists (None per element). 0 ok, -1 with an error set (scanner_free releases what was made). */
static int scanner_lists(Scanner *sc, Py_ssize_t n_elements) {
    sc->text = PyList_New(0);
    sc->empty = PyUnicode_New(0, 0);
    sc->unsure = PyList_New(0);
    for (int w = 0; w < 3; w++) sc->attribute[w] = list_of_none(n_elements);
    return sc->text && sc->empty && sc->unsure && sc->attribute[0] && sc->attribute[1] && sc->attribute[2] ? 0 : -1;
}

/* Everything a Scanner holds. */
static void scanner_free(Scanner *sc) {
    PyMem_Free(sc->decoded);
    PyMem_Free(sc->tokens);
    Py_XDECREF(sc->text);
    Py_XDECREF(sc->empty);
    Py_XDECREF(sc->unsure);
    for (int w = 0; w < 3; w++) Py_XDECREF(sc->attribute[w]);
}

/* What scan and walk return: the tokens' arrays (as bytearrays), the texts, the elements' parent, start and end, the
 * id, class and role lists, the unsure list and the tag names. NULL with an error set. */
static PyObject *scan_fields(const Scanner *sc, Py_ssize_t n_elements, const int32_t *parent, const int32_t *start,
                             const int32_t *end, PyObject *names) {
    PyObject *result = NULL;
    Py_ssize_t n = sc->n_tokens;
    int8_t *kind = PyMem_Malloc((size_t)n);
    int32_t *owner = PyMem_Malloc((size_t)n * sizeof(int32_t)), *length = PyMem_Malloc((size_t)n * sizeof(int32_t)),
            *chars = PyMem_Malloc((size_t)n * sizeof(int32_t));
    uint8_t *in_anchor = PyMem_Malloc((size_t)n), *newline_after = PyMem_Malloc((size_t)n);
    if (kind && owner && length && chars && in_anchor && newline_after) {
        for (Py_ssize_t i = 0; i < n; i++) {
            const Token *t = &sc->tokens[i];
            kind[i] = t->kind;
            owner[i] = t->owner;
            length[i] = t->length;
            chars[i] = t->chars;
            in_anchor[i] = t->in_anchor;
            newline_after[i] = t->newline_after;
        }
        Py_ssize_t e4 = n_elements * (Py_ssize_t)sizeof(int32_t), t4 = n * (Py_ssize_t)sizeof(int32_t);
        result = Py_BuildValue("(NNNONNNNNNOOOOO)", bytes_of(kind, n), bytes_of(owner, t4), bytes_of(length, t4),
                               sc->text, bytes_of(chars, t4), bytes_of(in_anchor, n), bytes_of(newline_after, n),
                               bytes_of(parent, e4), bytes_of(start, e4), bytes_of(end, e4), sc->attribute[0],
                               sc->attribute[1], sc->attribute[2], sc->unsure, names);
    } else {
        PyErr_NoMemory();
    }
    PyMem_Free(kind);
    PyMem_Free(owner);
    PyMem_Free(length);
    PyMem_Free(chars);
    PyMem_Free(in_anchor);
    PyMem_Free(newline_after);
    return result;
}

static PyObject *native_scan(PyObject *module, PyObject *args) {
    PyObject *serialised, *tags, *void_tags;
    if (!PyArg_ParseTuple(args, "UOO:scan", &serialised, &tags, &void_tags)) return NULL;
    if (!PyAnySet_Check(void_tags)) {
        PyErr_SetString(PyExc_TypeError, "scan: void_tags must be a set or frozenset");
        return NULL;
    }
    Py_ssize_t n_elements;
    PyObject *names; /* a tuple of the given names, or (read mode) the list the names are read into */
    int reading = PyLong_Check(tags);
    if (reading) {
        n_elements = PyLong_AsSsize_t(tags);
        if (n_elements == -1 && PyErr_Occurred()) return NULL;
        if (n_elements < 0) {
            PyErr_SetString(PyExc_ValueError, "scan: the number of elements must not be negative");
            return NULL;
        }
        if (n_elements > INT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "scan: input too large");
            return NULL;
        }
        names = list_of_none(n_elements);
        if (names == NULL) return NULL;
    } else if (PyList_Check(tags)) {
        /* A tuple copy of the names: nothing the set lookups below run can change what is read. */
        names = PyList_AsTuple(tags);
        if (names == NULL) return NULL;
        n_elements = PyTuple_GET_SIZE(names);
    } else {
        PyErr_SetString(PyExc_TypeError, "scan: tags must be a list of str or the number of elements");
        return NULL;
    }
    if (n_elements > INT32_MAX || PyUnicode_GET_LENGTH(serialised) > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "scan: input too large");
        Py_DECREF(names);
        return NULL;
    }
    NameTable table = {0};
    Scanner sc = {.s = {PyUnicode_KIND(serialised), PyUnicode_DATA(serialised), PyUnicode_GET_LENGTH(serialised)},
                  .serialised = serialised};
    const Str *s = &sc.s;
    PyObject *result = NULL;
    int32_t *parent = PyMem_Malloc((size_t)(3 * n_elements + 1) * sizeof(int32_t));
    int32_t *stack = PyMem_Malloc((size_t)(n_elements + 1) * sizeof(int32_t));
    uint8_t *flags = PyMem_Malloc((size_t)n_elements + 1); /* NAME_* of each element */
    if (scanner_lists(&sc, n_elements) < 0 || !parent || !stack || !flags) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    int32_t *start = parent + n_elements, *end = start + n_elements;

    for (Py_ssize_t k = 0; k < n_elements && !reading; k++) {
        PyObject *name = PyTuple_GET_ITEM(names, k);
        if (!PyUnicode_CheckExact(name)) {
            PyErr_SetString(PyExc_TypeError, "scan: tags must be a list of str");
            goto done;
        }
        /* _scan_fast joins the names with "\0" and reads a quoted name differently from _TOKEN. */
        if (PyUnicode_FindChar(name, 0, 0, PyUnicode_GET_LENGTH(name), 1) != -1 ||
            PyUnicode_FindChar(name, '"', 0, PyUnicode_GET_LENGTH(name), 1) != -1)
            goto declined;
        int is_void = PySet_Contains(void_tags, name);
        if (is_void < 0) goto done;
        flags[k] = (uint8_t)((is_void ? NAME_VOID : 0) | (PyUnicode_CompareWithASCIIString(name, "a") == 0 ? NAME_ANCHOR : 0));
    }
    /* _scan_fast declines a page without elements, and (below) one without "<" or with a NUL. */
    if (n_elements == 0) goto declined;

    Py_ssize_t depth = 0, next_element = 0, anchors = 0;
    int tags_seen = 0;
    for (Py_ssize_t pos = 0;;) {
        int owner = depth ? stack[depth - 1] : -1;
        Py_ssize_t lt = text_gap(&sc, pos, owner, anchors > 0);
        if (lt == -2) goto done;
        if (lt == -1) goto declined;
        if (lt == s->len) break;
        Py_ssize_t gt = span_end(s, lt);
        if (gt < 0) goto declined;
        tags_seen = 1;
        Py_UCS4 first = at(s, lt + 1);
        if (ascii_letter(first)) { /* a start tag: the next element, by name */
            Py_ssize_t k = next_element++;
            if (k >= n_elements) goto declined;
            PyObject *name;
            if (reading) { /* read up to the " " or ">" that ends it: nothing to check against */
                int read = read_name(&table, s, lt + 1, gt, void_tags, names, k, &flags[k]);
                if (read < 0) goto done;
                if (read == 0) goto declined;
                name = PyList_GET_ITEM(names, k);
            } else {
                name = PyTuple_GET_ITEM(names, k);
                Py_ssize_t size = PyUnicode_GET_LENGTH(name);
                if (lt + 1 + size >= s->len) goto declined;
                for (Py_ssize_t j = 0; j < size; j++)
                    if (ascii_lower(at(s, lt + 1 + j)) != PyUnicode_READ_CHAR(name, j)) goto declined;
                Py_UCS4 after = at(s, lt + 1 + size);
                if (after != ' ' && after != '>') goto declined;
            }
            Py_ssize_t size = PyUnicode_GET_LENGTH(name);
            if (read_attributes(&sc, k, lt + 1 + size, gt) < 0) goto done;
            Token *t = new_token(&sc);
            if (t == NULL) goto done;
            anchors += (flags[k] & NAME_ANCHOR) != 0;
            *t = (Token){.owner = (int32_t)k, .length = (int32_t)(gt - lt + 1), .kind = OPEN, .in_anchor = anchors > 0};
            parent[k] = owner;
            start[k] = end[k] = (int32_t)(sc.n_tokens - 1);
            if (!(flags[k] & NAME_VOID)) stack[depth++] = (int32_t)k;
        } else if (first == '/') { /* an end tag: the innermost open element, by name */
            if (depth == 0) goto declined;
            int32_t k = stack[--depth];
            PyObject *name = reading ? PyList_GET_ITEM(names, k) : PyTuple_GET_ITEM(names, k);
            Py_ssize_t size = PyUnicode_GET_LENGTH(name);
            if (gt - (lt + 2) != size) goto declined;
            for (Py_ssize_t j = 0; j < size; j++)
                if (ascii_lower(at(s, lt + 2 + j)) != PyUnicode_READ_CHAR(name, j)) goto declined;
            Token *t = new_token(&sc);
            if (t == NULL) goto done;
            int anchor = (flags[k] & NAME_ANCHOR) != 0;
            *t = (Token){.owner = k, .length = (int32_t)(gt - lt + 1), .kind = CLOSE, .in_anchor = anchor || anchors > 0};
            anchors -= anchor;
            end[k] = (int32_t)(sc.n_tokens - 1);
        } /* else a comment, doctype or processing instruction: no token */
        if ((first == '/' || ascii_letter(first)) && PyList_Append(sc.text, sc.empty) < 0) goto done;
        pos = gt + 1;
    }
    if (next_element != n_elements || depth != 0 || sc.n_tokens == 0 || !tags_seen) goto declined;

    result = scan_fields(&sc, n_elements, parent, start, end, reading ? names : tags);
    goto done;
declined:
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(parent);
    PyMem_Free(stack);
    PyMem_Free(flags);
    scanner_free(&sc);
    Py_DECREF(names);
    PyMem_Free(table.slots);
    return result;
}

/* A C-contiguous buffer of `ndim` dimensions whose items are `code`: 'd' float64, 'n' intp, 'q' int64,
 * 'i' int32, 'B' one byte (uint8 or bool). `function` and `what` name the argument in the error. */
static int get_array(PyObject *obj, Py_buffer *view, char code, int ndim, const char *function, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a C-contiguous array", function, what);
        return -1;
    }
    const char *format = view->format ? view->format : "B";
    if (*format == '@' || *format == '=' || *format == '<') format++;
    int ok = view->ndim == ndim && format[1] == '\0';
    switch (code) {
    case 'd': ok = ok && *format == 'd' && view->itemsize == sizeof(double); break;
    case 'n': ok = ok && strchr("lqn", *format) != NULL && view->itemsize == sizeof(Py_ssize_t); break;
    case 'q': ok = ok && strchr("lq", *format) != NULL && view->itemsize == sizeof(int64_t); break;
    case 'i': ok = ok && strchr("il", *format) != NULL && view->itemsize == sizeof(int32_t); break;
    default: ok = ok && strchr("B?", *format) != NULL && view->itemsize == 1; break;
    }
    if (!ok) {
        static const char *const kinds[] = {"float64", "intp", "int64", "int32", "uint8 or bool"};
        const char *kind = kinds[code == 'd' ? 0 : code == 'n' ? 1 : code == 'q' ? 2 : code == 'i' ? 3 : 4];
        PyErr_Format(PyExc_ValueError, "%s: %s must be %d-dimensional %s", function, what, ndim, kind);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *native_tree_leaves(PyObject *module, PyObject *args) {
    PyObject *objects[6];
    Py_ssize_t max_depth;
    if (!PyArg_ParseTuple(args, "OOOOOOn:tree_leaves", &objects[0], &objects[1], &objects[2], &objects[3],
                          &objects[4], &objects[5], &max_depth))
        return NULL;
    static const char codes[6] = {'d', 'n', 'd', 'n', 'd', 'n'};
    static const char *names[6] = {"x", "feature", "threshold", "child", "value", "roots"};
    Py_buffer views[6];
    Py_ssize_t *node = NULL; /* the node each tree of the current row has reached */
    int got = 0;
    PyObject *result = NULL;
    for (; got < 6; got++)
        if (get_array(objects[got], &views[got], codes[got], got == 0 ? 2 : 1, "tree_leaves", names[got]) < 0) goto done;
    const double *x = views[0].buf, *threshold = views[2].buf, *value = views[4].buf;
    const Py_ssize_t *feature = views[1].buf, *child = views[3].buf, *roots = views[5].buf;
    Py_ssize_t rows = views[0].shape[0], width = views[0].shape[1], nodes = views[1].shape[0],
               trees = views[5].shape[0];
    if (views[2].shape[0] != nodes || views[4].shape[0] != nodes || views[3].shape[0] != 2 * nodes) {
        PyErr_SetString(PyExc_ValueError, "tree_leaves: feature, threshold, value need one entry per node, child two");
        goto done;
    }
    if (max_depth < 0) {
        PyErr_SetString(PyExc_ValueError, "tree_leaves: max_depth must be >= 0");
        goto done;
    }
    /* Every index the walk can follow is checked once, so the walk itself needs no test. */
    for (Py_ssize_t i = 0; i < nodes; i++) {
        if (feature[i] < 0 || feature[i] >= width || child[2 * i] < 0 || child[2 * i] >= nodes ||
            child[2 * i + 1] < 0 || child[2 * i + 1] >= nodes) {
            PyErr_Format(PyExc_ValueError, "tree_leaves: node %zd points outside the tables", i);
            goto done;
        }
    }
    for (Py_ssize_t t = 0; t < trees; t++) {
        if (roots[t] < 0 || roots[t] >= nodes) {
            PyErr_Format(PyExc_ValueError, "tree_leaves: root of tree %zd is not a node", t);
            goto done;
        }
    }
    if (rows && trees > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(double) / rows) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyByteArray_FromStringAndSize(NULL, rows * trees * (Py_ssize_t)sizeof(double));
    if (result == NULL) goto done;
    double *leaves = (double *)PyByteArray_AS_STRING(result);
    node = PyMem_Malloc((size_t)(trees + 1) * sizeof(Py_ssize_t));
    if (node == NULL) {
        Py_CLEAR(result);
        PyErr_NoMemory();
        goto done;
    }
    /* Chosen for speed: one level of all of a row's trees at a time. Each step of one tree waits for
     * the load of its previous node; the trees' walks are independent, so interleaving them lets the
     * processor overlap those loads (about twice as fast as one tree to its leaf after another). */
    for (Py_ssize_t r = 0; r < rows; r++) {
        const double *row = x + r * width;
        memcpy(node, roots, (size_t)trees * sizeof(Py_ssize_t));
        for (Py_ssize_t d = 0; d < max_depth; d++)
            for (Py_ssize_t t = 0; t < trees; t++) { /* NaN compares false: right, as in numpy */
                Py_ssize_t n = node[t];
                node[t] = child[2 * n + (row[feature[n]] <= threshold[n])];
            }
        for (Py_ssize_t t = 0; t < trees; t++) leaves[r * trees + t] = value[node[t]];
    }
done:
    PyMem_Free(node);
    while (got-- > 0) PyBuffer_Release(&views[got]);
    return result;
}


/* Releases the first `count` views of an array of Py_buffer. */
static void release_views(Py_buffer *views, int count) {
    while (count-- > 0) PyBuffer_Release(&views[count]);
}

/* Borrowed str item i of `texts` (a list), or NULL with TypeError/ValueError set. */
static PyObject *text_at(PyObject *texts, int64_t i, const char *function) {
    if (i < 0 || i >= PyList_GET_SIZE(texts)) {
        PyErr_Format(PyExc_ValueError, "%s: token %lld is not an index of texts", function, (long long)i);
        return NULL;
    }
    PyObject *text = PyList_GET_ITEM(texts, i);
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "%s: texts must be a list of str", function);
        return NULL;
    }
    return text;
}

/* inherit(parent, is_holder, semantic, hints, decay) -> (holder, context)
 *     The reference is readerproxy.extractors.heuristic.inherit's Python loop: in document order, each
 *     element with a parent adds the parent's semantic context in full and `decay` times its class/id
 *     hint context (two float64 operations, as Python does them: a product, then a sum), and an element
 *     that is not a text holder takes its parent's holder. parent int32, is_holder one byte, semantic and
 *     hints float64, all one entry per element. Returns holder (int32) and semantic + hint context
 *     (float64) as bytearrays. A parent index past the last element raises ValueError (Python: IndexError).
 */
static PyObject *native_inherit(PyObject *module, PyObject *args) {
    PyObject *objects[4];
    double decay;
    if (!PyArg_ParseTuple(args, "OOOOd:inherit", &objects[0], &objects[1], &objects[2], &objects[3], &decay))
        return NULL;
    static const char codes[4] = {'i', 'B', 'd', 'd'};
    static const char *names[4] = {"parent", "is_holder", "semantic", "hints"};
    Py_buffer views[4];
    int got = 0;
    PyObject *holder_out = NULL, *context_out = NULL, *result = NULL;
    double *tag = NULL, *hint = NULL;
    for (; got < 4; got++)
        if (get_array(objects[got], &views[got], codes[got], 1, "inherit", names[got]) < 0) goto done;
    Py_ssize_t n = views[0].shape[0];
    for (int k = 1; k < 4; k++)
        if (views[k].shape[0] != n) {
            PyErr_SetString(PyExc_ValueError, "inherit: parent, is_holder, semantic and hints differ in length");
            goto done;
        }
    const int32_t *parent = views[0].buf;
    const uint8_t *is_holder = views[1].buf;
    holder_out = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int32_t));
    context_out = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    tag = PyMem_Malloc((size_t)(n + 1) * sizeof(double));
    hint = PyMem_Malloc((size_t)(n + 1) * sizeof(double));
    if (!holder_out || !context_out || !tag || !hint) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    int32_t *holder = (int32_t *)PyByteArray_AS_STRING(holder_out);
    double *context = (double *)PyByteArray_AS_STRING(context_out);
    memcpy(tag, views[2].buf, (size_t)n * sizeof(double));
    memcpy(hint, views[3].buf, (size_t)n * sizeof(double));
    for (Py_ssize_t i = 0; i < n; i++) holder[i] = (int32_t)i;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t up = parent[i];
        if (up < 0) continue;
        if (up >= n) {
            PyErr_Format(PyExc_ValueError, "inherit: parent %d of element %zd is not an element", (int)up, i);
            goto done;
        }
        tag[i] += tag[up];
        double lent = decay * hint[up]; /* rounded on its own, as in Python (no fused multiply-add) */
        hint[i] += lent;
        if (!is_holder[i]) holder[i] = holder[up];
    }
    for (Py_ssize_t i = 0; i < n; i++) context[i] = tag[i] + hint[i];
    result = PyTuple_Pack(2, holder_out, context_out);
done:
    Py_XDECREF(holder_out);
    Py_XDECREF(context_out);
    PyMem_Free(tag);
    PyMem_Free(hint);
    release_views(views, got);
    return result;
}

/* word_counts(texts, index) -> bytearray
 *     len(texts[i].split()) for every i of index (int64), as float64: the words counted by
 *     readerproxy.extractors.heuristic.own_text. str.split() splits at runs of Py_UNICODE_ISSPACE
 *     characters (for ASCII strings too), which is what is counted here.
 */
static PyObject *native_word_counts(PyObject *module, PyObject *args) {
    PyObject *texts, *index_obj, *result = NULL;
    if (!PyArg_ParseTuple(args, "O!O:word_counts", &PyList_Type, &texts, &index_obj)) return NULL;
    Py_buffer view;
    if (get_array(index_obj, &view, 'q', 1, "word_counts", "index") < 0) return NULL;
    Py_ssize_t n = view.shape[0];
    const int64_t *index = view.buf;
    result = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    if (result == NULL) goto done;
    double *counts = (double *)PyByteArray_AS_STRING(result);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *text = text_at(texts, index[k], "word_counts"); /* no Python code runs in this loop */
        if (text == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        const int kind = PyUnicode_KIND(text);
        const void *data = PyUnicode_DATA(text);
        Py_ssize_t length = PyUnicode_GET_LENGTH(text), words = 0;
        int in_word = 0;
        for (Py_ssize_t i = 0; i < length; i++) {
            int space = Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i));
            words += !space && !in_word;
            in_word = !space;
        }
        counts[k] = (double)words;
    }
done:
    PyBuffer_Release(&view);
    return result;
}

/* Adds to classes[c] how many characters of `text` (a str) are of class c, a character's class being
 * table[min(code point, size - 1)] masked to 0..3; ORs every entry read into *seen (class_counts and
 * block_columns raise when an entry above 3 was read). */
static void count_classes(PyObject *text, const uint8_t *table, Py_ssize_t size, int64_t classes[4], uint8_t *seen) {
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    /* locals, not the pointers: a uint8_t store may alias anything, which would keep them in memory */
    int64_t counts[4] = {0, 0, 0, 0};
    uint8_t read = 0;
    /* For speed: the common kinds read without a bound check when the table covers them. */
    if (kind == PyUnicode_1BYTE_KIND && size >= 0x100) {
        const Py_UCS1 *chars = data;
        for (Py_ssize_t i = 0; i < length; i++) {
            uint8_t class = table[chars[i]];
            read |= class;
            counts[class & 3]++;
        }
    } else if (kind == PyUnicode_2BYTE_KIND && size >= 0x10000) {
        const Py_UCS2 *chars = data;
        for (Py_ssize_t i = 0; i < length; i++) {
            uint8_t class = table[chars[i]];
            read |= class;
            counts[class & 3]++;
        }
    } else {
        for (Py_ssize_t i = 0; i < length; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            uint8_t class = table[c < (Py_UCS4)size ? (Py_ssize_t)c : size - 1];
            read |= class;
            counts[class & 3]++;
        }
    }
    for (int c = 0; c < 4; c++) classes[c] += counts[c];
    *seen |= read;
}

/* class_counts(texts, index, block, n_blocks, table) -> bytearray
 *     For each block b < n_blocks and class c < 4, how many characters of the texts texts[index[k]]
 *     with block[k] == b fall in class c, where a character's class is table[min(code point,
 *     len(table) - 1)]: float64, n_blocks x 4, row-major. The reference is the code-point lookup and
 *     np.bincount of readerproxy.learn.blocks._character_counts. index and block int64, table uint8
 *     with entries < 4 (ValueError when a text reads one that is not).
 */
static PyObject *native_class_counts(PyObject *module, PyObject *args) {
    PyObject *texts, *objects[3], *result = NULL;
    Py_ssize_t n_blocks;
    if (!PyArg_ParseTuple(args, "O!OOnO:class_counts", &PyList_Type, &texts, &objects[0], &objects[1], &n_blocks,
                          &objects[2]))
        return NULL;
    static const char codes[3] = {'q', 'q', 'B'};
    static const char *names[3] = {"index", "block", "table"};
    Py_buffer views[3];
    int got = 0;
    for (; got < 3; got++)
        if (get_array(objects[got], &views[got], codes[got], 1, "class_counts", names[got]) < 0) goto done;
    Py_ssize_t n = views[0].shape[0], size = views[2].shape[0];
    const int64_t *index = views[0].buf, *block = views[1].buf;
    const uint8_t *table = views[2].buf;
    if (views[1].shape[0] != n || size == 0 || n_blocks < 0 || n_blocks > PY_SSIZE_T_MAX / 32) {
        PyErr_SetString(PyExc_ValueError,
                        "class_counts: index and block differ in length, the table is empty or n_blocks < 0");
        goto done;
    }
    /* For speed, the table's entries are checked as they are read (`seen`), not all 65,536 of them
     * on every call (20 us a page): an entry above 3 that a text reads is an error, one no text
     * reads does no harm (`& 3` keeps every read within `classes` before the check). */
    uint8_t seen = 0;
    result = PyByteArray_FromStringAndSize(NULL, 4 * n_blocks * (Py_ssize_t)sizeof(double));
    if (result == NULL) goto done;
    double *counts = (double *)PyByteArray_AS_STRING(result);
    memset(counts, 0, (size_t)(4 * n_blocks) * sizeof(double));
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *text = text_at(texts, index[k], "class_counts");
        if (text == NULL || block[k] < 0 || block[k] >= n_blocks) {
            if (text != NULL) PyErr_Format(PyExc_ValueError, "class_counts: block %lld out of range", (long long)block[k]);
            Py_CLEAR(result);
            goto done;
        }
        double *row = counts + 4 * block[k]; /* whole numbers: every count is exact in float64 */
        int64_t classes[4] = {0, 0, 0, 0};
        count_classes(text, table, size, classes, &seen);
        for (int c = 0; c < 4; c++) row[c] += (double)classes[c];
    }
    if (seen > 3) {
        PyErr_SetString(PyExc_ValueError, "class_counts: table entries must be < 4");
        Py_CLEAR(result);
    }
done:
    release_views(views, got);
    return result;
}

/* containing(kind, first, last, kinds, position) -> bytearray | None
 *     For each kind k < kinds and each position p, how many ranges first[r]..last[r] (inclusive) of
 *     kind k hold p, i.e. #(first <= p) - #(last < p) over the ranges of kind k (a range with
 *     first = last + 1 is empty): int64, kinds x positions, row-major. The reference is
 *     readerproxy.learn.blocks._containing's two np.searchsorted (which assume values >= 0). All
 *     arrays int64; kind values must be in 0..kinds-1 and positions in 0..2**31-1. Counted with one
 *     difference array per kind over the positions' span; None (the caller uses numpy) when that
 *     array would be larger than 2**26 entries.
 */
static PyObject *native_containing(PyObject *module, PyObject *args) {
    PyObject *objects[4], *result = NULL;
    Py_ssize_t kinds;
    if (!PyArg_ParseTuple(args, "OOOnO:containing", &objects[0], &objects[1], &objects[2], &kinds, &objects[3]))
        return NULL;
    static const char *names[4] = {"kind", "first", "last", "position"};
    Py_buffer views[4];
    int got = 0;
    int64_t *diff = NULL;
    for (; got < 4; got++)
        if (get_array(objects[got], &views[got], 'q', 1, "containing", names[got]) < 0) goto done;
    const int64_t *kind = views[0].buf, *first = views[1].buf, *last = views[2].buf, *position = views[3].buf;
    Py_ssize_t ranges = views[0].shape[0], n = views[3].shape[0];
    if (views[1].shape[0] != ranges || views[2].shape[0] != ranges || kinds < 0) {
        PyErr_SetString(PyExc_ValueError, "containing: kind, first and last differ in length, or kinds < 0");
        goto done;
    }
    int64_t lo = 0, hi = -1;
    for (Py_ssize_t j = 0; j < n; j++) {
        if (position[j] < 0 || position[j] > INT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "containing: positions must be in 0..2**31-1");
            goto done;
        }
        if (j == 0 || position[j] < lo) lo = position[j];
        if (j == 0 || position[j] > hi) hi = position[j];
    }
    for (Py_ssize_t r = 0; r < ranges; r++)
        if (kind[r] < 0 || kind[r] >= kinds) {
            PyErr_SetString(PyExc_ValueError, "containing: a kind is not in 0..kinds-1");
            goto done;
        }
    int64_t span = hi - lo + 1; /* 0 without positions */
    if (kinds && span + 1 > ((int64_t)1 << 26) / kinds) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    int64_t row = span + 1;
    diff = PyMem_Calloc((size_t)(kinds * row + 1), sizeof(int64_t));
    result = PyByteArray_FromStringAndSize(NULL, kinds * n * (Py_ssize_t)sizeof(int64_t));
    if (diff == NULL || result == NULL) {
        Py_CLEAR(result);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    if (span > 0)
        for (Py_ssize_t r = 0; r < ranges; r++) {
            /* +1 from the first position >= first[r], -1 from the first position > last[r] */
            int64_t opened = first[r] <= lo ? 0 : first[r] > hi ? span : first[r] - lo;
            int64_t closed = last[r] < lo ? 0 : last[r] >= hi ? span : last[r] + 1 - lo;
            diff[kind[r] * row + opened]++;
            diff[kind[r] * row + closed]--;
        }
    int64_t *out = (int64_t *)PyByteArray_AS_STRING(result);
    for (Py_ssize_t k = 0; k < kinds; k++) {
        int64_t *counts = diff + k * row;
        for (int64_t i = 1; i < span; i++) counts[i] += counts[i - 1];
        for (Py_ssize_t j = 0; j < n; j++) out[k * n + j] = counts[position[j] - lo];
    }
done:
    PyMem_Free(diff);
    release_views(views, got);
    return result;
}


/* The leaf value one row reaches in one complete tree of `depth` levels (see complete_tree_leaves). */
static double complete_walk(const double *row, const int32_t *feature, const double *threshold, const double *value,
                            Py_ssize_t depth) {
    Py_ssize_t node = 0;
    for (Py_ssize_t d = 0; d < depth; d++) /* NaN compares false: right, as in numpy */
        node = 2 * node + 2 - (row[feature[node]] <= threshold[node]);
    return value[node - (((Py_ssize_t)1 << depth) - 1)];
}

/* complete_tree_leaves(x, feature, threshold, value, depth) -> bytearray
 *     The same leaves as tree_leaves, from the trees laid out as complete binary trees of `depth`
 *     levels (built once from the node tables by readerproxy.learn.model.complete_trees): tree t's
 *     internal node i (0 = root, children 2i + 1 left and 2i + 2 right) has feature[t, i] and
 *     threshold[t, i]; its leaf j is value[t, j]. A leaf above the last level was copied into every
 *     leaf below it (under splits at +inf, whose two sides lead to the same value), so every walk
 *     takes `depth` steps and no child table is read: a step is `2i + 1 + !(x <= threshold)`.
 *     x float64 rows x width; feature int32 and threshold float64 trees x (2**depth - 1); value
 *     float64 trees x 2**depth. Returns float64 rows x trees, row-major, like tree_leaves.
 */
static PyObject *native_complete_tree_leaves(PyObject *module, PyObject *args) {
    PyObject *objects[4], *result = NULL;
    Py_ssize_t depth;
    if (!PyArg_ParseTuple(args, "OOOOn:complete_tree_leaves", &objects[0], &objects[1], &objects[2], &objects[3],
                          &depth))
        return NULL;
    static const char codes[4] = {'d', 'i', 'd', 'd'};
    static const char *names[4] = {"x", "feature", "threshold", "value"};
    Py_buffer views[4];
    int got = 0;
    for (; got < 4; got++)
        if (get_array(objects[got], &views[got], codes[got], 2, "complete_tree_leaves", names[got]) < 0) goto done;
    if (depth < 0 || depth > 20) {
        PyErr_SetString(PyExc_ValueError, "complete_tree_leaves: depth must be in 0..20");
        goto done;
    }
    const Py_ssize_t internal = ((Py_ssize_t)1 << depth) - 1, leaves_per_tree = internal + 1;
    const double *x = views[0].buf, *threshold = views[2].buf, *value = views[3].buf;
    const int32_t *feature = views[1].buf;
    Py_ssize_t rows = views[0].shape[0], width = views[0].shape[1], trees = views[1].shape[0];
    if (views[1].shape[1] != internal || views[2].shape[0] != trees || views[2].shape[1] != internal ||
        views[3].shape[0] != trees || views[3].shape[1] != leaves_per_tree) {
        PyErr_SetString(PyExc_ValueError,
                        "complete_tree_leaves: feature and threshold need 2**depth - 1 columns, value 2**depth, "
                        "one row per tree each");
        goto done;
    }
    /* For speed, the smallest and largest feature found in one pass the compiler vectorises (a test
     * per entry that stops at the first bad one does not: 7 us a call on the shipped trees). */
    int32_t lowest = 0, highest = 0;
    for (Py_ssize_t i = 0; i < trees * internal; i++) {
        lowest = feature[i] < lowest ? feature[i] : lowest;
        highest = feature[i] > highest ? feature[i] : highest;
    }
    if (lowest < 0 || (trees * internal > 0 && highest >= width)) {
        PyErr_Format(PyExc_ValueError, "complete_tree_leaves: feature %d is not a column of x",
                     (int)(lowest < 0 ? lowest : highest));
        goto done;
    }
    if (rows && trees > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(double) / rows) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyByteArray_FromStringAndSize(NULL, rows * trees * (Py_ssize_t)sizeof(double));
    if (result == NULL) goto done;
    double *out = (double *)PyByteArray_AS_STRING(result);
    /* Chosen for speed: a block of TREES trees at a time for every row, the TREES walks advanced one
     * level at a time (they are independent, so the processor overlaps their loads), and the
     * block's tables stay in the cache while all the rows pass through it. Fixed sizes let the
     * compiler keep the walks' nodes in registers. One row at a time rather than two (2026-11-26):
     * 0.82x the time of two rows on a median page's 187 rows x 200 trees (measured in isolation,
     * same leaves), likely because 8 walks beside the block's table pointers leave the registers
     * free where 16 spilled. The trees left over walk one at a time (`complete_walk`). */
    enum { TREES = 8 };
    Py_ssize_t t0 = 0;
    for (; t0 + TREES <= trees; t0 += TREES) {
        const int32_t *tree_feature[TREES];
        const double *tree_threshold[TREES], *tree_value[TREES];
        for (int k = 0; k < TREES; k++) {
            tree_feature[k] = feature + (t0 + k) * internal;
            tree_threshold[k] = threshold + (t0 + k) * internal;
            tree_value[k] = value + (t0 + k) * leaves_per_tree - internal; /* indexed by the last node */
        }
        for (Py_ssize_t r = 0; r < rows; r++) {
            const double *row = x + r * width;
            Py_ssize_t node[TREES] = {0};
            for (Py_ssize_t d = 0; d < depth; d++)
                for (int k = 0; k < TREES; k++) /* NaN compares false: right, as in numpy */
                    node[k] = 2 * node[k] + 2 - (row[tree_feature[k][node[k]]] <= tree_threshold[k][node[k]]);
            for (int k = 0; k < TREES; k++) out[r * trees + t0 + k] = tree_value[k][node[k]];
        }
    }
    for (; t0 < trees; t0++)
        for (Py_ssize_t r = 0; r < rows; r++)
            out[r * trees + t0] = complete_walk(x + r * width, feature + t0 * internal, threshold + t0 * internal,
                                                value + t0 * leaves_per_tree, depth);
done:
    release_views(views, got);
    return result;
}


/* How many of the n sorted values are <= v (np.searchsorted(values, v, side="right")). */
static Py_ssize_t count_at_most(const int64_t *values, Py_ssize_t n, int64_t v) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (values[mid] <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* element_counts(starts, start, end, index) -> bytearray
 *     Per entry e of index: 0 when e < 0, else how many of `starts` (sorted) lie in
 *     start[e] < s <= end[e], as float64. The reference is readerproxy.learn.blocks._element_counts
 *     (two np.searchsorted(side="right")). starts and index int64, start and end int32 (one entry per
 *     element); unsorted starts or an index past the elements raise ValueError.
 */
static PyObject *native_element_counts(PyObject *module, PyObject *args) {
    PyObject *objects[4], *result = NULL;
    if (!PyArg_ParseTuple(args, "OOOO:element_counts", &objects[0], &objects[1], &objects[2], &objects[3]))
        return NULL;
    static const char codes[4] = {'q', 'i', 'i', 'q'};
    static const char *names[4] = {"starts", "start", "end", "index"};
    Py_buffer views[4];
    int got = 0;
    for (; got < 4; got++)
        if (get_array(objects[got], &views[got], codes[got], 1, "element_counts", names[got]) < 0) goto done;
    const int64_t *starts = views[0].buf, *index = views[3].buf;
    const int32_t *start = views[1].buf, *end = views[2].buf;
    Py_ssize_t n_starts = views[0].shape[0], n_elements = views[1].shape[0], n = views[3].shape[0];
    if (views[2].shape[0] != n_elements) {
        PyErr_SetString(PyExc_ValueError, "element_counts: start and end differ in length");
        goto done;
    }
    for (Py_ssize_t i = 1; i < n_starts; i++)
        if (starts[i] < starts[i - 1]) {
            PyErr_SetString(PyExc_ValueError, "element_counts: starts must be sorted");
            goto done;
        }
    for (Py_ssize_t j = 0; j < n; j++)
        if (index[j] >= n_elements) {
            PyErr_Format(PyExc_ValueError, "element_counts: %lld is not an element", (long long)index[j]);
            goto done;
        }
    result = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    if (result == NULL) goto done;
    double *out = (double *)PyByteArray_AS_STRING(result);
    for (Py_ssize_t j = 0; j < n; j++) {
        int64_t e = index[j];
        out[j] = e < 0 ? 0.0
                       : (double)(count_at_most(starts, n_starts, end[e]) - count_at_most(starts, n_starts, start[e]));
    }
done:
    release_views(views, got);
    return result;
}


/* Groups equal keys (int64) in an open-addressing hash table: group[j] is key j's group, size[g]
 * how many keys group g has, and (when order is not NULL) order[j] how many equal keys come before
 * key j. group, size and order hold n entries each (groups are fewer). 0 ok, -1 no memory (set). */
static int group_keys(const int64_t *keys, Py_ssize_t n, Py_ssize_t *group, Py_ssize_t *size, Py_ssize_t *order) {
    Py_ssize_t capacity = 16, groups = 0;
    while (capacity < 2 * n) capacity *= 2;
    int64_t *slot_key = PyMem_Malloc((size_t)capacity * sizeof(int64_t));
    Py_ssize_t *slot_group = PyMem_Malloc((size_t)capacity * sizeof(Py_ssize_t));
    if (slot_key == NULL || slot_group == NULL) {
        PyMem_Free(slot_key);
        PyMem_Free(slot_group);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < capacity; i++) slot_group[i] = -1;
    for (Py_ssize_t j = 0; j < n; j++) {
        uint64_t h = (uint64_t)keys[j] * 0x9E3779B97F4A7C15ull;
        Py_ssize_t i = (Py_ssize_t)(h >> 32) & (capacity - 1);
        while (slot_group[i] >= 0 && slot_key[i] != keys[j]) i = (i + 1) & (capacity - 1);
        if (slot_group[i] < 0) {
            slot_key[i] = keys[j];
            slot_group[i] = groups;
            size[groups++] = 0;
        }
        group[j] = slot_group[i];
        if (order != NULL) order[j] = size[group[j]];
        size[group[j]]++;
    }
    PyMem_Free(slot_key);
    PyMem_Free(slot_group);
    return 0;
}

/* repeated_items(parent, tag, n_tags, elements, levels) -> (count, item, level, index)
 *     The reference is readerproxy.learn.blocks.repeated_items. Elements are grouped by (parent, tag):
 *     same-tag siblings, numbered in document order. For every block (an element of `elements`), the
 *     element among itself and its ancestors up to `levels` - 1 levels up whose group is largest, the
 *     nearest one when several tie; returned as float64 group size (at least 1), int64 element,
 *     float64 levels up, float64 index in its group. parent int32 (negative: none), tag int64 in
 *     0..n_tags-1, elements int64. The groups are counted with an open-addressing hash table (group_keys).
 */
static PyObject *native_repeated_items(PyObject *module, PyObject *args) {
    PyObject *objects[3], *result = NULL;
    Py_ssize_t n_tags, levels;
    if (!PyArg_ParseTuple(args, "OOnOn:repeated_items", &objects[0], &objects[1], &n_tags, &objects[2], &levels))
        return NULL;
    static const char codes[3] = {'i', 'q', 'q'};
    static const char *names[3] = {"parent", "tag", "elements"};
    Py_buffer views[3];
    int got = 0;
    int64_t *keys = NULL;
    Py_ssize_t *size = NULL, *group = NULL, *order = NULL;
    PyObject *out[4] = {NULL, NULL, NULL, NULL};
    for (; got < 3; got++)
        if (get_array(objects[got], &views[got], codes[got], 1, "repeated_items", names[got]) < 0) goto done;
    const int32_t *parent = views[0].buf;
    const int64_t *tag = views[1].buf, *elements = views[2].buf;
    Py_ssize_t n = views[0].shape[0], n_blocks = views[2].shape[0];
    if (views[1].shape[0] != n || n_tags < 1 || levels < 1 || levels > 64 || n > INT32_MAX / 4) {
        PyErr_SetString(PyExc_ValueError,
                        "repeated_items: parent and tag differ in length, or n_tags < 1, or levels not in 1..64");
        goto done;
    }
    for (Py_ssize_t e = 0; e < n; e++)
        if (parent[e] >= n || tag[e] < 0 || tag[e] >= n_tags) {
            PyErr_Format(PyExc_ValueError, "repeated_items: element %zd has a parent or tag out of range", e);
            goto done;
        }
    for (Py_ssize_t b = 0; b < n_blocks; b++)
        if (elements[b] < 0 || elements[b] >= n) {
            PyErr_SetString(PyExc_ValueError, "repeated_items: elements must be element indices");
            goto done;
        }
    keys = PyMem_Malloc((size_t)(n + 1) * sizeof(int64_t));
    size = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    group = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    order = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    for (int k = 0; k < 4; k++) out[k] = PyByteArray_FromStringAndSize(NULL, n_blocks * 8);
    if (!keys || !size || !group || !order || !out[0] || !out[1] || !out[2] || !out[3]) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t e = 0; e < n; e++) /* the reference's key: one per (parent, tag) pair */
        keys[e] = ((int64_t)parent[e] + 1) * (int64_t)n_tags + tag[e];
    if (group_keys(keys, n, group, size, order) < 0) goto done;
    double *count = (double *)PyByteArray_AS_STRING(out[0]), *level = (double *)PyByteArray_AS_STRING(out[2]),
           *index = (double *)PyByteArray_AS_STRING(out[3]);
    int64_t *item = (int64_t *)PyByteArray_AS_STRING(out[1]);
    for (Py_ssize_t b = 0; b < n_blocks; b++) {
        int64_t e = elements[b], best = e;
        double best_count = (double)size[group[e]];
        if (best_count < 1.0) best_count = 1.0;
        Py_ssize_t best_level = 0;
        for (Py_ssize_t up = 1; up < levels; up++) {
            e = e >= 0 ? parent[e] : -1; /* past the root: none (counts 0, never the largest) */
            if (e < 0) break;
            double c = (double)size[group[e]];
            if (c > best_count) {
                best_count = c;
                best = e;
                best_level = up;
            }
        }
        count[b] = best_count;
        item[b] = best;
        level[b] = (double)best_level;
        index[b] = (double)order[best];
    }
    result = PyTuple_Pack(4, out[0], out[1], out[2], out[3]);
done:
    for (int k = 0; k < 4; k++) Py_XDECREF(out[k]);
    PyMem_Free(keys);
    PyMem_Free(size);
    PyMem_Free(group);
    PyMem_Free(order);
    release_views(views, got);
    return result;
}


/* key_counts(keys) -> bytearray
 *     For every entry of keys (int64), how many entries have the same key, as float64: what
 *     np.bincount(inverse)[inverse] gives with inverse = np.unique(keys, return_inverse=True)[1] (the
 *     reference, in readerproxy.learn.blocks._columns' same-tag siblings). Counted in an
 *     open-addressing hash table instead of a sort.
 */
static PyObject *native_key_counts(PyObject *module, PyObject *args) {
    PyObject *keys_obj, *result = NULL;
    if (!PyArg_ParseTuple(args, "O:key_counts", &keys_obj)) return NULL;
    Py_buffer view;
    if (get_array(keys_obj, &view, 'q', 1, "key_counts", "keys") < 0) return NULL;
    Py_ssize_t n = view.shape[0];
    Py_ssize_t *group = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    Py_ssize_t *size = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    if (group == NULL || size == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (group_keys(view.buf, n, group, size, NULL) < 0) goto done;
    result = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    if (result == NULL) goto done;
    double *out = (double *)PyByteArray_AS_STRING(result);
    for (Py_ssize_t j = 0; j < n; j++) out[j] = (double)size[group[j]];
done:
    PyMem_Free(group);
    PyMem_Free(size);
    PyBuffer_Release(&view);
    return result;
}

/* tags_in_source(html, names) -> list
 *     Those of `names` (lower-case ASCII str) that follow some "<" of `html`, ASCII case aside, in the
 *     order given. Reference: document._tags_in_source (a regular expression, ASCII-case-insensitive).
 * source_tags(html, names) -> (list, int)
 *     The same list and html.count("<"), in the same pass (which then reads every "<"). Reference:
 *     clean.source_tags' Python lines.
 */
static PyObject *tags_in_source_pass(PyObject *html, PyObject *names, int count_all) {
    Py_ssize_t n_names = PyTuple_GET_SIZE(names);
    if (n_names > 64) {
        PyErr_SetString(PyExc_ValueError, "tags_in_source: at most 64 names");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n_names; k++) {
        PyObject *name = PyTuple_GET_ITEM(names, k);
        if (!PyUnicode_Check(name) || !PyUnicode_IS_ASCII(name) || PyUnicode_GET_LENGTH(name) == 0) {
            PyErr_SetString(PyExc_TypeError, "tags_in_source: names must be non-empty ASCII str");
            return NULL;
        }
        for (Py_ssize_t j = 0; j < PyUnicode_GET_LENGTH(name); j++)
            if (ascii_lower(PyUnicode_READ_CHAR(name, j)) != PyUnicode_READ_CHAR(name, j)) {
                PyErr_SetString(PyExc_ValueError, "tags_in_source: names must be lower-case");
                return NULL;
            }
    }
    /* For speed: the names by first letter, so a "<" costs one lookup unless a name starts there. */
    uint64_t by_letter[26] = {0};
    for (Py_ssize_t k = 0; k < n_names; k++) {
        Py_UCS4 first = PyUnicode_READ_CHAR(PyTuple_GET_ITEM(names, k), 0);
        if (first >= 'a' && first <= 'z') by_letter[first - 'a'] |= 1ULL << k;
    }
    const int kind = PyUnicode_KIND(html);
    const void *data = PyUnicode_DATA(html);
    const Py_ssize_t len = PyUnicode_GET_LENGTH(html);
    uint64_t found = 0, all = 0;
    Py_ssize_t count = 0;
    for (int letter = 0; letter < 26; letter++) all |= by_letter[letter];
    for (Py_ssize_t i = 0; count_all || found != all; i++) {
        if ((i = next_ascii(kind, data, i, len, '<')) < 0) break;
        count++;
        if (i + 1 >= len) break;
        Py_UCS4 first = ascii_lower(PyUnicode_READ(kind, data, i + 1));
        if (first < 'a' || first > 'z') continue;
        for (uint64_t left = by_letter[first - 'a'] & ~found; left != 0; left &= left - 1) {
            int k = __builtin_ctzll(left);
            PyObject *name = PyTuple_GET_ITEM(names, k);
            const Py_UCS1 *want = PyUnicode_1BYTE_DATA(name);
            Py_ssize_t size = PyUnicode_GET_LENGTH(name), j = 1;
            while (j < size && i + 1 + j < len && ascii_lower(PyUnicode_READ(kind, data, i + 1 + j)) == want[j]) j++;
            if (j == size) found |= 1ULL << k;
        }
    }
    PyObject *result = PyList_New(0);
    for (Py_ssize_t k = 0; result != NULL && k < n_names; k++)
        if ((found >> k & 1) && PyList_Append(result, PyTuple_GET_ITEM(names, k)) < 0) Py_CLEAR(result);
    if (result == NULL || !count_all) return result;
    return Py_BuildValue("(Nn)", result, count);
}

static PyObject *native_tags_in_source(PyObject *module, PyObject *args) {
    PyObject *html, *names;
    if (!PyArg_ParseTuple(args, "UO!:tags_in_source", &html, &PyTuple_Type, &names)) return NULL;
    return tags_in_source_pass(html, names, 0);
}

static PyObject *native_source_tags(PyObject *module, PyObject *args) {
    PyObject *html, *names;
    if (!PyArg_ParseTuple(args, "UO!:source_tags", &html, &PyTuple_Type, &names)) return NULL;
    return tags_in_source_pass(html, names, 1);
}

/* How many of the n sorted values are < v (np.searchsorted(values, v, side="left")). */
static Py_ssize_t count_below(const int64_t *values, Py_ssize_t n, int64_t v) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (values[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The block columns' outputs before the tag-group and container one-hots, and after them
 * (block_columns' `rows` lists the feature row of each, in this order). */
enum {
    BC_CHARS, BC_WORDS, BC_LINK_DENSITY, BC_SUBTREE_CHARS, BC_TAG_RATIO, BC_TEXT_DENSITY, BC_SCORE, BC_CONTEXT,
    BC_OWN, BC_UNLIKELY, BC_SELECTED, BC_IN_ROOT, BC_DEPTH, BC_POSITION, BC_PUNCTUATION, BC_DIGITS, BC_UPPER,
    BC_CHARS_SHARE, BC_HEAD
};
enum {
    BC_PARENT_LINK_DENSITY, BC_GRANDPARENT_LINK_DENSITY, BC_PARENT_CHARS_SHARE, BC_GRANDPARENT_CHARS_SHARE,
    BC_PARENT_BLOCKS, BC_SAME_TAG, BC_POSITION_IN_ROOT, BC_PAGE_LINK_DENSITY, BC_PAGE_SELECTED_SHARE,
    BC_ROOT_SHARE, BC_TAIL
};
#define BC_ARRAYS 22

/* A tag code's entry of learn.blocks._code_table: its container kind + 1 in bits 0-7, its own-tag
 * group + 1 in bits 8-15 (0: none, so -1 here), the groups structure_columns counts from bit 16. */
static inline int64_t tag_container(int64_t info) { return (info & 0xff) - 1; }
static inline int64_t tag_group(int64_t info) { return (info >> 8 & 0xff) - 1; }

/* block_columns(out, rows, n_groups, n_containers, elements, start, end, parent, kind, subtree_chars,
 *               subtree_anchor, chars, words, anchor, own, context, unlikely, score, chosen, tag_id,
 *               tag_info, text_tokens, text_owner, table, texts, root, first,
 *               body_tokens, wrap) -> (parent, grandparent, page_chars) | None
 *     The reference is readerproxy.learn.blocks._columns: in one pass over the blocks (`elements`), the
 *     columns that need no logarithm, and the raw values of those that do, written straight into the
 *     rows of the feature matrix `out` (float64, features x blocks, C order) that `rows` (int64) names:
 *     first the BC_HEAD columns of the first enum above, then n_groups own-tag one-hots, n_containers
 *     "inside a container" columns, then the BC_TAIL columns of the second enum. Where _columns takes a
 *     logarithm (log_chars, log_words, log_subtree_chars, tag_ratio, the signed logs of the heuristic's
 *     score and context, log_parent_blocks, log_same_tag_siblings) this writes its argument, and the
 *     caller applies numpy's function to those rows, so every float is computed as _columns computes
 *     it: the same IEEE operations in the same order (a division, a product, ceil, min and max).
 *     Sums: chars and anchor are character counts, whole numbers, so their sums are exact in any order
 *     (checked: a fractional value makes this return None, and so do block starts out of order).
 *     Per-element arrays: start, end, parent int32; subtree_chars, subtree_anchor, tag_id int64; chars,
 *     words, anchor, own, context, score float64; unlikely, chosen one byte. kind (uint8, one per
 *     token): 0 is text. tag_info (int64, one per tag code; tag_container and tag_group above): the
 *     container kind (< n_containers) and own-tag group (< n_groups) of each tag, or -1. text_tokens (int64) and
 *     text_owner (int32): the text tokens and their holders (class counts as class_counts makes them,
 *     table uint8). Returns the blocks' parents and grandparents (int64 bytearrays, -1: none) and the
 *     page's characters (1.0 when it has none).
 *     "Inside a container" and depth count ranges as _columns' _containing does: per kind, the ranges
 *     (start + 1, end) of the containers and of every element and (start, end) of the unlikely ones,
 *     counted at each block's start with a difference array over the (sorted) block starts.
 */
/* For the kernels that write rows of a features x blocks matrix `out`: 0 when `out` is writable and
   each of `rows[0..n_rows)` is one of its rows, else -1 with ValueError set. */
static int check_out_rows(const Py_buffer *out, const int64_t *rows, Py_ssize_t n_rows, const char *function) {
    if (out->readonly) {
        PyErr_Format(PyExc_ValueError, "%s: out must be writable", function);
        return -1;
    }
    for (Py_ssize_t r = 0; r < n_rows; r++)
        if (rows[r] < 0 || rows[r] >= out->shape[0]) {
            PyErr_Format(PyExc_ValueError, "%s: a row is not a row of out", function);
            return -1;
        }
    return 0;
}

static PyObject *native_block_columns(PyObject *module, PyObject *args) {
    PyObject *objects[BC_ARRAYS], *texts, *result = NULL;
    Py_ssize_t n_groups, n_containers, root, first;
    double body_tokens, wrap;
    if (!PyArg_ParseTuple(args, "OOnnOOOOOOOOOOOOOOOOOOOOO!nndd:block_columns", &objects[0], &objects[1], &n_groups,
                          &n_containers, &objects[2], &objects[3], &objects[4], &objects[5], &objects[6], &objects[7],
                          &objects[8], &objects[9], &objects[10], &objects[11], &objects[12], &objects[13],
                          &objects[14], &objects[15], &objects[16], &objects[17], &objects[18], &objects[19],
                          &objects[20], &objects[21], &PyList_Type, &texts, &root, &first, &body_tokens, &wrap))
        return NULL;
    static const char codes[BC_ARRAYS] = {'d', 'q', 'q', 'i', 'i', 'i', 'B', 'q', 'q', 'd', 'd',
                                          'd', 'd', 'd', 'B', 'd', 'B', 'q', 'q', 'q', 'i', 'B'};
    static const char *names[BC_ARRAYS] = {
        "out", "rows", "elements", "start", "end", "parent", "kind", "subtree_chars", "subtree_anchor", "chars",
        "words", "anchor", "own", "context", "unlikely", "score", "chosen", "tag_id", "tag_info",
        "text_tokens", "text_owner", "table"};
    Py_buffer views[BC_ARRAYS];
    int got = 0;
    int64_t *scratch = NULL, *parent_out = NULL, *grandparent_out = NULL;
    double *classes = NULL;
    Py_ssize_t *group = NULL, *size = NULL;
    PyObject *parents = NULL, *grandparents = NULL;
    for (; got < BC_ARRAYS; got++)
        if (get_array(objects[got], &views[got], codes[got], got == 0 ? 2 : 1, "block_columns", names[got]) < 0)
            goto done;
    double *out = views[0].buf;
    const int64_t *rows = views[1].buf, *elements = views[2].buf;
    const int32_t *start = views[3].buf, *end = views[4].buf, *parent = views[5].buf;
    const uint8_t *kind = views[6].buf;
    const int64_t *subtree_chars = views[7].buf, *subtree_anchor = views[8].buf;
    const double *chars = views[9].buf, *words = views[10].buf, *anchor = views[11].buf, *own = views[12].buf;
    const double *context = views[13].buf;
    const uint8_t *unlikely = views[14].buf;
    const double *score = views[15].buf;
    const uint8_t *chosen = views[16].buf;
    const int64_t *tag_id = views[17].buf, *tag_info = views[18].buf, *text_tokens = views[19].buf;
    const int32_t *text_owner = views[20].buf;
    const uint8_t *table = views[21].buf;
    const Py_ssize_t n = views[2].shape[0], n_elements = views[3].shape[0];
    const Py_ssize_t n_tokens = views[6].shape[0], n_codes = views[18].shape[0], n_text = views[19].shape[0];
    const Py_ssize_t table_size = views[21].shape[0];
    const Py_ssize_t n_rows = BC_HEAD + n_groups + n_containers + BC_TAIL;
    int ok = views[0].shape[1] == n && n_groups >= 0 && n_containers >= 0 && views[1].shape[0] == n_rows &&
             views[20].shape[0] == n_text && table_size > 0 &&
             n_elements > 0 && root < n_elements && body_tokens > 0;
    for (int a = 4; a < 18 && ok; a++)
        if (a != 6) ok = views[a].shape[0] == n_elements;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "block_columns: the arrays' lengths do not agree");
        goto done;
    }
    if (check_out_rows(&views[0], rows, n_rows, "block_columns") < 0) goto done;
    for (Py_ssize_t e = 0; e < n_elements; e++) {
        if (parent[e] < -1 || parent[e] >= n_elements || tag_id[e] < 0 || tag_id[e] >= n_codes || start[e] < 0 ||
            end[e] >= n_tokens) {
            PyErr_Format(PyExc_ValueError, "block_columns: element %zd's parent, tag or span is out of range", e);
            goto done;
        }
        if (chars[e] != floor(chars[e]) || anchor[e] != floor(anchor[e])) { /* not whole numbers: numpy's sums */
            result = Py_NewRef(Py_None);
            goto done;
        }
    }
    for (Py_ssize_t c = 0; c < n_codes; c++)
        if (tag_container(tag_info[c]) >= n_containers || tag_group(tag_info[c]) >= n_groups) {
            PyErr_SetString(PyExc_ValueError, "block_columns: a container kind or tag group is out of range");
            goto done;
        }
    for (Py_ssize_t j = 0; j < n; j++) {
        if (elements[j] < 0 || elements[j] >= n_elements) {
            PyErr_SetString(PyExc_ValueError, "block_columns: a block is not an element");
            goto done;
        }
        if (j && start[elements[j]] < start[elements[j - 1]]) { /* the difference arrays need sorted starts */
            result = Py_NewRef(Py_None);
            goto done;
        }
    }

    /* Scratch: block of each element, tags before each token, block starts, blocks per parent key,
     * same-tag keys, one difference array per container kind + depth + unlikely. */
    const Py_ssize_t kinds = n_containers + 2, stride = n + 1;
    Py_ssize_t scratch_size = n_elements + (n_tokens + 1) + n + (n_elements + 1) + n + kinds * stride;
    scratch = PyMem_Calloc((size_t)scratch_size, sizeof(int64_t));
    classes = PyMem_Calloc((size_t)(4 * n + 1), sizeof(double));
    group = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    size = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    parents = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    grandparents = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (scratch == NULL || classes == NULL || group == NULL || size == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (parents == NULL || grandparents == NULL) goto done;
    int64_t *block_of = scratch, *tags_before = block_of + n_elements, *position = tags_before + n_tokens + 1;
    int64_t *blocks_of_parent = position + n, *same_key = blocks_of_parent + n_elements + 1;
    int64_t *diff = same_key + n;
    parent_out = (int64_t *)PyByteArray_AS_STRING(parents);
    grandparent_out = (int64_t *)PyByteArray_AS_STRING(grandparents);

    for (Py_ssize_t e = 0; e < n_elements; e++) block_of[e] = -1;
    for (Py_ssize_t j = 0; j < n; j++) {
        int64_t e = elements[j];
        block_of[e] = j;
        position[j] = start[e];
        parent_out[j] = parent[e];
        grandparent_out[j] = parent[e] >= 0 ? parent[parent[e]] : -1;
        blocks_of_parent[parent[e] + 1]++;
        same_key[j] = (parent[e] + 1) * (int64_t)n_codes + tag_id[e];
    }
    if (group_keys(same_key, n, group, size, NULL) < 0) goto done;
    for (Py_ssize_t i = 0; i < n_tokens; i++) tags_before[i + 1] = tags_before[i] + (kind[i] != TEXT);

    /* Character classes of the blocks' own text (_character_counts; a negative holder indexes from the
     * end, as numpy's block_of_element[owner] does). */
    uint8_t seen = 0;
    for (Py_ssize_t k = 0; k < n_text; k++) {
        int64_t owner = text_owner[k] < 0 ? text_owner[k] + n_elements : text_owner[k];
        if (owner < 0 || owner >= n_elements) {
            PyErr_SetString(PyExc_ValueError, "block_columns: a text owner is not an element");
            goto done;
        }
        if (block_of[owner] < 0) continue;
        PyObject *text = text_at(texts, text_tokens[k], "block_columns");
        if (text == NULL) goto done;
        int64_t counted[4] = {0, 0, 0, 0};
        count_classes(text, table, table_size, counted, &seen);
        for (int c = 0; c < 4; c++) classes[4 * block_of[owner] + c] += (double)counted[c];
    }
    if (seen > 3) {
        PyErr_SetString(PyExc_ValueError, "block_columns: table entries must be < 4");
        goto done;
    }

    /* The ranges around each block start: +1 at the first block start >= the range's first token,
     * -1 at the first one past its last token (a range with first > last + 1 counts -1 in between,
     * as #(first <= p) - #(last < p) does). */
    const int64_t depth_kind = n_containers, unlikely_kind = n_containers + 1;
    double page_chars = 0.0, page_anchor = 0.0;
    for (Py_ssize_t e = 0; e < n_elements; e++) {
        int64_t container = tag_container(tag_info[tag_id[e]]);
        Py_ssize_t opened = count_below(position, n, (int64_t)start[e] + 1);
        Py_ssize_t closed = count_below(position, n, (int64_t)end[e] + 1);
        if (container >= 0) {
            diff[container * stride + opened]++;
            diff[container * stride + closed]--;
        }
        diff[depth_kind * stride + opened]++;
        diff[depth_kind * stride + closed]--;
        if (unlikely[e]) {
            diff[unlikely_kind * stride + count_below(position, n, start[e])]++;
            diff[unlikely_kind * stride + closed]--;
        }
        page_chars += chars[e]; /* whole numbers (checked above): exact in any order */
        page_anchor += anchor[e];
    }
    for (Py_ssize_t k = 0; k < kinds; k++)
        for (Py_ssize_t j = 1; j < n; j++) diff[k * stride + j] += diff[k * stride + j - 1];
    if (page_chars == 0.0) page_chars = 1.0; /* `float(features.chars.sum()) or 1.0` */

    int32_t root_start = 0, root_end = 0, root_span = 1;
    double root_share = 0.0;
    if (root >= 0) {
        root_start = start[root];
        root_end = end[root];
        root_span = root_end - root_start > 1 ? root_end - root_start : 1;
        root_share = (double)subtree_chars[root] / page_chars;
    }
    double *head[BC_HEAD], *tail[BC_TAIL];
    for (int c = 0; c < BC_HEAD; c++) head[c] = out + rows[c] * n;
    for (int c = 0; c < BC_TAIL; c++) tail[c] = out + rows[BC_HEAD + n_groups + n_containers + c] * n;
    double selected_chars = 0.0;
    for (Py_ssize_t j = 0; j < n; j++) {
        const int64_t e = elements[j];
        const double c = chars[e], w = words[e], subtree = (double)subtree_chars[e];
        const double tags = (double)(tags_before[end[e] + 1] - tags_before[start[e]]);
        const double lines = ceil(c * 1.2 / wrap); /* text_density's 80-character lines */
        head[BC_CHARS][j] = c;
        head[BC_WORDS][j] = w;
        head[BC_LINK_DENSITY][j] = c > 0 ? anchor[e] / c : 0.0;
        head[BC_SUBTREE_CHARS][j] = subtree;
        head[BC_TAG_RATIO][j] = subtree / (tags > 1.0 ? tags : 1.0);
        head[BC_TEXT_DENSITY][j] = w / (lines > 1.0 ? lines : 1.0);
        head[BC_SCORE][j] = score[e];
        head[BC_CONTEXT][j] = context[e];
        head[BC_OWN][j] = own[e];
        head[BC_UNLIKELY][j] = diff[unlikely_kind * stride + j] > 0 ? 1.0 : 0.0;
        head[BC_SELECTED][j] = chosen[e] ? 1.0 : 0.0;
        head[BC_IN_ROOT][j] = root >= 0 && start[e] >= root_start && end[e] <= root_end ? 1.0 : 0.0;
        head[BC_DEPTH][j] = (double)diff[depth_kind * stride + j];
        head[BC_POSITION][j] = (double)((int64_t)start[e] - first) / body_tokens;
        head[BC_PUNCTUATION][j] = c > 0 ? classes[4 * j + 1] / c : 0.0;
        head[BC_DIGITS][j] = c > 0 ? classes[4 * j + 2] / c : 0.0;
        head[BC_UPPER][j] = c > 0 ? classes[4 * j + 3] / c : 0.0;
        head[BC_CHARS_SHARE][j] = c / page_chars;
        const int64_t own_group = tag_group(tag_info[tag_id[e]]);
        for (Py_ssize_t g = 0; g < n_groups; g++) out[rows[BC_HEAD + g] * n + j] = own_group == g ? 1.0 : 0.0;
        for (Py_ssize_t k = 0; k < n_containers; k++)
            out[rows[BC_HEAD + n_groups + k] * n + j] = diff[k * stride + j] > 0 ? 1.0 : 0.0;
        const int64_t p = parent_out[j], gp = grandparent_out[j];
        const double parent_chars = p >= 0 ? (double)subtree_chars[p] : 0.0;
        const double grandparent_chars = gp >= 0 ? (double)subtree_chars[gp] : 0.0;
        const double parent_anchor = p >= 0 ? (double)subtree_anchor[p] : 0.0;
        const double grandparent_anchor = gp >= 0 ? (double)subtree_anchor[gp] : 0.0;
        tail[BC_PARENT_LINK_DENSITY][j] = parent_chars > 0 ? parent_anchor / parent_chars : 0.0;
        tail[BC_GRANDPARENT_LINK_DENSITY][j] = grandparent_chars > 0 ? grandparent_anchor / grandparent_chars : 0.0;
        tail[BC_PARENT_CHARS_SHARE][j] = parent_chars / page_chars;
        tail[BC_GRANDPARENT_CHARS_SHARE][j] = grandparent_chars / page_chars;
        tail[BC_PARENT_BLOCKS][j] = (double)blocks_of_parent[p + 1];
        tail[BC_SAME_TAG][j] = (double)size[group[j]];
        if (root >= 0) {
            double at = (double)((int64_t)start[e] - root_start) / (double)root_span;
            tail[BC_POSITION_IN_ROOT][j] = at < -1.0 ? -1.0 : at > 2.0 ? 2.0 : at;
        } else {
            tail[BC_POSITION_IN_ROOT][j] = -1.0;
        }
        if (chosen[e]) selected_chars += c; /* whole numbers: exact in any order */
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        tail[BC_PAGE_LINK_DENSITY][j] = page_anchor / page_chars;
        tail[BC_PAGE_SELECTED_SHARE][j] = selected_chars / page_chars;
        tail[BC_ROOT_SHARE][j] = root_share;
    }
    result = Py_BuildValue("(OOd)", parents, grandparents, page_chars);
done:
    Py_XDECREF(parents);
    Py_XDECREF(grandparents);
    PyMem_Free(scratch);
    PyMem_Free(classes);
    PyMem_Free(group);
    PyMem_Free(size);
    release_views(views, got);
    return result;
}

/* The tag groups structure_columns counts (bit g of group_bits), and the rows it writes, in order. */
enum { SC_CONTROLS, SC_HEADINGS, SC_IMAGES, SC_TIMES, SC_LINKS, SC_GROUPS };
enum {
    SC_REPEAT, SC_REPEAT_LEVEL, SC_ITEM_CHARS, SC_ITEM_LINK_DENSITY, SC_GROUP_SHARE, SC_ITEM_INDEX,
    SC_CONTROLS_GRANDPARENT, SC_CONTROLS_ANCESTOR4, SC_HEADINGS_GRANDPARENT, SC_IMAGES_GRANDPARENT,
    SC_TIMES_GRANDPARENT, SC_FROM_H1, SC_BELOW_ROOT, SC_ITEM_HEADINGS, SC_ITEM_IMAGES, SC_ITEM_TIMES,
    SC_ITEM_CONTROLS, SC_ITEM_LINKS, SC_ROWS
};
#define SC_ARRAYS 15

/* How many of the n sorted values v satisfy start < v <= end (element_counts' count). */
static double count_inside(const int64_t *values, Py_ssize_t n, int32_t start, int32_t end) {
    return (double)(count_at_most(values, n, end) - count_at_most(values, n, start));
}

/* structure_columns(out, rows, elements, parent, start, end, subtree_chars, subtree_anchor, tag_id,
 *                   group_bits, count, item, level, index, depth, h1, root, first, body_tokens)
 *     -> (controls, headings, images, times, links, heading_blocks) | None
 *     The reference is readerproxy.learn.blocks.structure_columns (all of it but title_overlap) and
 *     the item counts of page_type_columns (item_log_*), written into the rows of `out` (float64,
 *     features x blocks, C order) that `rows` (int64, SC_ROWS entries, in the order of the second enum
 *     above) names; where the reference takes a logarithm this writes its argument (the caller applies
 *     numpy's log or log1p to those rows). Per element: parent, start, end int32; subtree_chars,
 *     subtree_anchor, tag_id int64. group_bits (int64, one per tag code, learn.blocks._code_table):
 *     bit 16 + g when the tag is in group g of the first enum. count, level, index float64 and item
 *     int64: each block's repeated item (repeated_items); depth float64: each block's depth. h1: the tag code of "h1" or -1; root:
 *     the heuristic's article root or -1; first and body_tokens: the body's first token and length.
 *     Returns the start tokens (int64 bytearrays) of each group's elements in document order, what
 *     TagCodes.starts gives, and the blocks (indices into elements, int64) whose tag is a heading;
 *     None when the starts are not sorted (element_counts' binary search needs that).
 *     page_chars (the top elements' characters) is summed in int64, exact as numpy's float sum of
 *     these whole numbers is.
 */
static PyObject *native_structure_columns(PyObject *module, PyObject *args) {
    PyObject *objects[SC_ARRAYS], *result = NULL, *groups[SC_GROUPS] = {NULL}, *heading_blocks = NULL;
    Py_ssize_t h1, root, first;
    double body_tokens;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOOnnnd:structure_columns", &objects[0], &objects[1], &objects[2],
                          &objects[3], &objects[4], &objects[5], &objects[6], &objects[7], &objects[8], &objects[9],
                          &objects[10], &objects[11], &objects[12], &objects[13], &objects[14], &h1, &root, &first,
                          &body_tokens))
        return NULL;
    static const char codes[SC_ARRAYS] = {'d', 'q', 'q', 'i', 'i', 'i', 'q', 'q', 'q', 'q', 'd', 'q', 'd', 'd', 'd'};
    static const char *names[SC_ARRAYS] = {"out",   "rows",        "elements",       "parent", "start",
                                           "end",   "subtree_chars", "subtree_anchor", "tag_id", "group_bits",
                                           "count", "item",        "level",          "index",  "depth"};
    Py_buffer views[SC_ARRAYS];
    int got = 0;
    for (; got < SC_ARRAYS; got++)
        if (get_array(objects[got], &views[got], codes[got], got == 0 ? 2 : 1, "structure_columns", names[got]) < 0)
            goto done;
    double *out = views[0].buf;
    const int64_t *rows = views[1].buf, *elements = views[2].buf;
    const int32_t *parent = views[3].buf, *start = views[4].buf, *end = views[5].buf;
    const int64_t *subtree_chars = views[6].buf, *subtree_anchor = views[7].buf, *tag_id = views[8].buf;
    const int64_t *group_bits = views[9].buf;
    const double *count = views[10].buf, *level = views[12].buf, *index = views[13].buf, *depth = views[14].buf;
    const int64_t *item = views[11].buf;
    const Py_ssize_t n = views[2].shape[0], n_elements = views[3].shape[0];
    const Py_ssize_t n_codes = views[9].shape[0];
    int ok = views[0].shape[1] == n && views[1].shape[0] == SC_ROWS && n_elements > 0 && body_tokens > 0 &&
             h1 < n_codes && root < n_elements;
    for (int a = 4; a < 9 && ok; a++) ok = views[a].shape[0] == n_elements;
    for (int a = 10; a < SC_ARRAYS && ok; a++) ok = views[a].shape[0] == n;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "structure_columns: the arrays' lengths do not agree");
        goto done;
    }
    if (check_out_rows(&views[0], rows, SC_ROWS, "structure_columns") < 0) goto done;
    for (Py_ssize_t e = 0; e < n_elements; e++)
        if (parent[e] < -1 || parent[e] >= n_elements || tag_id[e] < 0 || tag_id[e] >= n_codes) {
            PyErr_Format(PyExc_ValueError, "structure_columns: element %zd's parent or tag is out of range", e);
            goto done;
        }
    for (Py_ssize_t j = 0; j < n; j++)
        if (elements[j] < 0 || elements[j] >= n_elements || item[j] < 0 || item[j] >= n_elements) {
            PyErr_SetString(PyExc_ValueError, "structure_columns: a block or item is not an element");
            goto done;
        }

    /* Each group's start tokens, in document order (TagCodes.starts). */
    Py_ssize_t sizes[SC_GROUPS] = {0}, filled[SC_GROUPS] = {0};
    for (Py_ssize_t e = 0; e < n_elements; e++)
        for (int g = 0; g < SC_GROUPS; g++) sizes[g] += group_bits[tag_id[e]] >> (16 + g) & 1;
    int64_t *starts[SC_GROUPS];
    for (int g = 0; g < SC_GROUPS; g++) {
        groups[g] = PyByteArray_FromStringAndSize(NULL, sizes[g] * (Py_ssize_t)sizeof(int64_t));
        if (groups[g] == NULL) goto done;
        starts[g] = (int64_t *)PyByteArray_AS_STRING(groups[g]);
    }
    for (Py_ssize_t e = 0; e < n_elements; e++) {
        int64_t bits = group_bits[tag_id[e]] >> 16 & ((1 << SC_GROUPS) - 1);
        for (int g = 0; bits; g++, bits >>= 1)
            if (bits & 1) {
                if (filled[g] && starts[g][filled[g] - 1] > start[e]) { /* unsorted: numpy decides */
                    result = Py_NewRef(Py_None);
                    goto done;
                }
                starts[g][filled[g]++] = start[e];
            }
    }

    int64_t page_chars_sum = 0;
    for (Py_ssize_t e = 0; e < n_elements; e++)
        if (parent[e] < 0) page_chars_sum += subtree_chars[e];
    const double page_chars = page_chars_sum ? (double)page_chars_sum : 1.0;
    int64_t h1_token = -1;
    for (Py_ssize_t e = 0; h1 >= 0 && e < n_elements; e++)
        if (tag_id[e] == h1) {
            h1_token = start[e];
            break;
        }
    int64_t root_depth = 0;
    for (int64_t ancestor = root; ancestor >= 0 && root_depth < n_elements;) {
        ancestor = parent[ancestor];
        root_depth += ancestor >= 0;
    }
    Py_ssize_t headings = 0;
    for (Py_ssize_t j = 0; j < n; j++) headings += group_bits[tag_id[elements[j]]] >> (16 + SC_HEADINGS) & 1;
    heading_blocks = PyByteArray_FromStringAndSize(NULL, headings * (Py_ssize_t)sizeof(int64_t));
    if (heading_blocks == NULL) goto done;
    int64_t *heading_block = (int64_t *)PyByteArray_AS_STRING(heading_blocks);
    headings = 0;
    for (Py_ssize_t j = 0; j < n; j++)
        if (group_bits[tag_id[elements[j]]] >> (16 + SC_HEADINGS) & 1) heading_block[headings++] = j;
    double *row[SC_ROWS];
    for (int r = 0; r < SC_ROWS; r++) row[r] = out + rows[r] * n;
    for (Py_ssize_t j = 0; j < n; j++) {
        const int64_t e = elements[j], it = item[j], it_parent = parent[it];
        const int64_t p = parent[e], grandparent = p >= 0 ? parent[p] : -1;
        int64_t ancestor4 = grandparent;
        for (int up = 0; up < 2; up++) ancestor4 = ancestor4 >= 0 ? parent[ancestor4] : -1;
        if (ancestor4 < 0) ancestor4 = grandparent;
        const double item_chars = (double)subtree_chars[it];
        row[SC_REPEAT][j] = count[j];
        row[SC_REPEAT_LEVEL][j] = level[j];
        row[SC_ITEM_CHARS][j] = item_chars;
        row[SC_ITEM_LINK_DENSITY][j] = item_chars > 0 ? (double)subtree_anchor[it] / item_chars : 0.0;
        row[SC_GROUP_SHARE][j] = (double)subtree_chars[it_parent >= 0 ? it_parent : it] / page_chars;
        row[SC_ITEM_INDEX][j] = index[j];
        const int64_t around[5] = {grandparent, ancestor4, grandparent, grandparent, grandparent};
        const int kinds[5] = {SC_CONTROLS, SC_CONTROLS, SC_HEADINGS, SC_IMAGES, SC_TIMES};
        for (int k = 0; k < 5; k++)
            row[SC_CONTROLS_GRANDPARENT + k][j] =
                around[k] < 0 ? 0.0 : count_inside(starts[kinds[k]], sizes[kinds[k]], start[around[k]], end[around[k]]);
        row[SC_FROM_H1][j] = h1_token >= 0 ? (double)((int64_t)start[e] - h1_token) / body_tokens : -2.0;
        row[SC_BELOW_ROOT][j] = root >= 0 ? depth[j] - (double)root_depth : -1.0;
        const int item_kinds[5] = {SC_HEADINGS, SC_IMAGES, SC_TIMES, SC_CONTROLS, SC_LINKS};
        for (int k = 0; k < 5; k++)
            row[SC_ITEM_HEADINGS + k][j] = count_inside(starts[item_kinds[k]], sizes[item_kinds[k]], start[it], end[it]);
    }
    result = Py_BuildValue("(OOOOOO)", groups[0], groups[1], groups[2], groups[3], groups[4], heading_blocks);
done:
    for (int g = 0; g < SC_GROUPS; g++) Py_XDECREF(groups[g]);
    Py_XDECREF(heading_blocks);
    release_views(views, got);
    return result;
}

/* block_neighbours(out, sources, previous, next, edge, parent, chars_row, blocks_row, mean_row, selected_row,
 *                  smoothed_row, weight, radius) -> None
 *     The reference is the end of readerproxy.learn.blocks._columns, on the rows of `out` (float64,
 *     features x blocks, C order) that block_columns wrote and numpy took the logarithms of: each
 *     block's previous and next block's value of row sources[k] into rows previous[k] and next[k]
 *     (edge[k] at the ends; _previous_next), and the mean of row chars_row over the blocks of the
 *     same parent (int64, -1: none) into row mean_row, divided by the counts in row blocks_row: the
 *     sums added in block order from 0.0, as np.bincount(parent + 1, weights=...) adds them.
 *     sources, previous and next int64, edge float64, one entry each per shifted row. And row
 *     selected_row smoothed into smoothed_row: per block, the sum from 0.0, left to right, of
 *     weight * each value of the window of `radius` blocks on each side (the ends repeated), what
 *     np.convolve(edge-padded row, [weight] * (2 radius + 1), "valid") adds (a dot product each).
 */
static PyObject *native_block_neighbours(PyObject *module, PyObject *args) {
    PyObject *objects[6], *result = NULL;
    Py_ssize_t chars_row, blocks_row, mean_row, selected_row, smoothed_row, radius;
    double weight;
    if (!PyArg_ParseTuple(args, "OOOOOOnnnnndn:block_neighbours", &objects[0], &objects[1], &objects[2],
                          &objects[3], &objects[4], &objects[5], &chars_row, &blocks_row, &mean_row, &selected_row,
                          &smoothed_row, &weight, &radius))
        return NULL;
    static const char codes[6] = {'d', 'q', 'q', 'q', 'd', 'q'};
    static const char *names[6] = {"out", "sources", "previous", "next", "edge", "parent"};
    Py_buffer views[6];
    int got = 0;
    double *sums = NULL;
    for (; got < 6; got++)
        if (get_array(objects[got], &views[got], codes[got], got == 0 ? 2 : 1, "block_neighbours", names[got]) < 0)
            goto done;
    double *out = views[0].buf;
    const int64_t *sources = views[1].buf, *previous = views[2].buf, *next = views[3].buf, *parent = views[5].buf;
    const double *edge = views[4].buf;
    const Py_ssize_t n_features = views[0].shape[0], n = views[0].shape[1], k = views[1].shape[0];
    int ok = !views[0].readonly && views[2].shape[0] == k && views[3].shape[0] == k && views[4].shape[0] == k &&
             views[5].shape[0] == n;
    for (Py_ssize_t i = 0; i < k && ok; i++)
        ok = sources[i] >= 0 && sources[i] < n_features && previous[i] >= 0 && previous[i] < n_features &&
             next[i] >= 0 && next[i] < n_features && previous[i] != sources[i] && next[i] != sources[i];
    ok = ok && chars_row >= 0 && chars_row < n_features && blocks_row >= 0 && blocks_row < n_features &&
         mean_row >= 0 && mean_row < n_features && mean_row != chars_row && mean_row != blocks_row &&
         selected_row >= 0 && selected_row < n_features && smoothed_row >= 0 && smoothed_row < n_features &&
         smoothed_row != selected_row && radius >= 0 && radius <= 64;
    int64_t top = -1;
    for (Py_ssize_t j = 0; j < n && ok; j++) {
        ok = parent[j] >= -1;
        if (parent[j] > top) top = parent[j];
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError,
                        "block_neighbours: out must be writable, and the rows, edge and parent must fit it");
        goto done;
    }
    for (Py_ssize_t i = 0; i < k && n > 0; i++) {
        const double *source = out + sources[i] * n;
        double *before = out + previous[i] * n, *after = out + next[i] * n;
        before[0] = edge[i];
        for (Py_ssize_t j = 1; j < n; j++) before[j] = source[j - 1];
        for (Py_ssize_t j = 0; j + 1 < n; j++) after[j] = source[j + 1];
        after[n - 1] = edge[i];
    }
    sums = PyMem_Calloc((size_t)(top + 2), sizeof(double));
    if (sums == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const double *chars = out + chars_row * n, *blocks = out + blocks_row * n;
    double *mean = out + mean_row * n;
    for (Py_ssize_t j = 0; j < n; j++) sums[parent[j] + 1] += chars[j];
    for (Py_ssize_t j = 0; j < n; j++) mean[j] = sums[parent[j] + 1] / blocks[j];
    const double *selected = out + selected_row * n;
    double *smoothed = out + smoothed_row * n;
    for (Py_ssize_t j = 0; j < n; j++) {
        double sum = 0.0;
        for (Py_ssize_t k = -radius; k <= radius; k++)
            sum += selected[j + k < 0 ? 0 : j + k >= n ? n - 1 : j + k] * weight;
        smoothed[j] = sum;
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(sums);
    release_views(views, got);
    return result;
}

/* context_columns(probability, parent, grandparent, page_mean, radius) -> bytearray | None
 *     The reference is readerproxy.learn.blocks.context_features (its numpy code) for n blocks:
 *     float64, n x 10, row-major: the probability, the previous and next block's (0 at the ends), the
 *     mean, max and min over the window of `radius` blocks on each side (the ends repeated), the mean
 *     over the blocks of the same parent and of the same grandparent (int64, -1: none), page_mean (as
 *     given: numpy's sums make it) and the page's maximum. The window's sum is added left to right and
 *     then divided by its width, as numpy's mean over the rows of the window does; a group's sum in
 *     block order from 0.0, as np.bincount's weights. None when a parent or grandparent is below -1
 *     (the caller's numpy code numbers those groups itself).
 */
static PyObject *native_context_columns(PyObject *module, PyObject *args) {
    PyObject *objects[3], *result = NULL;
    double page_mean;
    Py_ssize_t radius;
    if (!PyArg_ParseTuple(args, "OOOdn:context_columns", &objects[0], &objects[1], &objects[2], &page_mean, &radius))
        return NULL;
    static const char codes[3] = {'d', 'q', 'q'};
    static const char *names[3] = {"probability", "parent", "grandparent"};
    Py_buffer views[3];
    int got = 0;
    double *sums = NULL;
    for (; got < 3; got++)
        if (get_array(objects[got], &views[got], codes[got], 1, "context_columns", names[got]) < 0) goto done;
    const double *p = views[0].buf;
    const int64_t *groups[2] = {views[1].buf, views[2].buf};
    const Py_ssize_t n = views[0].shape[0];
    if (views[1].shape[0] != n || views[2].shape[0] != n || radius < 0 || radius > 64) {
        PyErr_SetString(PyExc_ValueError, "context_columns: parent and grandparent differ in length, or bad radius");
        goto done;
    }
    int64_t top = -1;
    for (int g = 0; g < 2; g++)
        for (Py_ssize_t j = 0; j < n; j++) {
            if (groups[g][j] < -1) {
                result = Py_NewRef(Py_None);
                goto done;
            }
            if (groups[g][j] > top) top = groups[g][j];
        }
    sums = PyMem_Calloc((size_t)(2 * (top + 2)), sizeof(double)); /* sum and count per group + 1 */
    result = PyByteArray_FromStringAndSize(NULL, 10 * n * (Py_ssize_t)sizeof(double));
    if (sums == NULL || result == NULL) {
        Py_CLEAR(result);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    double *out = (double *)PyByteArray_AS_STRING(result), page_max = n ? p[0] : 0.0;
    for (Py_ssize_t j = 1; j < n; j++)
        if (p[j] > page_max || p[j] != p[j]) page_max = p[j]; /* np.max: NaN wins */
    for (Py_ssize_t j = 0; j < n; j++) {
        double *row = out + 10 * j;
        row[0] = p[j];
        row[1] = j > 0 ? p[j - 1] : 0.0;
        row[2] = j + 1 < n ? p[j + 1] : 0.0;
        double sum = 0.0, high = 0.0, low = 0.0;
        for (Py_ssize_t k = -radius; k <= radius; k++) {
            Py_ssize_t at = j + k < 0 ? 0 : j + k >= n ? n - 1 : j + k;
            double v = p[at];
            if (k == -radius) {
                sum = high = low = v;
            } else {
                sum += v;
                if (v > high || v != v) high = v;
                if (v < low || v != v) low = v;
            }
        }
        row[3] = sum / (double)(2 * radius + 1);
        row[4] = high;
        row[5] = low;
        row[8] = page_mean;
        row[9] = page_max;
    }
    for (int g = 0; g < 2; g++) {
        memset(sums, 0, (size_t)(2 * (top + 2)) * sizeof(double));
        for (Py_ssize_t j = 0; j < n; j++) {
            sums[2 * (groups[g][j] + 1)] += p[j];
            sums[2 * (groups[g][j] + 1) + 1] += 1.0;
        }
        for (Py_ssize_t j = 0; j < n; j++)
            out[10 * j + 6 + g] = sums[2 * (groups[g][j] + 1)] / sums[2 * (groups[g][j] + 1) + 1];
    }
done:
    PyMem_Free(sums);
    release_views(views, got);
    return result;
}

/* ---- walk: the linear view read from Lexbor's tree itself, without serialising it --------------------------
 *
 * Lexbor's functions are called through pointers found once in selectolax's own module (lexbor_setup), which
 * exports them: only functions, never Lexbor's struct layouts, so a selectolax built with another Lexbor still
 * links or is refused at setup. This is the module's one piece of global state. */
typedef void LxbNode;
typedef void LxbAttr;
static struct {
    LxbNode *(*first_child)(LxbNode *);
    LxbNode *(*next)(LxbNode *);
    LxbNode *(*parent)(LxbNode *);
    int (*type)(LxbNode *);
    const unsigned char *(*element_name)(LxbNode *, size_t *);
    LxbAttr *(*first_attribute)(LxbNode *);
    LxbAttr *(*next_attribute)(LxbAttr *);
    const unsigned char *(*attribute_name)(LxbAttr *, size_t *);
    const unsigned char *(*attribute_value)(LxbAttr *, size_t *);
    unsigned char *(*text_content)(LxbNode *, size_t *);
    unsigned char *(*destroy_text)(void *, unsigned char *);
    int ready;
} lxb;

/* dlopen and dlsym find Lexbor's functions. A platform without <dlfcn.h> (or a build with
 * -DREADERPROXY_NO_DLFCN) loses only the walk: lexbor_setup then answers False, walk declines every page, and
 * every other kernel builds as before. READERPROXY_HAVE_DLFCN says which (also the module's HAVE_WALK). */
#if defined(READERPROXY_NO_DLFCN)
#define READERPROXY_HAVE_DLFCN 0
#elif defined(__has_include)
#if __has_include(<dlfcn.h>)
#define READERPROXY_HAVE_DLFCN 1
#else
#define READERPROXY_HAVE_DLFCN 0
#endif
#elif defined(__unix__) || defined(__APPLE__)
#define READERPROXY_HAVE_DLFCN 1
#else
#define READERPROXY_HAVE_DLFCN 0
#endif
#if READERPROXY_HAVE_DLFCN
#include <dlfcn.h>
#endif

/* lexbor_setup(path, node_type) -> bool: find Lexbor's functions in the already loaded module at `path`
 * (selectolax.lexbor) and remember `node_type` (selectolax's LexborNode), the only argument walk takes a tree
 * from. False (and walk declines every page) when the module is not loaded or lacks one of the functions, or
 * where there is no dlfcn. The caller (document._walk_setup) still checks the walk against the scan on a page
 * of its own before it uses it. */
static PyObject *lexbor_node_type;
static PyObject *native_lexbor_setup(PyObject *module, PyObject *args) {
    const char *name;
    PyObject *node_type;
    if (!PyArg_ParseTuple(args, "sO!:lexbor_setup", &name, &PyType_Type, &node_type)) return NULL;
    lxb.ready = 0;
#if !READERPROXY_HAVE_DLFCN
    Py_RETURN_FALSE;
#else
    void *handle = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
    if (handle == NULL) Py_RETURN_FALSE;
    struct {
        void **slot;
        const char *symbol;
    } wanted[] = {
        {(void **)&lxb.first_child, "lxb_dom_node_first_child_noi"},
        {(void **)&lxb.next, "lxb_dom_node_next_noi"},
        {(void **)&lxb.parent, "lxb_dom_node_parent_noi"},
        {(void **)&lxb.type, "lxb_dom_node_type_noi"},
        {(void **)&lxb.element_name, "lxb_dom_element_qualified_name"},
        {(void **)&lxb.first_attribute, "lxb_dom_element_first_attribute_noi"},
        {(void **)&lxb.next_attribute, "lxb_dom_element_next_attribute_noi"},
        {(void **)&lxb.attribute_name, "lxb_dom_attr_qualified_name"},
        {(void **)&lxb.attribute_value, "lxb_dom_attr_value_noi"},
        {(void **)&lxb.text_content, "lxb_dom_node_text_content"},
        {(void **)&lxb.destroy_text, "lxb_dom_document_destroy_text_noi"},
    };
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        if ((*wanted[i].slot = dlsym(handle, wanted[i].symbol)) == NULL) {
            dlclose(handle);
            Py_RETURN_FALSE;
        }
    dlclose(handle); /* RTLD_NOLOAD took a reference; the module stays loaded by Python */
    Py_XSETREF(lexbor_node_type, Py_NewRef(node_type));
    lxb.ready = 1;
    Py_RETURN_TRUE;
#endif
}

enum { LXB_ELEMENT = 1, LXB_TEXT = 3, LXB_COMMENT = 8, LXB_DOCUMENT = 9 };

/* Characters of a UTF-8 string (its bytes that do not continue a character). */
static Py_ssize_t utf8_chars(const unsigned char *data, size_t size) {
    Py_ssize_t n = 0;
    for (size_t i = 0; i < size; i++) n += (data[i] & 0xC0) != 0x80;
    return n;
}

/* Characters Lexbor's serialiser writes for an attribute value (UTF-8): its characters, with & " U+00A0 < >
 * escaped (see the header), in one pass. */
static Py_ssize_t serialised_value_chars(const unsigned char *data, size_t size) {
    /* For speed, eight bytes at a time while they are ASCII without & " < > (most of a class, a URL, a
     * style): each is then one character, unescaped. Bytes of x that equal b: has_byte (exact for ASCII). */
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
#define HAS_BYTE(x, b) ((((x) ^ (ones * (b))) - ones) & ~((x) ^ (ones * (b))) & high)
    Py_ssize_t n = 0;
    size_t i = 0;
    while (i < size) {
        if (i + 8 <= size) {
            uint64_t x;
            memcpy(&x, data + i, 8);
            if (!(x & high) && !(HAS_BYTE(x, '&') | HAS_BYTE(x, '"') | HAS_BYTE(x, '<') | HAS_BYTE(x, '>'))) {
                n += 8;
                i += 8;
                continue;
            }
        }
        for (size_t stop = i + 8 < size ? i + 8 : size; i < stop; i++) {
            unsigned char c = data[i];
            n += (c & 0xC0) != 0x80;
            if (c == '&') n += 4;                                              /* &amp; */
            else if (c == '"') n += 5;                                         /* &quot; */
            else if (c == '<' || c == '>') n += 3;                             /* &lt; &gt; */
            else if (c == 0xC2 && i + 1 < size && data[i + 1] == 0xA0) n += 5; /* &nbsp; */
        }
    }
#undef HAS_BYTE
    return n;
}

enum { BLANK_SLOTS = 64, BLANK_LONGEST = 32 };

typedef struct {
    Scanner sc;               /* tokens, text list, attribute lists, unsure (always empty here) */
    unsigned char *gap;       /* the UTF-8 text since the last tag or comment */
    size_t gap_size, gap_capacity;
    int gap_anchor, gap_owner;
    /* The short ASCII whitespace texts made so far (a page's indentation, "\n    " between its tags), by a
     * hash of their bytes: one str for each, not one per token (gap_piece). */
    PyObject *blank[BLANK_SLOTS];
} Walker;

/* A str of Lexbor's UTF-8, or NULL: with an error set, or with none where it is not UTF-8 (the walk then declines,
 * rather than fail where the serialisation would have been read). */
static PyObject *lexbor_text(const unsigned char *data, size_t size) {
    PyObject *text = PyUnicode_DecodeUTF8((const char *)data, (Py_ssize_t)size, "surrogatepass");
    if (text == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) PyErr_Clear();
    return text;
}

/* One line of the pending text, gap[a:b] (UTF-8, `chars` non-space and `n` characters), as a text token.
 * 0 ok, -1 error, 1 declined. */
static int gap_piece(Walker *w, size_t a, size_t b, Py_ssize_t n, Py_ssize_t chars) {
    PyObject *text;
    if (chars == 0 && (size_t)n == b - a && b - a <= BLANK_LONGEST) {
        /* ASCII whitespace (no non-space character, one byte per character), short: the str made for the
         * same bytes before, else a new one kept for the next. Chosen for speed: a Readability page has
         * about a thousand such tokens at the median, of 14 distinct texts, each a str to make. */
        const unsigned char *data = w->gap + a;
        size_t size = b - a, hash = size;
        for (size_t j = 0; j < size; j++) hash = hash * 33 + data[j];
        PyObject **slot = &w->blank[hash % BLANK_SLOTS];
        if (*slot != NULL && (size_t)PyUnicode_GET_LENGTH(*slot) == size &&
            memcmp(PyUnicode_1BYTE_DATA(*slot), data, size) == 0) {
            text = Py_NewRef(*slot);
        } else {
            text = lexbor_text(data, size);
            if (text == NULL) return PyErr_Occurred() ? -1 : 1;
            Py_XSETREF(*slot, Py_NewRef(text));
        }
    } else {
        text = lexbor_text(w->gap + a, b - a);
        if (text == NULL) return PyErr_Occurred() ? -1 : 1;
    }
    if (PyList_Append(w->sc.text, text) < 0) {
        Py_XDECREF(text);
        return -1;
    }
    Py_DECREF(text);
    Token *t = new_token(&w->sc);
    if (t == NULL) return -1;
    *t = (Token){.owner = w->gap_owner, .length = (int32_t)n, .chars = (int32_t)chars, .kind = TEXT,
                 .in_anchor = (uint8_t)w->gap_anchor, .newline_after = w->gap[b - 1] == '\n'};
    return 0;
}

/* The pending text as tokens, one per line (each with its "\n"), as text_gap cuts the serialisation.
 * For speed, read as UTF-8 in one pass (Lexbor's text is valid UTF-8): each line is decoded once.
 * 0 ok, -1 error, 1 declined (a NUL, which the scan declines). */
static int flush_gap(Walker *w) {
    const unsigned char *g = w->gap;
    size_t size = w->gap_size, piece = 0, i = 0;
    Py_ssize_t n = 0, chars = 0;
    w->gap_size = 0;
    while (i < size) {
        unsigned char c = g[i];
        Py_UCS4 code;
        size_t step;
        if (c < 0x80) code = c, step = 1;
        else if (c < 0xE0 && i + 1 < size) code = (Py_UCS4)(c & 0x1F) << 6 | (g[i + 1] & 0x3F), step = 2;
        else if (c < 0xF0 && i + 2 < size)
            code = (Py_UCS4)(c & 0x0F) << 12 | (Py_UCS4)(g[i + 1] & 0x3F) << 6 | (g[i + 2] & 0x3F), step = 3;
        else if (i + 3 < size)
            code = (Py_UCS4)(c & 0x07) << 18 | (Py_UCS4)(g[i + 1] & 0x3F) << 12 | (Py_UCS4)(g[i + 2] & 0x3F) << 6 |
                   (g[i + 3] & 0x3F),
            step = 4;
        else return 1; /* cut short: not Lexbor's UTF-8 */
        if (code == 0) return 1;
        n++;
        chars += !Py_UNICODE_ISSPACE(code);
        i += step;
        if (code == '\n') {
            int status = gap_piece(w, piece, i, n, chars);
            if (status != 0) return status;
            piece = i;
            n = chars = 0;
        }
    }
    return piece < size ? gap_piece(w, piece, size, n, chars) : 0;
}

static int append_gap(Walker *w, const unsigned char *data, size_t size) {
    if (w->gap_size + size > w->gap_capacity) {
        size_t capacity = 2 * (w->gap_size + size) + 64;
        unsigned char *grown = PyMem_Realloc(w->gap, capacity);
        if (grown == NULL) { PyErr_NoMemory(); return -1; }
        w->gap = grown;
        w->gap_capacity = capacity;
    }
    memcpy(w->gap + w->gap_size, data, size);
    w->gap_size += size;
    return 0;
}

/* The Lexbor node a LexborNode stands for (its mem_id), or NULL with an error set. */
static LxbNode *lexbor_node(PyObject *node) {
    PyObject *id = PyObject_GetAttrString(node, "mem_id");
    if (id == NULL) return NULL;
    void *pointer = PyLong_AsVoidPtr(id);
    Py_DECREF(id);
    return pointer;
}

/* One step out of *node in document order, for the walks below once a node's children are done: 0 with *node its
 * next sibling; 1 with *node its parent, whose subtree the step leaves (the caller closes it and steps again); 2 with
 * *node NULL when it was `root` (the walk is over); -1 when it has no parent but is not `root` (the walk declines). */
static int step_out(LxbNode **node, LxbNode *root) {
    if (*node == root) {
        *node = NULL;
        return 2;
    }
    LxbNode *sibling = lxb.next(*node);
    if (sibling != NULL) {
        *node = sibling;
        return 0;
    }
    *node = lxb.parent(*node);
    return *node == NULL ? -1 : 1;
}

/* The Lexbor node a kernel reads its tree from, `node` (a selectolax LexborNode): 1 with *root set; 0 where the
 * kernel declines (Lexbor's functions not set up, a node without an address); -1 with an error set (`node` is no
 * LexborNode, named by `kernel` in the TypeError). */
static int kernel_root(PyObject *node, const char *kernel, LxbNode **root) {
    if (!lxb.ready) return 0;
    if (!PyObject_TypeCheck(node, (PyTypeObject *)lexbor_node_type)) {
        PyErr_Format(PyExc_TypeError, "%s: root must be a selectolax LexborNode", kernel);
        return -1;
    }
    *root = lexbor_node(node);
    if (*root == NULL) return PyErr_Occurred() ? -1 : 0;
    return 1;
}

/* walk(root, n_elements, void_tags) -> tuple | None
 *     What scan(tree.html, n_elements, void_tags) gives, read from the tree whose <html> element is `root`
 *     (a LexborNode, which keeps its tree alive: never a bare address). None where the walk
 *     declines (Lexbor not set up, a name outside printable ASCII or with a quote, slash or angle bracket,
 *     an attribute name `parse` would drop, a node other than element, text or comment, a <template>,
 *     text inside a raw-text element, a NUL, a void element with children, another element count). */
static PyObject *native_walk(PyObject *module, PyObject *args) {
    PyObject *root_node, *void_tags;
    Py_ssize_t n_elements;
    if (!PyArg_ParseTuple(args, "OnO:walk", &root_node, &n_elements, &void_tags)) return NULL;
    if (!PyAnySet_Check(void_tags)) {
        PyErr_SetString(PyExc_TypeError, "walk: void_tags must be a set or frozenset");
        return NULL;
    }
    LxbNode *root = NULL;
    int got_root = kernel_root(root_node, "walk", &root);
    if (got_root <= 0) return got_root < 0 ? NULL : Py_NewRef(Py_None);
    /* The document the text copies are given back to: the top of root's ancestors (a detached node has none). */
    LxbNode *document = root;
    for (LxbNode *above = lxb.parent(root); above != NULL; above = lxb.parent(above)) document = above;
    if (lxb.type(document) != LXB_DOCUMENT || lxb.type(root) != LXB_ELEMENT || n_elements <= 0 || n_elements > INT32_MAX)
        Py_RETURN_NONE;
    Walker w = {0};
    NameTable table = {0};
    PyObject *result = NULL, *names = list_of_none(n_elements);
    int32_t *parent = PyMem_Malloc((size_t)(3 * n_elements + 1) * sizeof(int32_t));
    int32_t *stack = PyMem_Malloc((size_t)(n_elements + 1) * sizeof(int32_t));
    uint8_t *flags = PyMem_Malloc((size_t)n_elements + 1); /* NAME_* of each element */
    if (scanner_lists(&w.sc, n_elements) < 0 || !names || !parent || !stack || !flags) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    int32_t *start = parent + n_elements, *end = start + n_elements;
    Py_ssize_t depth = 0, next_element = 0, anchors = 0;
    int status = 0; /* 0 going, 1 declined, -1 error */
    LxbNode *node = root;
    while (node != NULL && status == 0) {
        int type = lxb.type(node);
        int descend = 0;
        if (type == LXB_ELEMENT) {
            if ((status = flush_gap(&w)) != 0) break;
            Py_ssize_t k = next_element++;
            if (k >= n_elements) { status = 1; break; }
            size_t size = 0;
            const unsigned char *raw = lxb.element_name(node, &size);
            if (raw == NULL || size == 0) { status = 1; break; }
            for (size_t j = 0; j < size && status == 0; j++) /* names the scan would read otherwise, or not at all */
                if (raw[j] <= ' ' || raw[j] >= 0x7F || strchr("\"'/<>=", raw[j]) != NULL) status = 1;
            if (status) break;
            const Str name_str = {PyUnicode_1BYTE_KIND, raw, (Py_ssize_t)size};
            int read = read_name(&table, &name_str, 0, (Py_ssize_t)size, void_tags, names, k, &flags[k]);
            if (read <= 0 || flags[k] & NAME_TEMPLATE) { status = read < 0 ? -1 : 1; break; } /* a <template>: its content is apart */
            /* The start tag as serialised: <name( name="value")*> */
            Py_ssize_t length = 2 + (Py_ssize_t)size;
            for (LxbAttr *attr = lxb.first_attribute(node); attr != NULL; attr = lxb.next_attribute(attr)) {
                size_t name_size = 0, value_size = 0;
                const unsigned char *attr_name = lxb.attribute_name(attr, &name_size);
                const unsigned char *value = lxb.attribute_value(attr, &value_size);
                if (attr_name == NULL || name_size == 0) { status = 1; break; }
                for (size_t j = 0; j < name_size; j++) {
                    unsigned char c = attr_name[j]; /* parse drops names with these (_BAD_ATTRIBUTE_NAME) */
                    if (c == '"' || c == '\'' || c == '<' || c == '>' || c == '=' || c == '/' || c == '`' || c <= ' ') {
                        status = 1;
                        break;
                    }
                }
                if (status) break;
                length += 4 + utf8_chars(attr_name, name_size) + (value ? serialised_value_chars(value, value_size) : 0);
                int which = -1;
                if (name_size == 2 && memcmp(attr_name, "id", 2) == 0) which = 0;
                else if (name_size == 5 && memcmp(attr_name, "class", 5) == 0) which = 1;
                else if (name_size == 4 && memcmp(attr_name, "role", 4) == 0) which = 2;
                if (which < 0) continue;
                PyObject *text = value ? lexbor_text(value, value_size) : Py_NewRef(Py_None);
                if (text == NULL) { status = PyErr_Occurred() ? -1 : 1; break; }
                PyObject *before = PyList_GET_ITEM(w.sc.attribute[which], k);
                PyList_SET_ITEM(w.sc.attribute[which], k, text); /* the last of a name wins, as in node.attributes */
                Py_DECREF(before);
            }
            if (status) break;
            int owner = depth ? stack[depth - 1] : -1;
            anchors += (flags[k] & NAME_ANCHOR) != 0;
            Token *t = new_token(&w.sc);
            if (t == NULL || PyList_Append(w.sc.text, w.sc.empty) < 0) { status = -1; break; }
            *t = (Token){.owner = (int32_t)k, .length = (int32_t)length, .kind = OPEN, .in_anchor = anchors > 0};
            parent[k] = owner;
            start[k] = end[k] = (int32_t)(w.sc.n_tokens - 1);
            if (!(flags[k] & NAME_VOID)) {
                stack[depth++] = (int32_t)k;
                descend = 1;
            } else if (lxb.first_child(node) != NULL) {
                status = 1; /* a void element with children: the serialisation would not nest them */
                break;
            }
        } else if (type == LXB_TEXT) {
            if (depth && flags[stack[depth - 1]] & NAME_RAW_TEXT) { status = 1; break; }
            size_t size = 0;
            unsigned char *data = lxb.text_content(node, &size);
            if (data == NULL) { status = 1; break; }
            if (w.gap_size == 0) {
                w.gap_owner = depth ? stack[depth - 1] : -1;
                w.gap_anchor = anchors > 0;
            }
            int failed = append_gap(&w, data, size);
            lxb.destroy_text(document, data);
            if (failed) { status = -1; break; }
        } else if (type == LXB_COMMENT) {
            if ((status = flush_gap(&w)) != 0) break; /* a comment ends the text before it, as its "<!--...-->" does */
        } else {
            status = 1;
            break;
        }
        LxbNode *child = descend ? lxb.first_child(node) : NULL;
        if (child != NULL) {
            node = child;
            continue;
        }
        /* Leave the elements this node ends, innermost first, then go on with the next sibling. */
        for (;;) {
            if (type == LXB_ELEMENT && descend) {
                if ((status = flush_gap(&w)) != 0) break;
                int32_t k = stack[--depth];
                Token *t = new_token(&w.sc);
                if (t == NULL || PyList_Append(w.sc.text, w.sc.empty) < 0) { status = -1; break; }
                int anchor = (flags[k] & NAME_ANCHOR) != 0;
                *t = (Token){.owner = k, .length = (int32_t)(3 + PyUnicode_GET_LENGTH(PyList_GET_ITEM(names, k))),
                             .kind = CLOSE, .in_anchor = anchor || anchors > 0};
                anchors -= anchor;
                end[k] = (int32_t)(w.sc.n_tokens - 1);
            }
            int step = step_out(&node, root);
            if (step != 1) {
                if (step < 0) status = 1;
                break;
            }
            type = LXB_ELEMENT; /* a parent left after its last child */
            descend = 1;
        }
    }
    if (status == 0) status = flush_gap(&w);
    if (status == 0 && (next_element != n_elements || depth != 0 || w.sc.n_tokens == 0)) status = 1;
    if (status < 0) goto done;
    if (status > 0) { /* no path declines with an error set */
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = scan_fields(&w.sc, n_elements, parent, start, end, names);
done:
    PyMem_Free(parent);
    PyMem_Free(stack);
    PyMem_Free(flags);
    PyMem_Free(w.gap);
    for (int i = 0; i < BLANK_SLOTS; i++) Py_XDECREF(w.blank[i]);
    scanner_free(&w.sc);
    Py_XDECREF(names);
    PyMem_Free(table.slots);
    return result;
}

/* Whether data[0:size] starts with `what` (lower-case ASCII, n bytes), ASCII case aside (ascii_lower, as
 * Lexbor's lexbor_str_res_map_lowercase compares the bytes of an "i" selector). */
static inline int starts_nocase(const unsigned char *data, size_t size, const char *what, size_t n) {
    if (size < n) return 0;
    for (size_t j = 0; j < n; j++)
        if (ascii_lower(data[j]) != (unsigned char)what[j]) return 0;
    return 1;
}

/* For speed, the attribute tests below skip eight bytes at a time where none can start what they look
 * for: word_has(x, b) is nonzero when a byte of x is b, word_below(x, b) when one is below b (b <= 128);
 * neither misses one (they may see one that is not there: the bytes are then read one by one). */
#define WORD_ONES 0x0101010101010101ULL
#define WORD_HIGH 0x8080808080808080ULL
#define word_has(x, b) ((((x) ^ (WORD_ONES * (b))) - WORD_ONES) & ~((x) ^ (WORD_ONES * (b))) & WORD_HIGH)
#define word_below(x, b) (((x) - WORD_ONES * (b)) & ~(x) & WORD_HIGH)

static inline uint64_t word_at(const unsigned char *data) {
    uint64_t x;
    memcpy(&x, data, 8);
    return x;
}

/* Whether a style holds one of clean._HIDING_STYLES, ASCII case aside (`[style*="..." i]`): compared
 * only where a "d" or "v" starts. */
static int hiding_style(const unsigned char *data, size_t size) {
    for (size_t i = 0; i < size; i++) {
        if ((i & 7) == 0 && i + 8 <= size) {
            uint64_t lower = word_at(data + i) | (WORD_ONES * 0x20);
            if (!word_has(lower, 'd') && !word_has(lower, 'v')) {
                i += 7;
                continue;
            }
        }
        unsigned char c = data[i] | 0x20;
        if (c == 'd') {
            if (starts_nocase(data + i, size - i, "display:none", 12) || starts_nocase(data + i, size - i, "display: none", 13))
                return 1;
        } else if (c == 'v') {
            if (starts_nocase(data + i, size - i, "visibility:hidden", 17) ||
                starts_nocase(data + i, size - i, "visibility: hidden", 18))
                return 1;
        }
    }
    return 0;
}

/* Whether data[0:size] holds "print", ASCII case aside (`[class*="print" i]`, `[id*="print" i]`). */
static int has_print(const unsigned char *data, size_t size) {
    for (size_t i = 0; i + 5 <= size; i++) {
        if ((i & 7) == 0 && i + 8 <= size && !word_has(word_at(data + i) | (WORD_ONES * 0x20), 'p')) {
            i += 7;
            continue;
        }
        if ((data[i] | 0x20) == 'p' && starts_nocase(data + i + 1, size - i - 1, "rint", 4)) return 1;
    }
    return 0;
}

static inline int lexbor_space(unsigned char c) {
    return c <= ' ' && (c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r');
}

/* The class names clean.SCREEN_READER_SELECTOR names, as whitespace-separated tokens of a class. */
static const char *const SCREEN_READER_CLASSES[] = {"sr-only", "visually-hidden", "screen-reader-text", "visuallyhidden"};

/* How a class attribute's tokens meet the screen-reader classes: 1 one of them exactly, 2 one of them but
 * for ASCII case only (which Lexbor matches in quirks mode alone), 0 neither. Tokens are cut at Lexbor's
 * whitespace (space, tab, LF, FF, CR); only tokens of a screen-reader class's length are compared. */
static int screen_reader_class(const unsigned char *data, size_t size) {
    int found = 0;
    size_t first = 0;
    for (size_t i = 0; i <= size; i++) {
        if ((i & 7) == 0 && i + 8 <= size && !word_below(word_at(data + i), 0x21)) {
            i += 7; /* no whitespace: the token goes on */
            continue;
        }
        if (i < size && !lexbor_space(data[i])) continue;
        size_t n = i - first;
        if (n == 7 || n == 14 || n == 15 || n == 18)
            for (size_t k = 0; k < sizeof SCREEN_READER_CLASSES / sizeof SCREEN_READER_CLASSES[0]; k++) {
                const char *name = SCREEN_READER_CLASSES[k];
                if (strlen(name) != n || !starts_nocase(data + first, n, name, n)) continue;
                if (memcmp(data + first, name, n) == 0) return 1;
                found = 2;
            }
        first = i + 1;
    }
    return found;
}

/* hidden_candidates(root, n_elements) -> (list, list, list) | None
 *     The elements that `tree.css(clean._HIDDEN_OR_SCREEN_READER)` finds, read from the tree whose <html>
 *     element is `root` (a LexborNode): their indices among the elements under `root` (itself included) in
 *     document order, which are those of `tree.css("*")`, each once (the selector list gives an element
 *     matching two of its selectors twice), and per one the index after its last descendant; then the
 *     indices of the elements `tree.css("[aria-controls]")` finds (clean._collapsed_panels reads them). The tests are
 *     Lexbor's: `[hidden]` (the attribute at all), `[aria-hidden="true" i]` (the whole value, ASCII case
 *     aside), `[style*="..." i]` for each of clean._HIDING_STYLES and `[class*="print" i]`,
 *     `[id*="print" i]` (a substring, ASCII case aside), and the four screen-reader classes as tokens of the
 *     class (exactly). Reference: that query (clean._remove_unseen runs it where this declines).
 *     None where it declines: Lexbor not set up, a node under `root` of a document other than `root`'s,
 *     another element count, an element with one of the attributes read twice (aria-controls included), or a
 *     class token that is a
 *     screen-reader class but for case (Lexbor matches it so only in quirks mode, which the walk does not
 *     read). Chosen for speed: the query costs 0.12 ms at the ScrapingHub median (its nine selectors parsed
 *     and tried on every element), this walk a few microseconds. */
static PyObject *native_hidden_candidates(PyObject *module, PyObject *args) {
    PyObject *root_node;
    Py_ssize_t n_elements;
    if (!PyArg_ParseTuple(args, "On:hidden_candidates", &root_node, &n_elements)) return NULL;
    LxbNode *root = NULL;
    int got_root = kernel_root(root_node, "hidden_candidates", &root);
    if (got_root <= 0) return got_root < 0 ? NULL : Py_NewRef(Py_None);
    if (lxb.type(root) != LXB_ELEMENT || n_elements <= 0 || n_elements > INT32_MAX) Py_RETURN_NONE;
    PyObject *indices = PyList_New(0), *ends = PyList_New(0), *controls = PyList_New(0), *result = NULL;
    /* per open element: its index, and where in `ends` its entry is (-1: not a candidate) */
    Py_ssize_t *open = PyMem_Malloc((size_t)(2 * n_elements + 2) * sizeof(Py_ssize_t));
    if (indices == NULL || ends == NULL || controls == NULL || open == NULL) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t next_element = 0, depth = 0;
    int status = 0; /* 0 going, 1 declined, -1 error */
    LxbNode *node = root;
    while (node != NULL && status == 0) {
        int element = lxb.type(node) == LXB_ELEMENT;
        if (element) {
            Py_ssize_t k = next_element++;
            if (k >= n_elements) { status = 1; break; }
            int match = 0, seen = 0; /* seen: a bit per attribute name read */
            for (LxbAttr *attr = lxb.first_attribute(node); attr != NULL; attr = lxb.next_attribute(attr)) {
                size_t name_size = 0, size = 0;
                const unsigned char *name = lxb.attribute_name(attr, &name_size);
                if (name == NULL) { status = 1; break; }
                int which;
                if (name_size == 6 && memcmp(name, "hidden", 6) == 0) which = 0;
                else if (name_size == 11 && memcmp(name, "aria-hidden", 11) == 0) which = 1;
                else if (name_size == 5 && memcmp(name, "style", 5) == 0) which = 2;
                else if (name_size == 5 && memcmp(name, "class", 5) == 0) which = 3;
                else if (name_size == 2 && memcmp(name, "id", 2) == 0) which = 4;
                else if (name_size == 13 && memcmp(name, "aria-controls", 13) == 0) which = 5;
                else continue;
                if (seen & (1 << which)) { status = 1; break; } /* twice: which one Lexbor reads is not ours to guess */
                seen |= 1 << which;
                const unsigned char *value = lxb.attribute_value(attr, &size);
                if (value == NULL) size = 0; /* a valueless attribute: Lexbor's blank string */
                if (which == 5) { /* `[aria-controls]`, for clean._collapsed_panels */
                    PyObject *index = PyLong_FromSsize_t(k);
                    if (index == NULL || PyList_Append(controls, index) < 0) {
                        Py_XDECREF(index);
                        status = -1;
                        break;
                    }
                    Py_DECREF(index);
                } else if (which == 0) match = 1;
                else if (which == 1) {
                    match |= size == 4 && ascii_lower(value[0]) == 't' && ascii_lower(value[1]) == 'r' &&
                             ascii_lower(value[2]) == 'u' && ascii_lower(value[3]) == 'e';
                } else if (which == 2) {
                    match |= hiding_style(value, size);
                } else if (which == 3) {
                    int sr = screen_reader_class(value, size);
                    if (sr == 2) { status = 1; break; }
                    match |= sr == 1 || has_print(value, size);
                } else match |= has_print(value, size);
            }
            if (status) break;
            Py_ssize_t slot = -1;
            if (match) {
                PyObject *index = PyLong_FromSsize_t(k);
                if (index == NULL || PyList_Append(indices, index) < 0 || PyList_Append(ends, Py_None) < 0) {
                    Py_XDECREF(index);
                    status = -1;
                    break;
                }
                Py_DECREF(index);
                slot = PyList_GET_SIZE(ends) - 1;
            }
            LxbNode *child = lxb.first_child(node);
            if (child != NULL) {
                open[2 * depth] = k;
                open[2 * depth + 1] = slot;
                depth++;
                node = child;
                continue;
            }
            if (slot >= 0) { /* no children: its subtree ends after itself */
                PyObject *end = PyLong_FromSsize_t(k + 1);
                if (end == NULL) { status = -1; break; }
                PyList_SetItem(ends, slot, end);
            }
        } else if (lxb.first_child(node) != NULL) { /* a non-element with children (none in an HTML tree) */
            status = 1;
            break;
        }
        /* Leave the elements this node ends, then go on with the next sibling. */
        for (;;) {
            int step = step_out(&node, root);
            if (step != 1 || depth == 0) {
                if (step != 0 && step != 2) status = 1;
                break;
            }
            depth--;
            if (open[2 * depth + 1] >= 0) {
                PyObject *end = PyLong_FromSsize_t(next_element);
                if (end == NULL) { status = -1; break; }
                PyList_SetItem(ends, open[2 * depth + 1], end);
            }
        }
    }
    if (status == 0 && (next_element != n_elements || depth != 0)) status = 1;
    if (status < 0) goto done;
    result = status > 0 ? Py_NewRef(Py_None) : PyTuple_Pack(3, indices, ends, controls);
done:
    Py_XDECREF(indices);
    Py_XDECREF(ends);
    Py_XDECREF(controls);
    PyMem_Free(open);
    return result;
}

/* attributed_elements(root, n_elements, first, names) -> dict | None
 *     The elements from index `first` on, among the elements under `root` (a LexborNode, itself included) in
 *     document order (those of `tree.css("*")`), that carry an attribute whose qualified name is one of `names`
 *     (a tuple of at most 32 str): {index: {name: value}} with those attributes only, each value as
 *     `node.attributes` gives it (None for a valueless attribute). Reference: posts._attributed_by_reading
 *     (`node.attributes` of every element). None where it declines: Lexbor not set up, a node under `root` of
 *     a document other than `root`'s, another element count, an attribute of `names` met twice on one element,
 *     a value that is not UTF-8. Chosen for speed: the thread finder's query for these attributes cost 0.5 ms
 *     on `server_load.py`'s page (its selectors tried on every element, a node object and a dict of every
 *     attribute per match, then a dict from node to index). */
enum { ATTRIBUTED_NAMES = 32 };
static PyObject *native_attributed_elements(PyObject *module, PyObject *args) {
    PyObject *root_node, *names;
    Py_ssize_t n_elements, first;
    if (!PyArg_ParseTuple(args, "OnnO!:attributed_elements", &root_node, &n_elements, &first, &PyTuple_Type, &names))
        return NULL;
    Py_ssize_t n_names = PyTuple_GET_SIZE(names);
    if (n_names > ATTRIBUTED_NAMES) {
        PyErr_SetString(PyExc_ValueError, "attributed_elements: at most 32 names");
        return NULL;
    }
    const char *name_data[ATTRIBUTED_NAMES];
    Py_ssize_t name_size[ATTRIBUTED_NAMES];
    for (Py_ssize_t i = 0; i < n_names; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        if (!PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "attributed_elements: names must be str");
            return NULL;
        }
        name_data[i] = PyUnicode_AsUTF8AndSize(name, &name_size[i]);
        if (name_data[i] == NULL) return NULL;
    }
    LxbNode *root = NULL;
    int got_root = kernel_root(root_node, "attributed_elements", &root);
    if (got_root <= 0) return got_root < 0 ? NULL : Py_NewRef(Py_None);
    if (lxb.type(root) != LXB_ELEMENT || n_elements <= 0) Py_RETURN_NONE;
    PyObject *found = PyDict_New(), *result = NULL;
    if (found == NULL) return NULL;
    Py_ssize_t next_element = 0, depth = 0;
    int status = 0; /* 0 going, 1 declined, -1 error */
    LxbNode *node = root;
    while (node != NULL && status == 0) {
        if (lxb.type(node) == LXB_ELEMENT) {
            Py_ssize_t k = next_element++;
            if (k >= n_elements) { status = 1; break; }
            PyObject *attributes = NULL; /* made at the element's first wanted attribute */
            for (LxbAttr *attr = k < first ? NULL : lxb.first_attribute(node); attr != NULL;
                 attr = lxb.next_attribute(attr)) {
                size_t size = 0;
                const unsigned char *name = lxb.attribute_name(attr, &size);
                if (name == NULL) { status = 1; break; }
                Py_ssize_t which = 0;
                while (which < n_names &&
                       !((size_t)name_size[which] == size && memcmp(name, name_data[which], size) == 0))
                    which++;
                if (which == n_names) continue;
                PyObject *key = PyTuple_GET_ITEM(names, which);
                if (attributes == NULL) {
                    PyObject *index = PyLong_FromSsize_t(k);
                    attributes = PyDict_New();
                    if (index == NULL || attributes == NULL || PyDict_SetItem(found, index, attributes) < 0) {
                        Py_XDECREF(index);
                        Py_CLEAR(attributes);
                        status = -1;
                        break;
                    }
                    Py_DECREF(index);
                    Py_DECREF(attributes); /* `found` holds it */
                } else if (PyDict_Contains(attributes, key)) { /* twice: which one Lexbor reads is not ours to guess */
                    status = 1;
                    break;
                }
                size_t value_size = 0;
                const unsigned char *data = lxb.attribute_value(attr, &value_size);
                PyObject *value = data == NULL ? Py_NewRef(Py_None) : lexbor_text(data, value_size);
                if (value == NULL) { status = PyErr_Occurred() ? -1 : 1; break; }
                int failed = PyDict_SetItem(attributes, key, value) < 0;
                Py_DECREF(value);
                if (failed) { status = -1; break; }
            }
            if (status) break;
            LxbNode *child = lxb.first_child(node);
            if (child != NULL) {
                depth++;
                node = child;
                continue;
            }
        } else if (lxb.first_child(node) != NULL) { /* a non-element with children (none in an HTML tree) */
            status = 1;
            break;
        }
        for (;;) { /* leave the elements this node ends, then go on with the next sibling */
            int step = step_out(&node, root);
            if (step != 1 || depth == 0) {
                if (step != 0 && step != 2) status = 1;
                break;
            }
            depth--;
        }
    }
    if (status == 0 && (next_element != n_elements || depth != 0)) status = 1;
    if (status == 0) result = Py_NewRef(found);
    else if (status > 0) result = Py_NewRef(Py_None);
    Py_DECREF(found);
    return result;
}

/* Whether data[0:size] holds the bytes of "print". */
static int holds_print(const char *data, size_t size) {
    for (const char *at = data, *end = data + size; size >= 5 && at + 5 <= end; at++) {
        at = memchr(at, 'p', (size_t)(end - at) - 4);
        if (at == NULL) return 0;
        if (memcmp(at, "print", 5) == 0) return 1;
    }
    return 0;
}

/* early_read(root) -> (str | None, list, int, list) | None
 *     What clean.read_before_cleaning reads with the query clean._BEFORE_CLEANING, from the tree whose <html>
 *     element is `root` (a LexborNode), without the query and without a node object per match: the text of
 *     the first `title` element (None: none), the texts of the `script[type="application/ld+json" i]`
 *     elements and of the `style` elements whose text holds "print" (each in document order), and whether
 *     some `noscript` element is there: 0 none, 1 some, none of them inside an element of a name of
 *     clean.REMOVED_TAGS (clean._strip_raw_text leaves them all in the tree), 2 some, one inside such. A text is `node.text()`'s: the element's text children, decoded from
 *     UTF-8 with "replace". Reference: the query itself (read_before_cleaning's other path).
 *     None where it declines: Lexbor not set up, a tree other than a document's, a matched element with a
 *     child that is not text, a script with a `type` attribute read twice or one named `...:type`, or a
 *     `div` whose id starts with "S:" or "af" (ASCII case aside): the streamed fragments that the query
 *     gives as nodes. Chosen for speed: the query cost 0.14 of Lexbor's parse at the Readability median. */
static int early_text(LxbNode *element, LxbNode *document, int print_only, PyObject **out) {
    /* the text children of `element`, concatenated and decoded; 1: declined, -1: error. `print_only`: only
     * a text that holds "print" (else *out is NULL), told from the UTF-8 bytes before any decoding (for
     * speed: a page's stylesheets may be a megabyte), which hold "print" where the decoded text does
     * ("replace" gives each ASCII byte as itself and adds no character of its own but U+FFFD). */
    char *buffer = NULL;
    size_t used = 0;
    for (LxbNode *child = lxb.first_child(element); child != NULL; child = lxb.next(child)) {
        if (lxb.type(child) != LXB_TEXT || lxb.first_child(child) != NULL) {
            PyMem_Free(buffer);
            return 1;
        }
        size_t size = 0;
        unsigned char *data = lxb.text_content(child, &size);
        if (data == NULL) {
            PyMem_Free(buffer);
            return 1;
        }
        char *grown = size ? PyMem_Realloc(buffer, used + size + 1) : buffer;
        if (size && grown == NULL) {
            lxb.destroy_text(document, data);
            PyMem_Free(buffer);
            PyErr_NoMemory();
            return -1;
        }
        buffer = grown;
        if (size) memcpy(buffer + used, data, size);
        used += size;
        lxb.destroy_text(document, data);
    }
    if (print_only && !holds_print(buffer, used)) {
        *out = NULL;
        PyMem_Free(buffer);
        return 0;
    }
    *out = PyUnicode_DecodeUTF8(used ? buffer : "", (Py_ssize_t)used, "replace");
    PyMem_Free(buffer);
    return *out == NULL ? -1 : 0;
}

static int name_is(const unsigned char *name, size_t size, const char *wanted) {
    size_t n = strlen(wanted);
    return size == n && memcmp(name, wanted, n) == 0;
}

/* Whether an element's name is one of clean.REMOVED_TAGS but "noscript". */
static int removed_name(const unsigned char *name, size_t size) {
    static const char *const names[] = {"script", "style", "template", "iframe", "noembed", "noframes",
                                        "xmp", "plaintext", "object", "embed", "applet", "frameset"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (name_is(name, size, names[i])) return 1;
    return 0;
}

static PyObject *native_early_read(PyObject *module, PyObject *args) {
    PyObject *root_node;
    if (!PyArg_ParseTuple(args, "O:early_read", &root_node)) return NULL;
    LxbNode *root = NULL;
    int got_root = kernel_root(root_node, "early_read", &root);
    if (got_root <= 0) return got_root < 0 ? NULL : Py_NewRef(Py_None);
    LxbNode *document = root;
    for (LxbNode *above = lxb.parent(root); above != NULL; above = lxb.parent(above)) document = above;
    if (lxb.type(document) != LXB_DOCUMENT || lxb.type(root) != LXB_ELEMENT) Py_RETURN_NONE;
    PyObject *title = NULL, *json_ld = PyList_New(0), *styles = PyList_New(0), *result = NULL;
    if (json_ld == NULL || styles == NULL) goto done;
    int status = 0, noscript = 0; /* status: 0 going, 1 declined, -1 error */
    LxbNode *node = root, *removed = NULL; /* removed: the outermost open element of a removed name */
    while (node != NULL && status == 0) {
        if (lxb.type(node) == LXB_ELEMENT) {
            size_t size = 0;
            const unsigned char *name = lxb.element_name(node, &size);
            if (name == NULL) { status = 1; break; }
            PyObject *text = NULL;
            if (name_is(name, size, "title")) {
                if (title == NULL) {
                    if ((status = early_text(node, document, 0, &text)) != 0) break;
                    title = text;
                }
            } else if (name_is(name, size, "noscript")) {
                noscript = noscript == 2 || removed != NULL ? 2 : 1;
            } else if (name_is(name, size, "style")) {
                if ((status = early_text(node, document, 1, &text)) != 0) break;
                if (text != NULL) {
                    int failed = PyList_Append(styles, text) < 0;
                    Py_DECREF(text);
                    if (failed) { status = -1; break; }
                }
            }
            if (removed == NULL && removed_name(name, size)) removed = node;
            if (name_is(name, size, "script") || name_is(name, size, "div")) {
                int script = name[0] == 's', seen = 0, json = 0;
                for (LxbAttr *attr = lxb.first_attribute(node); attr != NULL; attr = lxb.next_attribute(attr)) {
                    size_t name_size = 0, value_size = 0;
                    const unsigned char *attr_name = lxb.attribute_name(attr, &name_size);
                    if (attr_name == NULL) { status = 1; break; }
                    const unsigned char *value = lxb.attribute_value(attr, &value_size);
                    if (value == NULL) value_size = 0;
                    if (!script) {
                        if (name_is(attr_name, name_size, "id") && value_size >= 2 &&
                            ((ascii_lower(value[0]) == 's' && value[1] == ':') ||
                             (ascii_lower(value[0]) == 'a' && ascii_lower(value[1]) == 'f'))) {
                            status = 1; /* a streamed fragment, maybe: the query reads the page */
                            break;
                        }
                        continue;
                    }
                    if (name_size > 5 && memcmp(attr_name + name_size - 5, ":type", 5) == 0) { status = 1; break; }
                    if (!name_is(attr_name, name_size, "type")) continue;
                    if (seen++) { status = 1; break; }
                    json = value_size == 19;
                    for (size_t j = 0; json && j < 19; j++) json = ascii_lower(value[j]) == (unsigned char)"application/ld+json"[j];
                }
                if (status) break;
                if (script) {
                        if (json) {
                        if ((status = early_text(node, document, 0, &text)) != 0) break;
                        int failed = PyList_Append(json_ld, text) < 0;
                        Py_DECREF(text);
                        if (failed) { status = -1; break; }
                    }
                }
            }
        }
        LxbNode *child = lxb.first_child(node); /* inside a match too, as the query looks */
        if (child != NULL) {
            node = child;
            continue;
        }
        for (;;) { /* leave the nodes this one ends, innermost first */
            if (node == removed) removed = NULL;
            int step = step_out(&node, root);
            if (step != 1) {
                if (step < 0) status = 1;
                break;
            }
        }
    }
    if (status < 0) goto done;
    result = status > 0 ? Py_NewRef(Py_None) : Py_BuildValue("(OOiO)", title ? title : Py_None, json_ld, noscript, styles);
done:
    Py_XDECREF(title);
    Py_XDECREF(json_ld);
    Py_XDECREF(styles);
    return result;
}

/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320): zlib.crc32's table, built once. */
static uint32_t crc_table[256];

static void crc_table_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}

static inline uint32_t crc_byte(uint32_t crc, uint32_t byte) { return crc_table[(crc ^ byte) & 0xff] ^ (crc >> 8); }

/* The running CRC (uninverted, as zlib keeps it) after the UTF-8 bytes of c ("surrogatepass": a
 * lone surrogate is three bytes like any other code point below U+10000). */
static inline uint32_t crc_utf8(uint32_t crc, Py_UCS4 c) {
    if (c < 0x80) return crc_byte(crc, c);
    if (c < 0x800) return crc_byte(crc_byte(crc, 0xC0 | (c >> 6)), 0x80 | (c & 0x3F));
    if (c < 0x10000)
        return crc_byte(crc_byte(crc_byte(crc, 0xE0 | (c >> 12)), 0x80 | ((c >> 6) & 0x3F)), 0x80 | (c & 0x3F));
    crc = crc_byte(crc_byte(crc, 0xF0 | (c >> 18)), 0x80 | ((c >> 12) & 0x3F));
    return crc_byte(crc_byte(crc, 0x80 | ((c >> 6) & 0x3F)), 0x80 | (c & 0x3F));
}

/* A character of the regular expression \w on str: Py_UNICODE_ISALNUM or "_" (SRE_UNI_IS_WORD). */
static inline int word_char(Py_UCS4 c) {
    if (c < 0x80) return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_';
    return Py_UNICODE_ISALNUM(c);
}

/* Marks the buckets of the words of text[begin:end] (see word_buckets), each character lower-cased
 * first when `lower` is set: 0, or -1 (nothing marked past that point) on a character whose lower
 * case str.lower does not give alone (U+0130 becomes two characters; a capital sigma's lower case
 * depends on its neighbours). */
static int mark_words(int kind, const void *data, Py_ssize_t begin, Py_ssize_t end, uint32_t first, uint32_t mask,
                      uint8_t *buckets, int lower) {
    uint32_t crc = first;
    Py_ssize_t chars = 0; /* characters of the word so far */
    int digits = 1;       /* all of them digits so far */
    for (Py_ssize_t i = begin; i <= end; i++) {
        Py_UCS4 c = i < end ? PyUnicode_READ(kind, data, i) : 0;
        if (lower) {
            if (c < 0x80) c = (c >= 'A' && c <= 'Z') ? (c | 0x20) : c;
            else if (c == 0x130 || c == 0x3A3) return -1;
            else c = Py_UNICODE_TOLOWER(c);
        }
        if (i < end && word_char(c)) {
            crc = crc_utf8(crc, c);
            digits = digits && (c < 0x80 ? (c >= '0' && c <= '9') : Py_UNICODE_ISDIGIT(c));
            chars++;
            continue;
        }
        if (chars > 1 && !digits) buckets[~crc & mask] = 1;
        crc = first;
        chars = 0;
        digits = 1;
    }
    return 0;
}

/* word_buckets(text, start, buckets, first=None, last=None, lower=False) -> bool
 *     Marks buckets[zlib.crc32(word.encode("utf-8", "surrogatepass"), start) & (len(buckets) - 1)]
 *     = 1 for every word of `text` that pagewords._add_words counts: each match of the regular
 *     expression \w+ (on str: Py_UNICODE_ISALNUM or "_") with two characters or more that is not all
 *     digits (str.isdigit), in the text lower-cased: by the caller (lower false), or here (lower
 *     true), a character at a time as str.lower does it (Py_UNICODE_TOLOWER), declining (False,
 *     the buckets partly marked) at a character str.lower does not lower alone: U+0130, and the
 *     capital sigma. True when done. With `first` and `last` (int64, one entry per span), only the
 *     words of each span text[first[k]:last[k]] count, each span read as a string of its own (a word
 *     ends at a span's end). `buckets` is a writable one-dimensional uint8 or bool array whose length
 *     is a power of two; `start` is a CRC-32 (0 <= start < 2 ** 32). The reference is
 *     pagewords._add_words (of each span, lower-cased): the same set of buckets, marked instead of
 *     added to a set.
 */
static PyObject *native_word_buckets(PyObject *module, PyObject *args) {
    PyObject *text, *buckets_obj, *first_obj = Py_None, *last_obj = Py_None, *result = NULL;
    unsigned long long start;
    int lower = 0;
    if (!PyArg_ParseTuple(args, "UKO|OOp:word_buckets", &text, &start, &buckets_obj, &first_obj, &last_obj, &lower))
        return NULL;
    if (start > 0xFFFFFFFFull) {
        PyErr_SetString(PyExc_ValueError, "word_buckets: start must be a CRC-32 (below 2 ** 32)");
        return NULL;
    }
    if ((first_obj == Py_None) != (last_obj == Py_None)) {
        PyErr_SetString(PyExc_TypeError, "word_buckets: give both first and last, or neither");
        return NULL;
    }
    Py_buffer view, first_view = {0}, last_view = {0};
    if (PyObject_GetBuffer(buckets_obj, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "word_buckets: buckets must be a writable C-contiguous array");
        return NULL;
    }
    const char *format = view.format ? view.format : "B";
    if (*format == '@' || *format == '=' || *format == '<' || *format == '|') format++;
    Py_ssize_t size = view.ndim == 1 ? view.shape[0] : 0;
    if (view.ndim != 1 || view.itemsize != 1 || strchr("B?", *format) == NULL || format[1] != '\0' || size <= 0 ||
        (size & (size - 1)) != 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError,
                        "word_buckets: buckets must be 1-dimensional uint8 or bool, a power of two long");
        return NULL;
    }
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    const uint32_t mask = (uint32_t)(size - 1), first = ~(uint32_t)start;
    if (first_obj == Py_None) {
        result = PyBool_FromLong(mark_words(kind, data, 0, length, first, mask, view.buf, lower) == 0);
        goto done;
    }
    if (get_array(first_obj, &first_view, 'q', 1, "word_buckets", "first") < 0) goto done;
    if (get_array(last_obj, &last_view, 'q', 1, "word_buckets", "last") < 0) goto done;
    const Py_ssize_t n = first_view.shape[0];
    const int64_t *begins = first_view.buf, *ends = last_view.buf;
    if (last_view.shape[0] != n) {
        PyErr_SetString(PyExc_ValueError, "word_buckets: first and last differ in length");
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (begins[k] < 0 || begins[k] > ends[k] || ends[k] > length) {
            PyErr_Format(PyExc_ValueError, "word_buckets: span %zd is not within the text", k);
            goto done;
        }
    }
    int declined = 0;
    for (Py_ssize_t k = 0; k < n && !declined; k++)
        declined = mark_words(kind, data, begins[k], ends[k], first, mask, view.buf, lower) < 0;
    result = PyBool_FromLong(!declined);
done:
    if (first_view.obj != NULL) PyBuffer_Release(&first_view);
    if (last_view.obj != NULL) PyBuffer_Release(&last_view);
    PyBuffer_Release(&view);
    return result;
}

/* count_parts(text, parts) -> list
 *     [text.count(part) for part in parts]: each part's non-overlapping occurrences, counted from the
 *     left as str.count counts them, in one pass over `text` for all the parts (parts a list of
 *     non-empty str). The reference is pagekind.class_word_counts' str.count per part.
 */
static PyObject *native_count_parts(PyObject *module, PyObject *args) {
    PyObject *text, *parts;
    if (!PyArg_ParseTuple(args, "UO!:count_parts", &text, &PyList_Type, &parts)) return NULL;
    const Py_ssize_t n = PyList_GET_SIZE(parts);
    for (Py_ssize_t p = 0; p < n; p++) {
        PyObject *part = PyList_GET_ITEM(parts, p);
        if (!PyUnicode_Check(part) || PyUnicode_GET_LENGTH(part) == 0) {
            PyErr_SetString(PyExc_ValueError, "count_parts: parts must be a list of non-empty str");
            return NULL;
        }
    }
    Py_ssize_t *counts = PyMem_Calloc(n ? (size_t)n : 1, 3 * sizeof(Py_ssize_t));
    if (counts == NULL) return PyErr_NoMemory();
    Py_ssize_t *next = counts + n;     /* per part, the first position where it may match again */
    Py_ssize_t *chain = counts + 2 * n; /* per part, the next part with the same first character, or -1 */
    /* For speed, each position tries only the parts that begin with its character: chained by first
     * character (ASCII), the rest in one chain tried at every other character. */
    Py_ssize_t head[129];
    for (int c = 0; c < 129; c++) head[c] = -1;
    for (Py_ssize_t p = n - 1; p >= 0; p--) {
        PyObject *part = PyList_GET_ITEM(parts, p);
        Py_UCS4 c = PyUnicode_READ_CHAR(part, 0);
        int slot = c < 128 ? (int)c : 128;
        chain[p] = head[slot];
        head[slot] = p;
    }
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        for (Py_ssize_t p = head[c < 128 ? (int)c : 128]; p >= 0; p = chain[p]) {
            PyObject *part = PyList_GET_ITEM(parts, p);
            const int part_kind = PyUnicode_KIND(part);
            const void *part_data = PyUnicode_DATA(part);
            const Py_ssize_t part_length = PyUnicode_GET_LENGTH(part);
            if (i < next[p] || part_length > length - i) continue;
            Py_ssize_t k = 0;
            while (k < part_length && PyUnicode_READ(part_kind, part_data, k) == PyUnicode_READ(kind, data, i + k)) k++;
            if (k == part_length) {
                counts[p]++;
                next[p] = i + part_length;
            }
        }
    }
    PyObject *result = PyList_New(n);
    for (Py_ssize_t p = 0; result != NULL && p < n; p++) {
        PyObject *count = PyLong_FromSsize_t(counts[p]);
        if (count == NULL) Py_CLEAR(result);
        else PyList_SET_ITEM(result, p, count);
    }
    PyMem_Free(counts);
    return result;
}

/* Whether the price rule of pagekind._next_to_digits holds for a match text[start:end]: the first
 * of the two characters after it that is not " ", "." or U+00A0, or the last of the two before it
 * that is not " " or U+00A0, is a digit (str.isdigit). */
static int next_to_digits(int kind, const void *data, Py_ssize_t length, Py_ssize_t start, Py_ssize_t end) {
    for (Py_ssize_t i = end; i < end + 2 && i < length; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c == ' ' || c == '.' || c == 0xA0) continue;
        if (Py_UNICODE_ISDIGIT(c)) return 1;
        break;
    }
    for (Py_ssize_t i = start - 1; i >= start - 2 && i >= 0; i--) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c == ' ' || c == 0xA0) continue;
        return Py_UNICODE_ISDIGIT(c) != 0;
    }
    return 0;
}

/* count_prices(text, signs, codes) -> int
 *     pagekind.count_prices with its signs and codes given: the characters of `signs` (a str) and the
 *     non-overlapping occurrences of each str of `codes` (a list of non-empty str, counted left to
 *     right as re.finditer finds a literal) that have a digit next to them by the rule of
 *     pagekind._next_to_digits, counted in one pass. The reference is pagekind.count_prices.
 */
static PyObject *native_count_prices(PyObject *module, PyObject *args) {
    PyObject *text, *signs, *codes;
    if (!PyArg_ParseTuple(args, "UUO!:count_prices", &text, &signs, &PyList_Type, &codes)) return NULL;
    enum { MAX_CODES = 16 };
    const Py_ssize_t n_codes = PyList_GET_SIZE(codes);
    if (n_codes > MAX_CODES) {
        PyErr_SetString(PyExc_ValueError, "count_prices: at most 16 codes");
        return NULL;
    }
    Py_ssize_t next[MAX_CODES]; /* per code, the first position where it may match again */
    for (Py_ssize_t p = 0; p < n_codes; p++) {
        PyObject *code = PyList_GET_ITEM(codes, p);
        if (!PyUnicode_Check(code) || PyUnicode_GET_LENGTH(code) == 0) {
            PyErr_SetString(PyExc_ValueError, "count_prices: codes must be a list of non-empty str");
            return NULL;
        }
        next[p] = 0;
    }
    const int kind = PyUnicode_KIND(text), signs_kind = PyUnicode_KIND(signs);
    const void *data = PyUnicode_DATA(text), *signs_data = PyUnicode_DATA(signs);
    const Py_ssize_t length = PyUnicode_GET_LENGTH(text), n_signs = PyUnicode_GET_LENGTH(signs);
    /* For speed, a character is compared with the signs and the codes' first characters only when it
     * is one of them: by a table below U+0100, by a 64-bit filter of its low bits above. */
    uint8_t low[256] = {0};
    uint64_t high = 0;
    for (Py_ssize_t s = 0; s <= n_signs + n_codes - 1; s++) {
        Py_UCS4 c = s < n_signs ? PyUnicode_READ(signs_kind, signs_data, s)
                                : PyUnicode_READ_CHAR(PyList_GET_ITEM(codes, s - n_signs), 0);
        if (c < 256) low[c] = 1;
        else high |= (uint64_t)1 << (c & 63);
    }
    Py_ssize_t found = 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 256 ? !low[c] : !(high >> (c & 63) & 1)) continue;
        for (Py_ssize_t s = 0; s < n_signs; s++) {
            if (PyUnicode_READ(signs_kind, signs_data, s) == c) {
                found += next_to_digits(kind, data, length, i, i + 1);
                break;
            }
        }
        for (Py_ssize_t p = 0; p < n_codes; p++) {
            PyObject *code = PyList_GET_ITEM(codes, p);
            const int code_kind = PyUnicode_KIND(code);
            const void *code_data = PyUnicode_DATA(code);
            const Py_ssize_t code_length = PyUnicode_GET_LENGTH(code);
            if (i < next[p] || PyUnicode_READ(code_kind, code_data, 0) != c || code_length > length - i) continue;
            Py_ssize_t k = 1;
            while (k < code_length && PyUnicode_READ(code_kind, code_data, k) == PyUnicode_READ(kind, data, i + k)) k++;
            if (k == code_length) {
                found += next_to_digits(kind, data, length, i, i + code_length);
                next[p] = i + code_length;
            }
        }
    }
    return PyLong_FromSsize_t(found);
}

static PyMethodDef methods[] = {
    {"tags_in_source", native_tags_in_source, METH_VARARGS,
     "tags_in_source(html, names): the names (lower-case ASCII) that follow some '<' of html, case aside."},
    {"source_tags", native_source_tags, METH_VARARGS,
     "source_tags(html, names): tags_in_source's names and html.count('<'), in one pass."},
    {"lexbor_setup", native_lexbor_setup, METH_VARARGS,
     "lexbor_setup(path, node_type): find Lexbor's functions in selectolax's loaded module; whether walk can run."},
    {"walk", native_walk, METH_VARARGS,
     "walk(root, n_elements, void_tags): scan's fields read from the Lexbor tree under root (a LexborNode), or None."},
    {"hidden_candidates", native_hidden_candidates, METH_VARARGS,
     "hidden_candidates(root, n_elements): clean._HIDDEN_OR_SCREEN_READER's matches, their subtree ends and the"
     " [aria-controls] elements, or None."},
    {"attributed_elements", native_attributed_elements, METH_VARARGS,
     "attributed_elements(root, n_elements, first, names): {index: {name: value}} of the elements from `first` on"
     " carrying one of the attributes named, or None."},
    {"early_read", native_early_read, METH_VARARGS,
     "early_read(root): clean._BEFORE_CLEANING's title, JSON-LD and print stylesheet texts and whether a noscript is"
     " there, or None."},
    {"scan", native_scan, METH_VARARGS,
     "scan(serialised, tags or number of elements, void_tags): document._scan_fast's fields and the tag names, or None."},
    {"tree_leaves", native_tree_leaves, METH_VARARGS,
     "tree_leaves(x, feature, threshold, child, value, roots, max_depth): leaf value per (row, tree)."},
    {"complete_tree_leaves", native_complete_tree_leaves, METH_VARARGS,
     "complete_tree_leaves(x, feature, threshold, value, depth): leaf value per (row, tree), complete layout."},
    {"element_counts", native_element_counts, METH_VARARGS,
     "element_counts(starts, start, end, index): sorted starts strictly inside each indexed element."},
    {"repeated_items", native_repeated_items, METH_VARARGS,
     "repeated_items(parent, tag, n_tags, elements, levels): learn.blocks.repeated_items' four columns."},
    {"key_counts", native_key_counts, METH_VARARGS, "key_counts(keys): entries sharing each entry's key, float64."},
    {"inherit", native_inherit, METH_VARARGS,
     "inherit(parent, is_holder, semantic, hints, decay): (holder, context) of heuristic.inherit."},
    {"word_counts", native_word_counts, METH_VARARGS, "word_counts(texts, index): len(texts[i].split()) as float64."},
    {"class_counts", native_class_counts, METH_VARARGS,
     "class_counts(texts, index, block, n_blocks, table): characters per (block, class), float64."},
    {"containing", native_containing, METH_VARARGS,
     "containing(kind, first, last, kinds, position): ranges of each kind holding each position, or None."},
    {"block_columns", native_block_columns, METH_VARARGS,
     "block_columns(out, rows, ...): learn.blocks._columns written into the feature matrix, or None."},
    {"context_columns", native_context_columns, METH_VARARGS,
     "context_columns(probability, parent, grandparent, page_mean, radius): learn.blocks.context_features, or None."},
    {"block_neighbours", native_block_neighbours, METH_VARARGS,
     "block_neighbours(out, sources, previous, next, edge, parent, ...): neighbours' rows and the parent's mean."},
    {"structure_columns", native_structure_columns, METH_VARARGS,
     "structure_columns(out, rows, ...): learn.blocks.structure_columns written into the feature matrix, or None."},
    {"word_buckets", native_word_buckets, METH_VARARGS,
     "word_buckets(text, start, buckets, first=None, last=None, lower=False): mark each word's bucket; False: declined."},
    {"count_parts", native_count_parts, METH_VARARGS,
     "count_parts(text, parts): [text.count(part) for part in parts], in one pass."},
    {"count_prices", native_count_prices, METH_VARARGS,
     "count_prices(text, signs, codes): pagekind.count_prices with these signs and codes, in one pass."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "readerproxy._native", "Optional C kernels (see readerproxy._speedups).", 0, methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    crc_table_init();
    PyObject *module = PyModule_Create(&module_def);
    if (module != NULL && (PyModule_AddStringConstant(module, "SOURCE_HASH", READERPROXY_NATIVE_SOURCE_HASH) < 0 ||
                           PyModule_AddIntConstant(module, "HAVE_WALK", READERPROXY_HAVE_DLFCN) < 0))
        Py_CLEAR(module);
    return module;
}
