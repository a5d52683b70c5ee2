/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state.c — the allocation state file: strict parser, canonical writer, atomic save, corrupt files kept aside */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "sriovd/json.h"
#include "sriovd/kernel.h"
#include "sriovd/rootfs.h"
#include "sriovd/state.h"
#include "state-internal.h"

#define TEMP_INFIX ".tmp-"

/* CRC32C (Castagnoli, reflected 0x82f63b78), as iSCSI and ext4 use it. */
uint32_t state_crc32c(const void *data, size_t size) {
        const uint8_t *p = data;
        uint32_t table[256], crc = UINT32_MAX;

        /* 1 KiB of table per call is cheaper than a global to initialise, at our file sizes. */
        for (uint32_t i = 0; i < 256; i++) {
                uint32_t c = i;
                for (int k = 0; k < 8; k++)
                        c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
                table[i] = c;
        }
        for (size_t i = 0; i < size; i++)
                crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
        return crc ^ UINT32_MAX;
}

/* Field rules, shared by the parser and state_validate(): NULL = valid, else what is expected. */

const char *state_tenant_id_check(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n >= TENANT_ID_MAX)
                return "expected 1-63 characters from [A-Za-z0-9._-]";
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]))
                        return "expected 1-63 characters from [A-Za-z0-9._-]";
        return NULL;
}

static const char *class_name_check(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n >= CLASS_NAME_MAX || !strchr("abcdefghijklmnopqrstuvwxyz0123456789", s[0]))
                goto bad;
        for (size_t i = 1; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_-", s[i]))
                        goto bad;
        return NULL;
bad:
        return "expected [a-z0-9][a-z0-9_-]*, at most 63 characters, as tenant classes are named";
}

static bool is_lower_hex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

static const char *pci_addr_check(const char *s) {
        return pci_addr_valid(s) ? NULL : "expected a PCI address such as 0000:41:00.2 (lowercase hex, device 00-1f, function 0-7)";
}

static const char *domain_check(const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        size_t n = strlen(s);

        if (n >= STATE_DOMAIN_MAX)
                return "expected at most 255 bytes";
        for (size_t i = 0; i < n;) {
                size_t len = utf8_sequence_len(p + i, n - i);
                if (len == 0)
                        return "expected valid UTF-8";
                if (p[i] < 0x20 || p[i] == 0x7f || p[i] == '/')
                        return "expected no control characters and no '/'";
                i += len;
        }
        return NULL;
}

static const char *mac_check(const uint8_t mac[static 6]) {
        return (mac[0] & 1) ? "expected a unicast MAC address" : NULL;
}

const char *state_kind_to_string(int kind) {
        return kind == STATE_KIND_VF ? "vf" : kind == STATE_KIND_VIRTIO ? "virtio"
               : kind == STATE_KIND_WAITING ? "waiting" : NULL;
}

/* Location of pos in buf, 1-based. */
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

/* Sets *e (if any) to "line L, column C: MESSAGE", or MESSAGE alone when line is 0. */
_printf_(4, 5) static void error_set(StateError *e, unsigned line, unsigned column, const char *fmt, ...) {
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



_printf_(3, 4) int state_parser_error(Parser *p, size_t pos, const char *fmt, ...) {
        char text[sizeof(p->error->message)];
        unsigned line, column;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        locate(p->buf, pos, &line, &column);
        error_set(p->error, line, column, "%s", text);
        return -EBADMSG;
}

/* "'x'" or "byte 0xNN" or "end of file", for "expected ..., found ..." */
static const char *describe_at(const Parser *p, size_t pos, char buf[static 16]) {
        unsigned char c;

        if (pos >= p->size)
                return "end of file (truncated?)";
        c = (unsigned char) p->buf[pos];
        if (c > 0x20 && c < 0x7f)
                snprintf(buf, 16, "'%c'", c);
        else
                snprintf(buf, 16, "byte 0x%02x", c);
        return buf;
}

void state_skip_ws(Parser *p) {
        while (p->pos < p->size && strchr(" \t\r\n", p->buf[p->pos]) && p->buf[p->pos])
                p->pos++;
}

/* The next non-blank character, not consumed; -1 at the end. */
int state_peek(Parser *p) {
        state_skip_ws(p);
        return p->pos < p->size ? (unsigned char) p->buf[p->pos] : -1;
}

int state_expect(Parser *p, char c, const char *what) {
        char d[16];

        if (state_peek(p) != (unsigned char) c)
                return state_parser_error(p, p->pos, "expected %s, found %s", what, describe_at(p, p->pos, d));
        p->pos++;
        return 0;
}

static int parse_hex4(Parser *p, size_t at, uint32_t *ret) {
        uint32_t v = 0;

        if (p->size - at < 4)
                return state_parser_error(p, p->size, "unexpected end of file in a \\u escape (truncated?)");
        for (size_t i = 0; i < 4; i++) {
                int d = hex_digit(p->buf[at + i]);
                if (d < 0)
                        return state_parser_error(p, at + i, "expected 4 hex digits after \\u");
                v = v << 4 | (uint32_t) d;
        }
        *ret = v;
        return 0;
}

/*
 * A JSON string into dst (cap bytes with the NUL). Escapes decoded; raw bytes must be valid
 * UTF-8; NUL (\u0000) refused, since it would silently cut the value short.
 */
int state_parse_string(Parser *p, const char *what, char *dst, size_t cap) {
        size_t start, n = 0;
        char d[16];

        if (state_peek(p) != '"')
                return state_parser_error(p, p->pos, "expected a string for %s, found %s", what, describe_at(p, p->pos, d));
        start = p->pos++;
        for (;;) {
                unsigned char c;
                char out[4];
                size_t len;

                if (p->pos >= p->size)
                        return state_parser_error(p, p->pos, "unexpected end of file in %s (truncated?)", what);
                c = (unsigned char) p->buf[p->pos];
                if (c == '"') {
                        p->pos++;
                        break;
                }
                if (c < 0x20)
                        return state_parser_error(p, p->pos, "control character 0x%02x in %s; expected it escaped", c, what);
                if (c == '\\') {
                        uint32_t cp;

                        if (p->pos + 1 >= p->size)
                                return state_parser_error(p, p->size, "unexpected end of file in %s (truncated?)", what);
                        switch (p->buf[p->pos + 1]) {
                        case '"': case '\\': case '/':
                                cp = (unsigned char) p->buf[p->pos + 1];
                                p->pos += 2;
                                break;
                        case 'b': cp = '\b'; p->pos += 2; break;
                        case 'f': cp = '\f'; p->pos += 2; break;
                        case 'n': cp = '\n'; p->pos += 2; break;
                        case 'r': cp = '\r'; p->pos += 2; break;
                        case 't': cp = '\t'; p->pos += 2; break;
                        case 'u': {
                                size_t at = p->pos;
                                if (parse_hex4(p, p->pos + 2, &cp) < 0)
                                        return -EBADMSG;
                                p->pos += 6;
                                if (cp >= 0xdc00 && cp <= 0xdfff)
                                        return state_parser_error(p, at, "lone low surrogate \\u%04x in %s", cp, what);
                                if (cp >= 0xd800 && cp <= 0xdbff) {
                                        uint32_t lo;
                                        if (p->size - p->pos < 2 || p->buf[p->pos] != '\\' || p->buf[p->pos + 1] != 'u')
                                                return state_parser_error(p, at, "high surrogate \\u%04x without its low half in %s", cp, what);
                                        if (parse_hex4(p, p->pos + 2, &lo) < 0)
                                                return -EBADMSG;
                                        if (lo < 0xdc00 || lo > 0xdfff)
                                                return state_parser_error(p, at, "high surrogate \\u%04x without its low half in %s", cp, what);
                                        p->pos += 6;
                                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                                }
                                if (cp == 0)
                                        return state_parser_error(p, at, "\\u0000 in %s; NUL characters are not allowed", what);
                                break;
                        }
                        default:
                                return state_parser_error(p, p->pos, "invalid escape in %s; expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX", what);
                        }
                        /* UTF-8 encode cp */
                        if (cp < 0x80) {
                                out[0] = (char) cp;
                                len = 1;
                        } else if (cp < 0x800) {
                                out[0] = (char) (0xc0 | cp >> 6);
                                out[1] = (char) (0x80 | (cp & 0x3f));
                                len = 2;
                        } else if (cp < 0x10000) {
                                out[0] = (char) (0xe0 | cp >> 12);
                                out[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
                                out[2] = (char) (0x80 | (cp & 0x3f));
                                len = 3;
                        } else {
                                out[0] = (char) (0xf0 | cp >> 18);
                                out[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
                                out[2] = (char) (0x80 | ((cp >> 6) & 0x3f));
                                out[3] = (char) (0x80 | (cp & 0x3f));
                                len = 4;
                        }
                } else {
                        len = utf8_sequence_len((const unsigned char *) p->buf + p->pos, p->size - p->pos);
                        if (len == 0)
                                return state_parser_error(p, p->pos, "invalid UTF-8 in %s", what);
                        memcpy(out, p->buf + p->pos, len);
                        p->pos += len;
                }
                if (n + len >= cap)
                        return state_parser_error(p, start, "%s is longer than %zu bytes", what, cap - 1);
                memcpy(dst + n, out, len);
                n += len;
        }
        dst[n] = 0;
        return 0;
}

/* A JSON integer (no fraction, no exponent) in [min, max]. */
int state_parse_integer(Parser *p, const char *what, int64_t min, int64_t max, int64_t *ret) {
        size_t start;
        bool negative = false;
        uint64_t v = 0, limit;
        char d[16];

        state_skip_ws(p);
        start = p->pos;
        if (p->pos < p->size && p->buf[p->pos] == '-') {
                negative = true;
                p->pos++;
        }
        if (p->pos >= p->size || p->buf[p->pos] < '0' || p->buf[p->pos] > '9')
                return state_parser_error(p, start, "expected an integer for %s, found %s", what, describe_at(p, start, d));
        if (p->buf[p->pos] == '0' && p->pos + 1 < p->size && p->buf[p->pos + 1] >= '0' && p->buf[p->pos + 1] <= '9')
                return state_parser_error(p, start, "%s has a leading zero, which JSON does not allow", what);
        limit = negative ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;
        while (p->pos < p->size && p->buf[p->pos] >= '0' && p->buf[p->pos] <= '9') {
                unsigned digit = (unsigned) (p->buf[p->pos] - '0');
                if (v > (limit - digit) / 10)
                        return state_parser_error(p, start, "%s is out of range; expected %" PRId64 "..%" PRId64, what, min, max);
                v = v * 10 + digit;
                p->pos++;
        }
        if (p->pos < p->size && strchr(".eE", p->buf[p->pos]) && p->buf[p->pos])
                return state_parser_error(p, start, "%s must be a whole number", what);

        int64_t r = negative ? (v == (uint64_t) INT64_MAX + 1 ? INT64_MIN : -(int64_t) v) : (int64_t) v;
        if (r < min || r > max)
                return state_parser_error(p, start, "%s = %" PRId64 " is out of range; expected %" PRId64 "..%" PRId64, what, r, min, max);
        *ret = r;
        return 0;
}

/* 1 and consumed if the next value is null, 0 if it is something else. */
static int parse_null(Parser *p) {
        if (state_peek(p) != 'n')
                return 0;
        if (p->size - p->pos < 4 || memcmp(p->buf + p->pos, "null", 4) != 0)
                return state_parser_error(p, p->pos, "expected null");
        p->pos += 4;
        return 1;
}

static int parse_integer_or_null(Parser *p, const char *what, int64_t min, int64_t max, int64_t *ret) {
        int r = parse_null(p);
        if (r < 0)
                return r;
        if (r > 0) {
                *ret = -1;
                return 0;
        }
        return state_parse_integer(p, what, min, max, ret);
}


/*
 * An object whose keys are all of keys[] (at most 32), each once, in any order; fn parses
 * each value. what names the object in messages ("tenants[3]").
 */
int state_parse_object(Parser *p, const char *what, const char *const *keys, unsigned n_keys,
                        MemberFn fn, void *userdata) {
        uint32_t seen = 0;
        size_t start;
        int r;

        state_skip_ws(p);
        start = p->pos;
        r = state_expect(p, '{', "'{'");
        if (r < 0)
                return r;
        if (state_peek(p) != '}')
                for (;;) {
                        char key[40];
                        size_t key_pos;
                        unsigned k;

                        state_skip_ws(p);
                        key_pos = p->pos;
                        r = state_parse_string(p, "a key", key, sizeof(key));
                        if (r < 0)
                                return r;
                        for (k = 0; k < n_keys; k++)
                                if (streq(key, keys[k]))
                                        break;
                        if (k == n_keys) {
                                char list[256] = "";
                                size_t len = 0;
                                for (unsigned i = 0; i < n_keys; i++)
                                        strjoin_appendf(list, sizeof(list), &len, "%s", keys[i]);
                                return state_parser_error(p, key_pos, "unknown key \"%s\" in %s; expected one of: %s", key, what, list);
                        }
                        if (seen & (1u << k))
                                return state_parser_error(p, key_pos, "key \"%s\" appears twice in %s", key, what);
                        seen |= 1u << k;
                        r = state_expect(p, ':', "':' after the key");
                        if (r < 0)
                                return r;
                        state_skip_ws(p);
                        r = fn(p, k, key_pos, userdata);
                        if (r < 0)
                                return r;
                        if (state_peek(p) == ',') {
                                p->pos++;
                                if (state_peek(p) == '}')
                                        return state_parser_error(p, p->pos, "trailing comma in %s", what);
                                continue;
                        }
                        break;
                }
        r = state_expect(p, '}', "',' or '}'");
        if (r < 0)
                return r;
        for (unsigned k = 0; k < n_keys; k++)
                if (!(seen & (1u << k)))
                        return state_parser_error(p, start, "%s has no \"%s\" key", what, keys[k]);
        return 0;
}

enum { COALESCE_RX, COALESCE_TX };
static const char *const coalesce_keys[] = { [COALESCE_RX] = "rx_usecs", [COALESCE_TX] = "tx_usecs" };

typedef struct TenantCtx {
        StateTenant *t;
        TenantPlace *place;
        char what[40];          /* "tenants[3]" */
} TenantCtx;

static int coalesce_member(Parser *p, unsigned key, size_t key_pos, void *userdata) {
        TenantCtx *c = userdata;
        char what[64];
        int64_t v;
        int r;

        snprintf(what, sizeof(what), "%s.coalesce.%s", c->what, coalesce_keys[key]);
        r = state_parse_integer(p, what, 0, STATE_COALESCE_USECS_MAX, &v);
        if (r < 0)
                return r;
        if (key == COALESCE_RX)
                c->t->rx_usecs = (unsigned) v;
        else
                c->t->tx_usecs = (unsigned) v;
        return 0;
}

enum {
        TENANT_ID, TENANT_CLASS, TENANT_KIND, TENANT_VF, TENANT_MAC, TENANT_VLAN,
        TENANT_DOMAIN, TENANT_NUMA, TENANT_COALESCE, TENANT_SEQ,
};
static const char *const tenant_keys[] = {
        [TENANT_ID] = "tenant",
        [TENANT_CLASS] = "class",
        [TENANT_KIND] = "kind",
        [TENANT_VF] = "vf",
        [TENANT_MAC] = "mac",
        [TENANT_VLAN] = "vlan",
        [TENANT_DOMAIN] = "domain",
        [TENANT_NUMA] = "numa_node",
        [TENANT_COALESCE] = "coalesce",
        [TENANT_SEQ] = "seq",
};

static int parse_mac(const char *s, uint8_t mac[static 6]) {
        if (strlen(s) != 17)
                return -EINVAL;
        for (size_t i = 0; i < 6; i++) {
                int hi = hex_digit(s[i * 3]), lo = hex_digit(s[i * 3 + 1]);
                if (hi < 0 || lo < 0 || (i < 5 && s[i * 3 + 2] != ':'))
                        return -EINVAL;
                mac[i] = (uint8_t) (hi << 4 | lo);
        }
        return 0;
}

static int tenant_member(Parser *p, unsigned key, size_t key_pos, void *userdata) {
        TenantCtx *c = userdata;
        StateTenant *t = c->t;
        size_t at = p->pos;
        const char *why;
        char what[64], buf[STATE_DOMAIN_MAX];
        int64_t v = -1;
        int r;

        snprintf(what, sizeof(what), "%s.%s", c->what, tenant_keys[key]);
        switch (key) {
        case TENANT_ID:
                c->place->tenant = at;
                r = state_parse_string(p, what, t->tenant, sizeof(t->tenant));
                if (r < 0)
                        return r;
                why = state_tenant_id_check(t->tenant);
                if (why)
                        return state_parser_error(p, at, "%s \"%s\" is not a valid tenant id; %s", what, t->tenant, why);
                return 0;
        case TENANT_CLASS:
                r = state_parse_string(p, what, t->class_name, sizeof(t->class_name));
                if (r < 0)
                        return r;
                why = class_name_check(t->class_name);
                if (why)
                        return state_parser_error(p, at, "%s \"%s\" is not a valid class name; %s", what, t->class_name, why);
                return 0;
        case TENANT_KIND:
                r = state_parse_string(p, what, buf, 16);
                if (r < 0)
                        return r;
                if (streq(buf, "vf"))
                        t->kind = STATE_KIND_VF;
                else if (streq(buf, "virtio"))
                        t->kind = STATE_KIND_VIRTIO;
                else if (streq(buf, "waiting"))
                        t->kind = STATE_KIND_WAITING;
                else
                        return state_parser_error(p, at, "%s \"%s\" is not valid; expected \"vf\", \"virtio\" or \"waiting\"",
                                            what, buf);
                return 0;
        case TENANT_VF:
                c->place->vf = at;
                r = parse_null(p);
                if (r != 0)
                        return r < 0 ? r : 0;
                r = state_parse_string(p, what, t->vf, sizeof(t->vf));
                if (r < 0)
                        return r;
                why = pci_addr_check(t->vf);
                if (why)
                        return state_parser_error(p, at, "%s \"%s\" is not valid; %s", what, t->vf, why);
                return 0;
        case TENANT_MAC:
                r = state_parse_string(p, what, buf, 20);
                if (r < 0)
                        return r;
                if (parse_mac(buf, t->mac) < 0)
                        return state_parser_error(p, at, "%s \"%s\" is not valid; expected a MAC address such as 52:54:00:12:34:56", what, buf);
                why = mac_check(t->mac);
                if (why)
                        return state_parser_error(p, at, "%s \"%s\" is not valid; %s", what, buf, why);
                return 0;
        case TENANT_VLAN:
                r = parse_integer_or_null(p, what, 0, STATE_VLAN_MAX, &v);
                t->vlan = (int) v;
                return r;
        case TENANT_DOMAIN:
                r = parse_null(p);
                if (r != 0)
                        return r < 0 ? r : 0;
                r = state_parse_string(p, what, t->domain, sizeof(t->domain));
                if (r < 0)
                        return r;
                if (!t->domain[0])
                        return state_parser_error(p, at, "%s is empty; expected a libvirt domain name, or null for none", what);
                why = domain_check(t->domain);
                if (why)
                        return state_parser_error(p, at, "%s is not a valid domain name; %s", what, why);
                return 0;
        case TENANT_NUMA:
                r = parse_integer_or_null(p, what, 0, STATE_NUMA_NODE_MAX, &v);
                t->numa_node = (int) v;
                return r;
        case TENANT_COALESCE:
                r = parse_null(p);
                if (r != 0)
                        return r < 0 ? r : 0;
                snprintf(what, sizeof(what), "%s.coalesce", c->what);
                t->have_coalesce = true;
                return state_parse_object(p, what, coalesce_keys, ELEMENTSOF(coalesce_keys), coalesce_member, c);
        case TENANT_SEQ:
                c->place->seq = at;
                r = state_parse_integer(p, what, 0, INT64_MAX, &v);
                t->seq = (uint64_t) v;
                return r;
        }
        return -EINVAL;
}


int state_parse_tenants(Parser *p, DocCtx *d) {
        int r;

        r = state_expect(p, '[', "'[' (the list of tenants)");
        if (r < 0)
                return r;
        if (state_peek(p) == ']') {
                p->pos++;
                return 0;
        }
        for (;;) {
                TenantCtx c;

                state_skip_ws(p);
                if (d->n >= STATE_TENANTS_MAX)
                        return state_parser_error(p, p->pos, "more than %d tenants; expected at most that many", STATE_TENANTS_MAX);
                if (GREEDY_REALLOC(d->tenants, d->n_alloc, d->n + 1) < 0 ||
                    GREEDY_REALLOC(d->places, d->n_places_alloc, d->n + 1) < 0)
                        return -ENOMEM;
                d->tenants[d->n] = (StateTenant) { .vlan = -1, .numa_node = -1 };
                d->places[d->n] = (TenantPlace) { .start = p->pos };
                c = (TenantCtx) { .t = &d->tenants[d->n], .place = &d->places[d->n] };
                snprintf(c.what, sizeof(c.what), "tenants[%zu]", d->n);
                r = state_parse_object(p, c.what, tenant_keys, ELEMENTSOF(tenant_keys), tenant_member, &c);
                if (r < 0)
                        return r;
                if (c.t->kind == STATE_KIND_VF && !c.t->vf[0])
                        return state_parser_error(p, c.place->vf, "%s is of kind \"vf\" but its vf is null; expected its PCI address", c.what);
                if (c.t->kind != STATE_KIND_VF && c.t->vf[0])
                        return state_parser_error(p, c.place->vf, "%s is of kind \"%s\" but has vf \"%s\"; expected null", c.what,
                                            state_kind_to_string(c.t->kind), c.t->vf);
                d->n++;

                if (state_peek(p) == ',') {
                        p->pos++;
                        continue;
                }
                return state_expect(p, ']', "',' or ']'");
        }
}

int state_parse_checksum(Parser *p, uint32_t *ret) {
        size_t at = p->pos, lp = strlen(CHECKSUM_PREFIX);
        char buf[64];
        uint32_t c = 0;
        bool ok;
        int r;

        r = state_parse_string(p, "checksum", buf, sizeof(buf));
        if (r < 0)
                return r;
        ok = strlen(buf) == lp + 8 && strncmp(buf, CHECKSUM_PREFIX, lp) == 0;
        /* Lowercase only: every single-bit flip, even 'a' -> 'A', must change what is read. */
        for (size_t i = lp; ok && i < lp + 8; i++) {
                ok = is_lower_hex(buf[i]);
                c = c << 4 | (uint32_t) (hex_digit(buf[i]) & 0xf);
        }
        if (!ok)
                return state_parser_error(p, at, "checksum \"%s\" is not valid; expected \"" CHECKSUM_PREFIX "\" and 8 lowercase hex digits", buf);
        *ret = c;
        return 0;
}

int state_parse_format(Parser *p, const char *want) {
        size_t at = p->pos;
        char buf[64];
        int r;

        r = state_parse_string(p, "format", buf, sizeof(buf));
        if (r < 0)
                return r;
        if (!streq(buf, want))
                return state_parser_error(p, at, "format \"%s\" is not \"%s\"; not a sriovd state file?", buf, want);
        return 0;
}

int state_parse_version(Parser *p, int version) {
        size_t at = p->pos;
        int64_t v;
        int r;

        r = state_parse_integer(p, "version", INT64_MIN, INT64_MAX, &v);
        if (r < 0)
                return r;
        if (v != version)
                return state_parser_error(p, at, "version %" PRId64 " is not supported; this sriovd reads version %d%s", v,
                                          version, v > version ? " (written by a newer sriovd?)" : "");
        return 0;
}

enum { DOC_FORMAT, DOC_VERSION, DOC_GENERATION, DOC_TENANTS, DOC_CHECKSUM };
static const char *const doc_keys[] = {
        [DOC_FORMAT] = "format",
        [DOC_VERSION] = "version",
        [DOC_GENERATION] = "generation",
        [DOC_TENANTS] = "tenants",
        [DOC_CHECKSUM] = "checksum",
};

static int doc_member(Parser *p, unsigned key, size_t key_pos, void *userdata) {
        DocCtx *d = userdata;
        size_t at = p->pos;
        int64_t v;
        int r;

        /* Anything after the checksum would not be covered by it. */
        if (d->have_checksum)
                return state_parser_error(p, key_pos, "\"%s\" after \"checksum\"; the checksum must be the last key", doc_keys[key]);

        switch (key) {
        case DOC_FORMAT:
                return state_parse_format(p, STATE_FORMAT);
        case DOC_VERSION:
                return state_parse_version(p, STATE_FORMAT_VERSION);
        case DOC_GENERATION:
                r = state_parse_integer(p, "generation", 0, INT64_MAX, &v);
                d->generation = (uint64_t) v;
                return r;
        case DOC_TENANTS:
                return state_parse_tenants(p, d);
        case DOC_CHECKSUM:
                r = state_parse_checksum(p, &d->checksum);
                if (r < 0)
                        return r;
                d->have_checksum = true;
                d->checksum_key = key_pos;
                d->checksum_value = at;
                return 0;
        }
        return -EINVAL;
}

typedef struct DupKey {
        const State *s;
        int which;      /* 0 tenant, 1 vf, 2 seq */
} DupKey;

static int dup_compare(const void *a, const void *b, void *userdata) {
        const DupKey *k = userdata;
        size_t i = *(const size_t *) a, j = *(const size_t *) b;
        const StateTenant *x = &k->s->tenants[i], *y = &k->s->tenants[j];
        int c = 0;

        if (k->which == 0)
                c = strcmp(x->tenant, y->tenant);
        else if (k->which == 1)
                c = strcmp(x->vf, y->vf);
        else
                c = x->seq < y->seq ? -1 : x->seq > y->seq;
        return c ? c : (i > j) - (i < j);
}

/*
 * Tenant ids, VF addresses and seqs are unique. On a duplicate, the one latest in the list
 * of the earliest-found pair is reported, with the one it repeats. places/buf may be NULL.
 */
static int check_duplicates(const State *s, const TenantPlace *places, const char *buf, StateError *e) {
        _cleanup_free_ size_t *idx = NULL;
        static const char *const names[] = { "tenant id", "vf", "seq" };

        if (s->n < 2)
                return 0;
        idx = malloc(s->n * sizeof(size_t));
        if (!idx)
                return -ENOMEM;

        for (int which = 0; which < 3; which++) {
                DupKey k = { .s = s, .which = which };
                size_t first = SIZE_MAX, dup = SIZE_MAX;
                char value[STATE_DOMAIN_MAX];

                for (size_t i = 0; i < s->n; i++)
                        idx[i] = i;
                qsort_r(idx, s->n, sizeof(size_t), dup_compare, &k);
                for (size_t i = 1; i < s->n; i++) {
                        const StateTenant *a = &s->tenants[idx[i - 1]], *b = &s->tenants[idx[i]];
                        bool same = which == 0 ? streq(a->tenant, b->tenant)
                                  : which == 1 ? (a->vf[0] && streq(a->vf, b->vf))
                                  : a->seq == b->seq;
                        if (same && idx[i] < dup) {
                                first = idx[i - 1];
                                dup = idx[i];
                        }
                }
                if (dup == SIZE_MAX)
                        continue;

                const StateTenant *t = &s->tenants[dup], *o = &s->tenants[first];
                if (which == 2)
                        snprintf(value, sizeof(value), "%" PRIu64, t->seq);
                else
                        snprintf(value, sizeof(value), "\"%s\"", which == 0 ? t->tenant : t->vf);

                if (places) {
                        size_t at = which == 0 ? places[dup].tenant : which == 1 ? places[dup].vf : places[dup].seq;
                        unsigned line, column, oline, ocolumn;

                        locate(buf, at, &line, &column);
                        locate(buf, places[first].start, &oline, &ocolumn);
                        error_set(e, line, column, "%s %s of tenants[%zu] \"%s\" is also that of tenants[%zu] \"%s\" at line %u; expected each %s once",
                                  names[which], value, dup, t->tenant, first, o->tenant, oline, names[which]);
                        return -EBADMSG;
                }
                error_set(e, 0, 0, "%s %s of tenants[%zu] \"%s\" is also that of tenants[%zu] \"%s\"; expected each %s once",
                          names[which], value, dup, t->tenant, first, o->tenant, names[which]);
                return -EINVAL;
        }
        return 0;
}

int state_parse(const char *buf, size_t size, State *ret, StateError *ret_error) {
        Parser p = { .buf = buf, .size = size, .error = ret_error };
        DocCtx d = {};
        uint32_t actual;
        int r;

        if (size == 0) {
                error_set(ret_error, 0, 0, "the file is empty (written but never synced before a crash?)");
                return -EBADMSG;
        }
        if (size > STATE_FILE_SIZE_MAX) {
                error_set(ret_error, 0, 0, "the file is %zu bytes; expected at most %u", size, STATE_FILE_SIZE_MAX);
                return -EBADMSG;
        }

        r = state_parse_object(&p, "the file", doc_keys, ELEMENTSOF(doc_keys), doc_member, &d);
        if (r < 0)
                goto fail;

        /* The writer ends the file with "}\n"; anything else is a torn write or an edit. */
        if (p.pos == size) {
                r = state_parser_error(&p, p.pos, "the file ends without a newline after the final '}' (truncated?)");
                goto fail;
        }
        if (p.buf[p.pos] != '\n' || p.pos + 1 != size) {
                r = state_parser_error(&p, p.pos + (p.buf[p.pos] == '\n'), "unexpected content after the final '}'; expected the file to end with \"}\\n\"");
                goto fail;
        }

        State s = { .tenants = d.tenants, .n = d.n, .generation = d.generation };
        r = check_duplicates(&s, d.places, buf, ret_error);
        if (r < 0)
                goto fail;

        actual = state_crc32c(buf, d.checksum_key);
        if (actual != d.checksum) {
                r = state_parser_error(&p, d.checksum_value,
                                 "checksum mismatch: the file says " CHECKSUM_PREFIX "%08x, its content has " CHECKSUM_PREFIX "%08x "
                                 "(torn write, disk corruption, or edited by hand)", d.checksum, actual);
                goto fail;
        }

        free(d.places);
        *ret = s;
        return 0;

fail:
        free(d.tenants);
        free(d.places);
        return r;
}

int state_validate(const State *s, StateError *ret_error) {
        if (s->n > STATE_TENANTS_MAX) {
                error_set(ret_error, 0, 0, "%zu tenants; expected at most %d", s->n, STATE_TENANTS_MAX);
                return -EINVAL;
        }
        if (s->n > 0 && !s->tenants) {
                error_set(ret_error, 0, 0, "%zu tenants but no array", s->n);
                return -EINVAL;
        }
        if (s->generation > INT64_MAX) {
                error_set(ret_error, 0, 0, "generation %" PRIu64 " is out of range; expected at most %" PRId64, s->generation, INT64_MAX);
                return -EINVAL;
        }

        for (size_t i = 0; i < s->n; i++) {
                const StateTenant *t = &s->tenants[i];
                const char *why = NULL, *field = NULL;

                /* Strings first: everything after may print them. */
                if (strnlen(t->tenant, sizeof(t->tenant)) == sizeof(t->tenant) ||
                    strnlen(t->class_name, sizeof(t->class_name)) == sizeof(t->class_name) ||
                    strnlen(t->vf, sizeof(t->vf)) == sizeof(t->vf) ||
                    strnlen(t->domain, sizeof(t->domain)) == sizeof(t->domain)) {
                        error_set(ret_error, 0, 0, "tenants[%zu]: a string field is not NUL-terminated", i);
                        return -EINVAL;
                }

                if ((why = state_tenant_id_check(t->tenant)))
                        field = "tenant id";
                else if ((why = class_name_check(t->class_name)))
                        field = "class";
                else if (!state_kind_to_string(t->kind))
                        field = "kind", why = "expected 0 (virtio), 1 (vf) or 2 (waiting)";
                else if (t->kind == STATE_KIND_VF && (why = pci_addr_check(t->vf)))
                        field = "vf";
                else if (t->kind != STATE_KIND_VF && t->vf[0])
                        field = "vf", why = "expected none unless kind is vf";
                else if ((why = mac_check(t->mac)))
                        field = "mac";
                else if (t->vlan < -1 || t->vlan > STATE_VLAN_MAX)
                        field = "vlan", why = "expected -1 (none) or 0-4094";
                else if ((why = domain_check(t->domain)))
                        field = "domain";
                else if (t->numa_node < -1 || t->numa_node > STATE_NUMA_NODE_MAX)
                        field = "numa_node", why = "expected -1 (any) or 0-1023";
                else if (t->have_coalesce && (t->rx_usecs > STATE_COALESCE_USECS_MAX || t->tx_usecs > STATE_COALESCE_USECS_MAX))
                        field = "coalesce", why = "expected usecs of at most 100000";
                else if (t->seq > INT64_MAX)
                        field = "seq", why = "expected at most 2^63-1";
                if (field) {
                        error_set(ret_error, 0, 0, "tenants[%zu] \"%s\": %s is not valid; %s", i, t->tenant, field, why);
                        return -EINVAL;
                }
        }
        return check_duplicates(s, NULL, NULL, ret_error);
}

void state_write_tenant(JsonWriter *w, const StateTenant *t) {
        char mac[18];

        snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", t->mac[0], t->mac[1], t->mac[2], t->mac[3],
                 t->mac[4], t->mac[5]);
        json_object_begin(w, NULL);
        json_string(w, "tenant", t->tenant);
        json_string(w, "class", t->class_name);
        json_string(w, "kind", state_kind_to_string(t->kind));
        json_string(w, "vf", t->vf[0] ? t->vf : NULL);
        json_string(w, "mac", mac);
        if (t->vlan >= 0)
                json_int(w, "vlan", t->vlan);
        else
                json_null(w, "vlan");
        json_string(w, "domain", t->domain[0] ? t->domain : NULL);
        if (t->numa_node >= 0)
                json_int(w, "numa_node", t->numa_node);
        else
                json_null(w, "numa_node");
        if (t->have_coalesce) {
                json_object_begin(w, "coalesce");
                json_int(w, "rx_usecs", t->rx_usecs);
                json_int(w, "tx_usecs", t->tx_usecs);
                json_object_end(w);
        } else
                json_null(w, "coalesce");
        json_int(w, "seq", (long long) t->seq);
        json_object_end(w);
}

/* buf ends with tail, whose "crc32c:00000000" placeholder gets the CRC of everything before tail. */
int state_checksum_patch(char *buf, size_t size, const char *tail) {
        size_t tail_len = strlen(tail);
        char hex[16];

        /* The writer's layout is fixed: the document ends with the placeholder member. */
        if (size < tail_len || memcmp(buf + size - tail_len, tail, tail_len) != 0)
                return -EIO;
        snprintf(hex, sizeof(hex), "%08x", state_crc32c(buf, size - tail_len));
        memcpy(buf + size - tail_len + strlen("\"checksum\": \"" CHECKSUM_PREFIX), hex, 8);
        return 0;
}

int state_format(const State *s, char **ret, size_t *ret_size, StateError *ret_error) {
        static const char tail[] = "\"checksum\": \"" CHECKSUM_PREFIX "00000000\"\n}\n";
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        JsonWriter w;
        FILE *f;
        int r;

        r = state_validate(s, ret_error);
        if (r < 0)
                return r;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        json_init(&w, f);
        json_object_begin(&w, NULL);
        json_string(&w, "format", STATE_FORMAT);
        json_int(&w, "version", STATE_FORMAT_VERSION);
        json_int(&w, "generation", (long long) s->generation);
        json_array_begin(&w, "tenants");
        for (size_t i = 0; i < s->n; i++)
                state_write_tenant(&w, &s->tenants[i]);
        json_array_end(&w);
        /* A placeholder, replaced below by the checksum of everything before its key. */
        json_string(&w, "checksum", CHECKSUM_PREFIX "00000000");
        json_object_end(&w);
        return state_document_finish(f, &buf, &size, tail, ret, ret_size);
}

int state_document_finish(FILE *f, char **buf, const size_t *size, const char *tail, char **ret, size_t *ret_size) {
        int r;

        if (ferror(f)) {
                fclose(f);
                return -ENOMEM;
        }
        if (fclose(f) != 0)   /* sets *buf and *size */
                return -ENOMEM;
        r = state_checksum_patch(*buf, *size, tail);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(*buf);
        *ret_size = *size;
        return 0;
}

void state_done(State *s) {
        free(s->tenants);
        *s = (State) {};
}

/* A plain file name of ours: not empty, no '/', not hidden (temporary files are), room for suffixes. */
bool state_name_valid(const char *name) {
        size_t n = name ? strlen(name) : 0;
        return n > 0 && n <= NAME_MAX - 40 && name[0] != '.' && !strchr(name, '/');
}

static bool is_temp_name(const char *name, const char *entry) {
        size_t n = strlen(name);
        return entry[0] == '.' && strncmp(entry + 1, name, n) == 0 &&
               strncmp(entry + 1 + n, TEMP_INFIX, strlen(TEMP_INFIX)) == 0;
}

/* fsync() the directory itself, whatever kind of fd (O_PATH too) names it. */
int state_dir_sync(int dir_fd) {
        _cleanup_close_ int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fsync(fd) < 0)
                return negative_errno();
        return 0;
}

/* Remove ".NAME.tmp-*" left by a save that did not finish. Best effort. */
static void temp_files_remove(int dir_fd, const char *name) {
        _cleanup_closedir_ DIR *d = NULL;
        int fd;
        struct dirent *de;

        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return;
        }
        while ((de = readdir(d)))
                if (is_temp_name(name, de->d_name))
                        (void) unlinkat(dirfd(d), de->d_name, 0);
}

/*
 * Rename name to NAME.corrupt-TIMESTAMP[-N], never replacing anything, and make it durable.
 * aside receives the new name as soon as the rename is done, so a failure to sync the
 * directory afterwards can still say where the file went.
 */
int state_move_aside(int dir_fd, const char *name, char aside[static NAME_MAX + 1]) {
        char stamp[32];
        struct timespec ts;
        struct tm tm;

        aside[0] = 0;
        if (clock_gettime(CLOCK_REALTIME, &ts) < 0 || !gmtime_r(&ts.tv_sec, &tm))
                return negative_errno();
        strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);

        for (unsigned i = 0;; i++) {
                char try[NAME_MAX + 1];

                if (i > 10000)
                        return -EEXIST;
                if (i == 0)
                        snprintf(try, sizeof(try), "%s" ASIDE_INFIX "%s", name, stamp);
                else
                        snprintf(try, sizeof(try), "%s" ASIDE_INFIX "%s-%u", name, stamp, i);

                if (renameat2(dir_fd, name, dir_fd, try, RENAME_NOREPLACE) < 0) {
                        if (errno == EEXIST)
                                continue;
                        if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
                                return negative_errno();
                        /* A file system without RENAME_NOREPLACE: link (fails rather than replace), then unlink. */
                        if (linkat(dir_fd, name, dir_fd, try, 0) < 0) {
                                if (errno == EEXIST)
                                        continue;
                                return negative_errno();
                        }
                        if (unlinkat(dir_fd, name, 0) < 0)
                                return negative_errno();
                }
                strcpy(aside, try);
                break;
        }
        return state_dir_sync(dir_fd);
}

int state_load(int dir_fd, const char *name, State *ret, char **ret_aside, StateError *ret_error) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL, *aside = NULL;
        StateError e = {};
        struct stat st;
        size_t size;
        State s;
        int r;

        if (!state_name_valid(name))
                return -EINVAL;

        temp_files_remove(dir_fd, name);

        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EINVAL;

        r = read_fd_full(fd, STATE_FILE_SIZE_MAX, &buf, &size);
        if (r == -EFBIG) {
                /* No valid file is this large: corrupt, like any other. */
                e = (StateError) {};
                snprintf(e.message, sizeof(e.message), "the file is larger than %u bytes; expected at most that",
                         STATE_FILE_SIZE_MAX);
                r = -EBADMSG;
        } else if (r >= 0)
                r = state_parse(buf, size, &s, &e);
        else
                return r;
        if (r == -EBADMSG) {
                /* Allocated before the rename, so that once it is done nothing can fail to report it. */
                aside = malloc(NAME_MAX + 1);
                if (!aside)
                        return -ENOMEM;
                int k = state_move_aside(dir_fd, name, aside);
                if (k < 0) {
                        /* Keep the corruption's description, cut if need be, and say what happened to the file. */
                        size_t n = strnlen(e.message, sizeof(e.message) - 200);
                        if (aside[0])
                                snprintf(e.message + n, sizeof(e.message) - n, "; moved to %.100s but syncing the directory failed: %s",
                                         aside, strerror(-k));
                        else
                                snprintf(e.message + n, sizeof(e.message) - n, "; moving the file aside failed: %s", strerror(-k));
                        if (ret_error)
                                *ret_error = e;
                        return k;
                }
                if (ret_aside)
                        *ret_aside = TAKE_PTR(aside);
        }
        if (r < 0) {
                if (ret_error)
                        *ret_error = e;
                return r;
        }
        *ret = s;
        return 0;
}

int state_write_all(int fd, const char *buf, size_t size) {
        while (size > 0) {
                ssize_t k = write(fd, buf, size);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                buf += k;
                size -= (size_t) k;
        }
        return 0;
}

/* Create ".NAME.tmp-RANDOM" exclusively; its name into tmp. */
static int temp_create(int dir_fd, const char *name, char tmp[static NAME_MAX + 1]) {
        for (unsigned attempt = 0; attempt < 100; attempt++) {
                uint64_t rnd;
                int fd;

                if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
                        rnd = ((uint64_t) getpid() << 32) ^ (uint64_t) time(NULL) ^ attempt;
                snprintf(tmp, NAME_MAX + 1, ".%s" TEMP_INFIX "%016" PRIx64, name, rnd);
                fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
                if (fd >= 0)
                        return fd;
                if (errno != EEXIST)
                        return negative_errno();
        }
        return -EEXIST;
}

int state_save(int dir_fd, const char *name, State *s, StateError *ret_error) {
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        char tmp[NAME_MAX + 1];
        State next;
        size_t size;
        int r;

        if (!state_name_valid(name))
                return -EINVAL;
        if (s->generation >= INT64_MAX)
                return -EOVERFLOW;

        next = *s;
        next.generation++;
        r = state_format(&next, &buf, &size, ret_error);
        if (r < 0)
                return r;

        /* One fd for the directory: the temp file, the rename and the fsync all see the same one. */
        dfd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();

        fd = temp_create(dfd, name, tmp);
        if (fd < 0)
                return fd;

        r = state_write_all(fd, buf, size);
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r >= 0) {
                /* close() can report a delayed write error (NFS); it must not be lost. */
                int k = close(TAKE_FD(fd));
                if (k < 0 && errno != EINTR)
                        r = negative_errno();
        }
        if (r >= 0 && renameat(dfd, tmp, dfd, name) < 0)
                r = negative_errno();
        if (r < 0) {
                (void) unlinkat(dfd, tmp, 0);
                return r;
        }

        /* The rename is only durable once the directory is. */
        if (fsync(dfd) < 0)
                return negative_errno();

        s->generation = next.generation;
        return 0;
}
