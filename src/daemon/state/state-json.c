/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state-json.c — the strict JSON reader under the state file and the journal */

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "sriovd/shared/util.h"
#include "state-internal.h"

/*
 * json-c builds the tree, and a scan of the bytes adds the format's rules and the places of
 * values. json-c says nothing about where a value was. Even with JSON_TOKENER_STRICT, it also
 * lets through things that a sriovd file never holds:
 *  - raw control characters and lone surrogates in strings,
 *  - overlong or surrogate UTF-8,
 *  - single quotes,
 *  - NaN and Infinity,
 *  - integers beyond 64 bits, which it saturates,
 *  - duplicate keys, of which the last wins,
 *  - NUL bytes, which it takes for the end of the input,
 *  - content after the document.
 * So the bytes are also scanned once, by a recogniser that decodes nothing. It refuses all of
 * the above and names the place of every refusal. It also finds a value's place again when a
 * rule about that value is broken. The two never disagree on structure, because the scan stops
 * at the first error that json-c reports. The scan then describes that error better when it can.
 */

#define DEPTH_MAX 8   /* A sriovd file nests 4 levels deep. */

/* Every key of both documents. A duplicate of one of these is refused. Any other key is refused as unknown. */
static const char *const known_keys[] = {
        "format", "version", "generation", "tenants", "checksum", "tenant", "class", "kind", "vf", "mac",
        "vlan", "domain", "numa_node", "coalesce", "seq", "rx_usecs", "tx_usecs", "base", "set", "released",
        "rt_cpus", "pin_pf", "domain_uuid", "owner", "min_tx_rate", "max_tx_rate",
};

/*
 * The lists and objects of the format, checked as soon as they open. Inside the wrong kind of
 * container, the first complaint would be about syntax, such as "expected a key", and would
 * hide the real mistake.
 */
static const struct {
        const char *key, *expected;
        char open;
} containers[] = {
        { "tenants",  "'[' (the list of tenants)",   '[' },
        { "set",      "'[' (the list of tenants)",   '[' },
        { "released", "'[' (the released tenants)", '[' },
        { "coalesce", "'{'",                         '{' },
};

typedef struct Level {
        bool array;
        size_t index;               /* in an array, the element being scanned */
        int key;                    /* in an object, the known_keys[] index of the member being scanned, or -1 */
        size_t key_start, key_len;  /* in an object, the member's key as written, inside the quotes */
        uint32_t seen;              /* in an object, the known keys met so far */
} Level;

typedef struct Scan {
        const StateText *t;
        size_t pos, limit;          /* the scan stops with SCAN_STOP on reaching limit */
        Level level[DEPTH_MAX];
        unsigned depth;
        const JsonPath *target;     /* for locating: stop at the value, or the key, that this names */
        size_t found, last_top_key;
} Scan;

#define SCAN_STOP 1

/* The line and column of pos in buf, both counted from 1. */
static void locate(const char *buf, size_t pos, unsigned *ret_line, unsigned *ret_column) {
        unsigned line = 1;
        size_t bol = 0;

        for (size_t i = 0; i < pos; i++)
                if (buf[i] == '\n') {
                        line++;
                        bol = i + 1;
                }
        *ret_line = line;
        *ret_column = (unsigned) MIN(pos - bol + 1, (size_t) UINT_MAX);
}

void state_error_set(StateError *e, unsigned line, unsigned column, const char *fmt, ...) {
        va_list ap;
        int n = 0;

        if (!e)
                return;
        *e = (StateError) { .line = line, .column = column };
        if (line > 0)
                n = snprintf(e->message, sizeof(e->message), "line %u, column %u: ", line, column);
        va_start(ap, fmt);
        vsnprintf(e->message + n, sizeof(e->message) - (size_t) n, fmt, ap);
        va_end(ap);
}

static int text_verror(const StateText *t, size_t pos, const char *fmt, va_list ap) {
        char text[sizeof(t->error->message)];
        unsigned line, column;

        vsnprintf(text, sizeof(text), fmt, ap);
        locate(t->buf, pos, &line, &column);
        state_error_set(t->error, line, column, "%s", text);
        return -EBADMSG;
}

int state_text_error(const StateText *t, size_t pos, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = text_verror(t, pos, fmt, ap);
        va_end(ap);
        return r;
}

int state_path_error(const StateText *t, const JsonPath *p, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = text_verror(t, state_json_locate(t, p), fmt, ap);
        va_end(ap);
        return r;
}

const char *state_describe_at(const StateText *t, size_t pos, char buf[static 16]) {
        unsigned char c;

        if (pos >= t->end)
                return "end of file (truncated?)";
        c = (unsigned char) t->buf[pos];
        if (c > 0x20 && c < 0x7f)
                snprintf(buf, 16, "'%c'", c);
        else
                snprintf(buf, 16, "byte 0x%02x", c);
        return buf;
}

bool state_utf8_valid(const char *s, size_t n) {
        for (size_t i = 0; i < n;) {
                size_t len = utf8_sequence_len((const unsigned char *) s + i, n - i);
                if (len == 0)
                        return false;
                i += len;
        }
        return true;
}

/* Name the value that the first levels lead to, as messages do, for example "tenants[3].coalesce". */
static const char *scan_name(const Scan *s, unsigned levels, char buf[static 80]) {
        size_t len = 0;

        if (levels == 0)
                return s->t->root;
        buf[0] = 0;
        for (unsigned i = 1; i <= levels && len < 79; i++) {
                const Level *parent = &s->level[i - 1];
                int w;
                if (parent->array)
                        w = snprintf(buf + len, 80 - len, "[%zu]", parent->index);
                else if (parent->key >= 0)
                        w = snprintf(buf + len, 80 - len, "%s%s", i > 1 ? "." : "", known_keys[parent->key]);
                else   /* An unknown key, as written. The reader refuses it later, if nothing fails first. */
                        w = snprintf(buf + len, 80 - len, "%s%.*s", i > 1 ? "." : "", (int) MIN(parent->key_len, (size_t) 24),
                                     s->t->buf + parent->key_start);
                len = MIN(len + (size_t) MAX(w, 0), (size_t) 79);
        }
        return buf;
}

_printf_(3, 4) static int scan_error(Scan *s, size_t pos, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = text_verror(s->t, pos, fmt, ap);
        va_end(ap);
        return r;
}

static void scan_ws(Scan *s) {
        const char *buf = s->t->buf;

        while (s->pos < s->limit && (buf[s->pos] == ' ' || buf[s->pos] == '\n' || buf[s->pos] == '\t' || buf[s->pos] == '\r'))
                s->pos++;
}

/*
 * Whether the scan has reached limit and stops. Then either json-c's error at that place is
 * reported, or the target was passed.
 */
static bool scan_stopped(const Scan *s) {
        return s->pos >= s->limit;
}

static int hex4(const char *p) {
        int v = 0;

        for (int i = 0; i < 4; i++) {
                char c = p[i];
                int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
                if (d < 0)
                        return -1;
                v = v << 4 | d;
        }
        return v;
}

/*
 * Scan a string. what names it in messages: "a key", or the value's name. The string's bytes
 * end up in [*ret_start + 1, s->pos - 1).
 */
static int scan_string(Scan *s, const char *what, size_t *ret_start) {
        const char *buf = s->t->buf;
        size_t start = s->pos;
        char d[16];

        if (buf[s->pos] != '"')
                return scan_error(s, s->pos, "expected a string for %s, found %s", what, state_describe_at(s->t, s->pos, d));
        *ret_start = start;
        s->pos++;
        for (;;) {
                unsigned char c;

                if (scan_stopped(s))
                        return SCAN_STOP;
                c = (unsigned char) buf[s->pos];
                if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {   /* the common case */
                        s->pos++;
                        continue;
                }
                if (c == '"') {
                        s->pos++;
                        return 0;
                }
                if (c < 0x20)
                        return scan_error(s, s->pos, "control character 0x%02x in %s; expected it escaped", c, what);
                if (c == '\\') {
                        size_t at = s->pos;
                        int cp, lo;

                        if (s->pos + 1 >= s->limit)
                                return SCAN_STOP;
                        if (!strchr("\"\\/bfnrtu", buf[s->pos + 1]) || !buf[s->pos + 1])
                                return scan_error(s, s->pos, "invalid escape in %s; expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX", what);
                        if (buf[s->pos + 1] != 'u') {
                                s->pos += 2;
                                continue;
                        }
                        if (s->limit - s->pos < 6)
                                return SCAN_STOP;
                        cp = hex4(buf + s->pos + 2);
                        if (cp < 0)
                                return scan_error(s, s->pos, "expected 4 hex digits after \\u");
                        s->pos += 6;
                        if (cp >= 0xdc00 && cp <= 0xdfff)
                                return scan_error(s, at, "lone low surrogate \\u%04x in %s", (unsigned) cp, what);
                        if (cp >= 0xd800 && cp <= 0xdbff) {
                                if (s->limit - s->pos < 6 && s->limit < s->t->end)
                                        return SCAN_STOP;
                                if (s->t->end - s->pos < 6 || buf[s->pos] != '\\' || buf[s->pos + 1] != 'u' ||
                                    (lo = hex4(buf + s->pos + 2)) < 0xdc00 || lo > 0xdfff)
                                        return scan_error(s, at, "high surrogate \\u%04x without its low half in %s", (unsigned) cp, what);
                                s->pos += 6;
                        }
                        if (cp == 0)
                                return scan_error(s, at, "\\u0000 in %s; NUL characters are not allowed", what);
                        continue;
                }
                size_t len = utf8_sequence_len((const unsigned char *) buf + s->pos, s->t->end - s->pos);
                if (len == 0)
                        return scan_error(s, s->pos, "invalid UTF-8 in %s", what);
                if (s->pos + len > s->limit)
                        return SCAN_STOP;
                s->pos += len;
        }
}

static int scan_value(Scan *s);

/*
 * Decode a key that was written with escapes, which only a hand-edited file has. json-c decodes
 * it, and the scan has already checked it. Returns NULL when out of memory.
 */
static json_object *key_decode(const char *quoted, size_t size) {
        _cleanup_(json_tokener_freep) json_tokener *tok = json_tokener_new();
        json_object *o;

        if (!tok)
                return NULL;
        o = json_tokener_parse_ex(tok, quoted, (int) size);
        if (!json_object_is_type(o, json_type_string)) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* Whether the level l matches one step of the target path. */
static bool level_is(const Scan *s, const Level *l, const JsonStep *step) {
        if (!step->key)
                return l->array && l->index == step->index;
        if (l->array)
                return false;
        if (l->key >= 0)
                return streq(known_keys[l->key], step->key);
        /*
         * An unknown key matters only when an error is about it. It is compared as written, or
         * decoded when it was written with escapes.
         */
        if (memchr(s->t->buf + l->key_start, '\\', l->key_len)) {
                _cleanup_(json_object_putp) json_object *o = key_decode(s->t->buf + l->key_start - 1, l->key_len + 2);
                return o && streq(json_object_get_string(o), step->key);
        }
        return strlen(step->key) == l->key_len && memcmp(s->t->buf + l->key_start, step->key, l->key_len) == 0;
}

/* Whether the scan is at the target, that is, whether the path so far equals it. */
static bool at_target(const Scan *s, bool key) {
        const JsonPath *p = s->target;

        if (!p || p->key != key || p->n != s->depth)
                return false;
        for (unsigned i = 0; i < p->n; i++)
                if (!level_is(s, &s->level[i], &p->step[i]))
                        return false;
        return true;
}

static int known_key(const char *key, size_t n) {
        /* This runs once per key of the file, so the cheap test of the first byte comes before the length. */
        for (unsigned k = 0; k < ELEMENTSOF(known_keys); k++)
                if (n > 0 && known_keys[k][0] == key[0] && strlen(known_keys[k]) == n && memcmp(known_keys[k], key, n) == 0)
                        return (int) k;
        return -1;
}

/* The known_keys[] index of the key at [start, end), quotes included, or -1 if it is none of them. */
static int key_lookup(Scan *s, size_t start, size_t end) {
        _cleanup_(json_object_putp) json_object *o = NULL;

        if (!memchr(s->t->buf + start + 1, '\\', end - start - 2))
                return known_key(s->t->buf + start + 1, end - start - 2);
        o = key_decode(s->t->buf + start, end - start);
        return o ? known_key(json_object_get_string(o), (size_t) json_object_get_string_len(o)) : -1;
}

static int scan_container(Scan *s, bool array) {
        char name[80], d[16];
        Level *l;
        int r;

        if (s->depth >= DEPTH_MAX)
                return scan_error(s, s->pos, "nested deeper than %d levels", DEPTH_MAX);
        l = &s->level[s->depth++];
        *l = (Level) { .array = array, .key = -1 };
        s->pos++;
        scan_ws(s);
        if (scan_stopped(s))
                return SCAN_STOP;
        if (s->t->buf[s->pos] == (array ? ']' : '}')) {
                s->pos++;
                s->depth--;
                return 0;
        }
        for (;;) {
                scan_ws(s);
                if (scan_stopped(s))
                        return SCAN_STOP;
                if (!array) {
                        size_t key_pos;

                        l->key = -1;
                        r = scan_string(s, "a key", &key_pos);
                        if (r != 0)
                                return r;
                        l->key = key_lookup(s, key_pos, s->pos);
                        l->key_start = key_pos + 1;
                        l->key_len = s->pos - key_pos - 2;
                        if (l->key >= 0) {
                                if (l->seen & (1u << l->key))
                                        return scan_error(s, key_pos, "key \"%s\" appears twice in %s", known_keys[l->key],
                                                          scan_name(s, s->depth - 1, name));
                                l->seen |= 1u << l->key;
                        }
                        if (s->depth == 1)
                                s->last_top_key = key_pos;
                        if (at_target(s, true)) {
                                s->found = key_pos;
                                return SCAN_STOP;
                        }
                        scan_ws(s);
                        if (scan_stopped(s))
                                return SCAN_STOP;
                        if (s->t->buf[s->pos] != ':')
                                return scan_error(s, s->pos, "expected ':' after the key, found %s", state_describe_at(s->t, s->pos, d));
                        s->pos++;
                }
                r = scan_value(s);
                if (r != 0)
                        return r;
                scan_ws(s);
                if (scan_stopped(s))
                        return SCAN_STOP;
                if (s->t->buf[s->pos] == ',') {
                        s->pos++;
                        scan_ws(s);
                        if (scan_stopped(s))
                                return SCAN_STOP;
                        if (s->t->buf[s->pos] == (array ? ']' : '}')) {
                                return scan_error(s, s->pos, "trailing comma in %s", scan_name(s, s->depth - 1, name));
                        }
                        l->index++;
                        continue;
                }
                if (s->t->buf[s->pos] == (array ? ']' : '}')) {
                        s->pos++;
                        s->depth--;
                        return 0;
                }
                return scan_error(s, s->pos, "expected ',' or '%c', found %s", array ? ']' : '}', state_describe_at(s->t, s->pos, d));
        }
}

static int scan_value(Scan *s) {
        const char *buf = s->t->buf;
        char name[80], d[16];
        size_t start;

        scan_ws(s);
        if (scan_stopped(s))
                return SCAN_STOP;
        if (at_target(s, false)) {
                s->found = s->pos;
                return SCAN_STOP;
        }
        start = s->pos;
        if (s->depth == 0 && buf[s->pos] != '{')   /* Both documents are objects. */
                return scan_error(s, s->pos, "expected '{', found %s", state_describe_at(s->t, s->pos, d));
        if (s->depth > 0 && !s->level[s->depth - 1].array && s->level[s->depth - 1].key >= 0 && strchr("[{", buf[s->pos]))
                for (size_t i = 0; i < ELEMENTSOF(containers); i++)
                        if (streq(known_keys[s->level[s->depth - 1].key], containers[i].key) && buf[s->pos] != containers[i].open)
                                return scan_error(s, s->pos, "expected %s, found %s", containers[i].expected, state_describe_at(s->t, s->pos, d));
        switch (buf[s->pos]) {
        case '{':
                return scan_container(s, false);
        case '[':
                return scan_container(s, true);
        case '"':
                return scan_string(s, scan_name(s, s->depth, name), &start);
        case 't': case 'f': case 'n':
                /* json-c checks the words. Only where they end matters here. */
                while (s->pos < s->limit && buf[s->pos] >= 'a' && buf[s->pos] <= 'z')
                        s->pos++;
                return scan_stopped(s) ? SCAN_STOP : 0;
        case '-': case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
                if (buf[s->pos] == '-' && ++s->pos < s->limit && !(buf[s->pos] >= '0' && buf[s->pos] <= '9'))
                        /* json-c would accept "-Infinity". */
                        return scan_error(s, start, "expected a value for %s, found %s", scan_name(s, s->depth, name),
                                          state_describe_at(s->t, start, d));
                if (s->pos + 1 < s->limit && buf[s->pos] == '0' && buf[s->pos + 1] >= '0' && buf[s->pos + 1] <= '9')
                        return scan_error(s, start, "%s has a leading zero, which JSON does not allow", scan_name(s, s->depth, name));
                /* json-c checks the rest of the number. Whether it must be whole is the reader's rule. */
                while (s->pos < s->limit && buf[s->pos] && strchr("0123456789.eE+-", buf[s->pos]))
                        s->pos++;
                return scan_stopped(s) ? SCAN_STOP : 0;
        }
        return scan_error(s, s->pos, "expected a value for %s, found %s", scan_name(s, s->depth, name), state_describe_at(s->t, s->pos, d));
}

static const char *tokener_expected(enum json_tokener_error e) {
        switch (e) {
        case json_tokener_error_depth:                  return "nesting within the limit";
        case json_tokener_error_parse_null:             return "null";
        case json_tokener_error_parse_boolean:          return "true or false";
        case json_tokener_error_parse_number:           return "a number";
        case json_tokener_error_parse_array:            return "',' or ']'";
        case json_tokener_error_parse_object_key_name:  return "a string for a key";
        case json_tokener_error_parse_object_key_sep:   return "':' after the key";
        case json_tokener_error_parse_object_value_sep: return "',' or '}'";
        case json_tokener_error_parse_string:           return "a valid string";
        case json_tokener_error_parse_utf8_string:      return "valid UTF-8";
        default:                                        return "a value";
        }
}

static json_object *tokener_parse(json_tokener *tok, const char *buf, size_t size, enum json_tokener_error *ret_error,
                                  size_t *ret_end) {
        json_object *o;

        json_tokener_reset(tok);
        o = json_tokener_parse_ex(tok, buf, (int) size);
        *ret_error = json_tokener_get_error(tok);
        *ret_end = json_tokener_get_parse_end(tok);
        if (*ret_error == json_tokener_success)
                return o;
        json_object_put(o);
        return NULL;
}

int state_json_parse(const StateText *t, json_object **ret, size_t *ret_end, size_t *ret_last_key) {
        _cleanup_(json_tokener_freep) json_tokener *tok = NULL;
        _cleanup_(json_object_putp) json_object *root = NULL;
        enum json_tokener_error e;
        Scan s = { .t = t, .pos = t->start, .limit = t->end };
        size_t err_at;
        char d[16];
        int r;

        if (t->end - t->start > INT_MAX)
                return state_text_error(t, t->start, "the document is larger than %d bytes", INT_MAX);
        tok = json_tokener_new_ex(DEPTH_MAX + 1);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        root = tokener_parse(tok, t->buf + t->start, t->end - t->start, &e, &err_at);
        err_at += t->start;
        if (!root)
                /* The scan covers the byte where json-c stopped too, since it may say better what is wrong there. */
                s.limit = MIN(err_at + 1, t->end);

        r = scan_value(&s);
        if (r < 0)
                return r;
        if (!root && r == 0 && s.pos <= err_at) {
                /*
                 * In strict mode, json-c refuses anything after the value. So parse the value
                 * alone, and let the reader say what it thinks of the rest.
                 */
                root = tokener_parse(tok, t->buf + t->start, s.pos - t->start, &e, &err_at);
                err_at += t->start;
        }
        if (!root) {
                if (e == json_tokener_continue || err_at >= t->end)
                        return state_text_error(t, err_at, "unexpected %s", state_describe_at(t, err_at, d));
                return state_text_error(t, err_at, "expected %s, found %s", tokener_expected(e), state_describe_at(t, err_at, d));
        }
        if (r == SCAN_STOP)   /* Cannot happen: json-c read a whole value within the document. */
                return state_text_error(t, s.pos, "unexpected end of the document (truncated?)");
        *ret = TAKE_PTR(root);
        *ret_end = s.pos;
        *ret_last_key = s.last_top_key;
        return 0;
}

size_t state_json_locate(const StateText *t, const JsonPath *p) {
        Scan s = { .t = t, .pos = t->start, .limit = t->end, .target = p, .found = SIZE_MAX };

        (void) scan_value(&s);
        if (s.found != SIZE_MAX)
                return s.found;
        /* The path is not there, so the error is about the whole document. Point at its first byte. */

        s = (Scan) { .t = t, .pos = t->start, .limit = t->end };
        scan_ws(&s);
        return s.pos;
}

JsonPath state_path_key(const JsonPath *p, const char *key) {
        JsonPath c = *p;

        c.key = false;
        if (c.n < ELEMENTSOF(c.step))
                c.step[c.n++] = (JsonStep) { .key = key };
        return c;
}

JsonPath state_path_index(const JsonPath *p, size_t index) {
        JsonPath c = *p;

        c.key = false;
        if (c.n < ELEMENTSOF(c.step))
                c.step[c.n++] = (JsonStep) { .index = index };
        return c;
}
