/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.c — sriovd.conf and tenant classes: parsed with inih, validated, every mistake reported */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sriovd/config.h"
#include "sriovd/kernel.h"

/* Policy files are a few hundred bytes; anything far larger is a mistake (or /dev/zero). */
#define CONFIG_FILE_MAX (1024 * 1024)
/* Past this many, further errors are counted, not listed: nobody reads the 101st. */
#define CONFIG_ERRORS_MAX 100
/* Enforce limits on everything the operator controls, even if they are generous. */
#define CONFIG_SECTIONS_MAX 4096
#define CONFIG_CLASSES_MAX 1024
/* The most keys any section has; key_lines[] is sized by it. */
#define SECTION_KEYS_MAX 24
/* Further than this and a suggestion is more confusing than helpful. */
#define SUGGEST_DISTANCE_MAX 3
/* Values and names are echoed in messages quoted and cut to this length. */
#define QUOTE_MAX 64

#define DEFAULT_DRIFT_CHECK_SEC 5
/* mlx5 creates 64 VFs in seconds; igb resets the PF for ~5 s. Slower means something is wrong. */
#define DEFAULT_VF_TIMEOUT_SEC 30
#define DEFAULT_ACCESS_GROUP "sriovd"
#define CLASSES_DIR_NAME "tenant-classes.d"

/* ---- error collection --------------------------------------------------- */

typedef struct ConfigError {
        unsigned file;   /* 0 = the main file, then class files in load order */
        unsigned line;   /* 0 = about the file as a whole */
        unsigned seq;    /* keeps errors of one line in the order they were found */
        char *text;      /* complete, with the "FILE:LINE: " prefix */
} ConfigError;

typedef struct ErrorList {
        ConfigError *items;
        size_t n_items, allocated;
        unsigned n_dropped;
        unsigned seq;
        bool oom;
} ErrorList;

static void error_list_done(ErrorList *l) {
        for (size_t i = 0; i < l->n_items; i++)
                free(l->items[i].text);
        free(l->items);
        *l = (ErrorList) {};
}

_printf_(5, 0) static void error_addv(ErrorList *l, unsigned file_idx, const char *file, unsigned line,
                                      const char *fmt, va_list ap) {
        _cleanup_free_ char *msg = NULL;
        char *text;
        int k;

        if (l->n_items >= CONFIG_ERRORS_MAX) {
                l->n_dropped++;
                return;
        }

        if (vasprintf(&msg, fmt, ap) < 0) {
                msg = NULL;
                l->oom = true;
                return;
        }
        if (line > 0)
                k = asprintf(&text, "%s:%u: %s", file, line, msg);
        else
                k = asprintf(&text, "%s: %s", file, msg);
        if (k < 0 || GREEDY_REALLOC(l->items, l->allocated, l->n_items + 1) < 0) {
                if (k >= 0)
                        free(text);
                l->oom = true;
                return;
        }

        l->items[l->n_items++] = (ConfigError) {
                .file = file_idx,
                .line = line,
                .seq = l->seq++,
                .text = text,
        };
}

_printf_(5, 6) static void error_add(ErrorList *l, unsigned file_idx, const char *file, unsigned line,
                                     const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        error_addv(l, file_idx, file, line, fmt, ap);
        va_end(ap);
}

static int error_compare(const void *a, const void *b) {
        const ConfigError *x = a, *y = b;

        if (x->file != y->file)
                return x->file < y->file ? -1 : 1;
        if (x->line != y->line)
                return x->line < y->line ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Errors in file order, then line order, one per line, no trailing newline. */
static int error_list_join(ErrorList *l, const char *main_file, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;

        if (l->oom)
                return -ENOMEM;

        qsort_safe(l->items, l->n_items, sizeof(ConfigError), error_compare);

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < l->n_items; i++)
                fprintf(f, "%s%s", i > 0 ? "\n" : "", l->items[i].text);
        if (l->n_dropped > 0)
                fprintf(f, "\n%s: %u more error%s not shown", main_file, l->n_dropped,
                        l->n_dropped == 1 ? "" : "s");
        if (fclose(f) != 0 || !buf)
                return -ENOMEM;

        *ret = TAKE_PTR(buf);
        return 0;
}

/* ---- small helpers ------------------------------------------------------ */

/*
 * Echo operator input in a message safely: cut to QUOTE_MAX and with control
 * and non-ASCII bytes replaced, so garbage cannot break the one-error-per-line
 * output or the journal.
 */
static const char *quote(char *buf, const char *s) {
        size_t i;

        for (i = 0; s[i] && i < QUOTE_MAX; i++) {
                unsigned char c = (unsigned char) s[i];
                buf[i] = c < 0x20 || c >= 0x7f ? '?' : (char) c;
        }
        if (s[i]) {
                memcpy(buf + i, "...", 3);
                i += 3;
        }
        buf[i] = 0;
        return buf;
}
#define Q(s) quote((char[QUOTE_MAX + 4]) {}, (s))

/* Levenshtein distance, ignoring case; names longer than this are never valid anyway. */
static size_t edit_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        size_t row[QUOTE_MAX + 1];

        if (la > QUOTE_MAX || lb > QUOTE_MAX)
                return SIZE_MAX;

        for (size_t j = 0; j <= lb; j++)
                row[j] = j;
        for (size_t i = 1; i <= la; i++) {
                size_t diag = row[0];
                row[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t up = row[j];
                        size_t cost = tolower((unsigned char) a[i - 1]) != tolower((unsigned char) b[j - 1]);
                        size_t best = diag + cost;
                        if (up + 1 < best)
                                best = up + 1;
                        if (row[j - 1] + 1 < best)
                                best = row[j - 1] + 1;
                        row[j] = best;
                        diag = up;
                }
        }
        return row[lb];
}

typedef struct Suggestion {
        const char *input;
        const char *best;            /* the closest near miss so far */
        size_t distance;
        const char *completion;      /* a name that input is the start of */
        unsigned n_completions;
} Suggestion;

#define SUGGESTION_INIT(s) ((Suggestion) { .input = (s), .distance = SIZE_MAX })

static void suggestion_consider(Suggestion *s, const char *candidate) {
        size_t len = strlen(s->input), d;

        /*
         * A typo: close, and never for an input that would have to be mostly
         * replaced ("bogus" is not a misspelt "cpus").
         */
        d = edit_distance(s->input, candidate);
        if (d <= SUGGEST_DISTANCE_MAX && 2 * d <= len && d < s->distance) {
                s->distance = d;
                s->best = candidate;
        }

        /* A name cut short ("drift_check"); only useful when it is unambiguous. */
        if (len >= 4 && strlen(candidate) > len && strncasecmp(s->input, candidate, len) == 0) {
                s->completion = candidate;
                s->n_completions++;
        }
}

static const char *suggestion_get(const Suggestion *s) {
        if (s->best)
                return s->best;
        return s->n_completions == 1 ? s->completion : NULL;
}

static const char *lskip(const char *s) {
        while (*s && isspace((unsigned char) *s))
                s++;
        return s;
}

static void rstrip(char *s) {
        size_t n = strlen(s);

        while (n > 0 && isspace((unsigned char) s[n - 1]))
                s[--n] = 0;
}

/*
 * Mirrors inih's own scan exactly (an inline ';' comment counts only after
 * whitespace), so that what the reader below classifies as a section header
 * or a syntax error is what inih parses.
 */
static const char *find_chars_or_comment(const char *s, const char *chars) {
        bool was_space = false;

        while (*s && !strchr(chars, *s) && !(was_space && *s == ';')) {
                was_space = isspace((unsigned char) *s);
                s++;
        }
        return s;
}

static unsigned hex_value(char c) {
        return c >= '0' && c <= '9' ? (unsigned) (c - '0') : (unsigned) (tolower((unsigned char) c) - 'a' + 10);
}

/* VVVV:DDDD, either case. */
static bool pci_id_parse(const char *s, PciId *ret) {
        if (strlen(s) != 9 || s[4] != ':')
                return false;
        for (size_t i = 0; i < 9; i++)
                if (i != 4 && !isxdigit((unsigned char) s[i]))
                        return false;

        *ret = (PciId) {
                .vendor = (uint16_t) (hex_value(s[0]) << 12 | hex_value(s[1]) << 8 | hex_value(s[2]) << 4 | hex_value(s[3])),
                .device = (uint16_t) (hex_value(s[5]) << 12 | hex_value(s[6]) << 8 | hex_value(s[7]) << 4 | hex_value(s[8])),
        };
        return true;
}

/* [a-z0-9][a-z0-9_-]{0,62}: safe as a file name and as a D-Bus argument. */
static bool class_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n >= CLASS_NAME_MAX)
                return false;
        if (!(islower((unsigned char) s[0]) || isdigit((unsigned char) s[0])))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!(islower((unsigned char) s[i]) || isdigit((unsigned char) s[i]) || s[i] == '_' || s[i] == '-'))
                        return false;
        return true;
}

/* The portable subset useradd accepts: [a-z_][a-z0-9_-]*, at most 32 characters. */
static bool group_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > 32)
                return false;
        if (!(islower((unsigned char) s[0]) || s[0] == '_'))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!(islower((unsigned char) s[i]) || isdigit((unsigned char) s[i]) || s[i] == '_' || s[i] == '-'))
                        return false;
        return true;
}

static bool has_control_chars(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/* Absolute, no ".." component: the state directory is created and written as root. */
static bool absolute_path_valid(const char *s) {
        if (s[0] != '/' || strlen(s) >= PATH_MAX || has_control_chars(s))
                return false;
        for (const char *p = s; (p = strstr(p, "..")); p += 2)
                if (p[-1] == '/' && (p[2] == '/' || p[2] == 0))
                        return false;
        return true;
}

/* Decimal only: "0x10", "1e3", " 5" or "5s" are mistakes, not numbers. */
static int parse_long_strict(const char *s, long *ret) {
        char *end;
        long l;

        if (!(isdigit((unsigned char) s[0]) || (s[0] == '-' && isdigit((unsigned char) s[1]))))
                return -EINVAL;
        errno = 0;
        l = strtol(s, &end, 10);
        if (*end)
                return -EINVAL;
        if (errno == ERANGE)
                return -ERANGE;
        *ret = l;
        return 0;
}

static int parse_boolean(const char *s) {
        static const char *const yes[] = { "yes", "true", "on", "1" };
        static const char *const no[] = { "no", "false", "off", "0" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                if (strcasecmp(s, yes[i]) == 0)
                        return 1;
                if (strcasecmp(s, no[i]) == 0)
                        return 0;
        }
        return -EINVAL;
}

/* "a, b or c" for messages. */
static void format_alternatives(char *buf, size_t size, const char *const *values, size_t n) {
        size_t k = 0;

        buf[0] = 0;
        for (size_t i = 0; i < n && k < size; i++) {
                int w = snprintf(buf + k, size - k, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", values[i]);
                if (w < 0)
                        break;
                k += (size_t) w;
        }
}

static int read_file(const char *path, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();

        for (;;) {
                ssize_t n;

                if (GREEDY_REALLOC(buf, allocated, size + 4096 + 1) < 0)
                        return -ENOMEM;
                n = read(fd, buf + size, allocated - size - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                size += (size_t) n;
                if (size > CONFIG_FILE_MAX)
                        return -EFBIG;
        }

        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

/* ---- the section and key tables ----------------------------------------- */

typedef enum SectionKind {
        SECTION_NONE,     /* before the first header */
        SECTION_SKIP,     /* unknown or unparsable header: one error is enough, its keys are ignored */
        SECTION_DAEMON,
        SECTION_CPUS,
        SECTION_RT,
        SECTION_MATCH,
        SECTION_PF,
        SECTION_CLASS,
} SectionKind;

typedef struct Parser Parser;
typedef struct KeyDef KeyDef;

/* Parses value into data + k->offset, or reports why it cannot. */
typedef int (*KeyParse)(Parser *p, const KeyDef *k, const char *value, void *data);

struct KeyDef {
        const char *name;
        KeyParse parse;
        size_t offset;
        long min, max;                 /* integers */
        const char *const *values;     /* enums, in enum order */
        size_t n_values;
};

typedef struct SectionDef {
        const char *name;              /* the header's first word */
        SectionKind kind;
        const char *arg_syntax;        /* NULL = takes no argument */
        const KeyDef *keys;
        size_t n_keys;
} SectionDef;

struct Parser {
        Config *config;
        ErrorList *errors;
        const char *file;                /* as named in messages */
        unsigned file_idx;
        const SectionDef *sections;
        size_t n_sections;

        /* the line reader */
        const char *text;
        size_t size, pos;
        unsigned line;
        unsigned first_syntax_error;     /* the first line inih itself rejects */
        unsigned n_headers;

        /* the current section */
        SectionKind kind;
        const SectionDef *section;
        char section_display[QUOTE_MAX + 8];
        unsigned key_lines[SECTION_KEYS_MAX];   /* where each key was set, 0 = not yet */
        bool scratch;                    /* invalid or duplicate: keys checked, result dropped */
        size_t pf_index;
        PfPolicy scratch_pf;
        TenantClass scratch_class;

        /* every header seen, for duplicates */
        struct {
                char *key;
                unsigned line;
        } *seen;
        size_t n_seen, allocated_seen;

        size_t allocated_pfs;

        /* checked once everything is loaded */
        unsigned rt_line, housekeeping_line;
        unsigned rtnet_prio_line;
        unsigned *pf_class_lines;        /* parallel to config->pfs */
        size_t allocated_pf_class_lines;

        /* class files */
        TenantClass *class;
        unsigned class_line;
        bool vnic_set;
        unsigned irq_prio_line;          /* where irq_thread_priority was set, 0 = not set */
        bool irq_cpus_invalid;           /* irq_cpus was given but rejected */
        bool oom;
};

/* What the RT priority checks need to know about each loaded class, parallel to config->classes. */
typedef struct ClassInfo {
        unsigned file_idx;
        unsigned prio_line;              /* 0 = irq_thread_priority not set: no check applies */
        bool irq_cpus_invalid;           /* already reported: checking against the default would mislead */
} ClassInfo;

typedef struct ClassInfoList {
        ClassInfo *items;
        size_t allocated;
} ClassInfoList;

static void class_info_list_done(ClassInfoList *l) {
        free(l->items);
        *l = (ClassInfoList) {};
}

/* Returns -EINVAL, so that checks can "return parser_error(...)". */
_printf_(2, 3) static int parser_error(Parser *p, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        error_addv(p->errors, p->file_idx, p->file, p->line, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static void parser_done(Parser *p) {
        for (size_t i = 0; i < p->n_seen; i++)
                free(p->seen[i].key);
        free(p->seen);
        free(p->pf_class_lines);
}

/* Strict decimal within [k->min, k->max]; the message names the range. */
static int parse_int_key(Parser *p, const KeyDef *k, const char *value, int *ret) {
        long l;
        int r;

        r = parse_long_strict(value, &l);
        if (r == -EINVAL)
                return parser_error(p, "%s = \"%s\" is not an integer; expected an integer from %ld to %ld",
                                    k->name, Q(value), k->min, k->max);
        if (r < 0 || l < k->min || l > k->max)
                return parser_error(p, "%s = %s is out of range; expected an integer from %ld to %ld",
                                    k->name, Q(value), k->min, k->max);
        *ret = (int) l;
        return 0;
}

static int key_int(Parser *p, const KeyDef *k, const char *value, void *data) {
        return parse_int_key(p, k, value, (int *) ((uint8_t *) data + k->offset));
}

/* The RT priority checks run after loading and report at these keys' lines. */
static int key_rtnet_prio(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = key_int(p, k, value, data);
        if (r >= 0)
                p->rtnet_prio_line = p->line;
        return r;
}

/* --check-config compares num_vfs with the host's sriov_totalvfs and reports at this line. */
static int key_num_vfs(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = key_int(p, k, value, data);
        if (r >= 0)
                ((PfPolicy *) data)->num_vfs_line = p->line;
        return r;
}

static int key_irq_thread_priority(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = key_int(p, k, value, data);
        if (r >= 0 && !p->scratch)
                p->irq_prio_line = p->line;
        return r;
}

static int key_unsigned(Parser *p, const KeyDef *k, const char *value, void *data) {
        int v, r;

        /* These keys never allow a negative value (min >= 0). */
        r = parse_int_key(p, k, value, &v);
        if (r < 0)
                return r;
        *(unsigned *) ((uint8_t *) data + k->offset) = (unsigned) v;
        return 0;
}

static int key_bool(Parser *p, const KeyDef *k, const char *value, void *data) {
        int b = parse_boolean(value);

        if (b < 0)
                return parser_error(p, "%s = \"%s\" is not a boolean; expected yes/no, true/false, on/off or 1/0",
                                    k->name, Q(value));
        *(int *) ((uint8_t *) data + k->offset) = b;
        return 0;
}

static int key_tristate(Parser *p, const KeyDef *k, const char *value, void *data) {
        Tristate t;
        int b;

        if (streq(value, "leave"))
                t = TRISTATE_LEAVE;
        else {
                b = parse_boolean(value);
                if (b < 0)
                        return parser_error(p, "%s = \"%s\" is not valid; expected on, off or leave",
                                            k->name, Q(value));
                t = b ? TRISTATE_ON : TRISTATE_OFF;
        }
        *(Tristate *) ((uint8_t *) data + k->offset) = t;
        return 0;
}

static int key_enum(Parser *p, const KeyDef *k, const char *value, void *data) {
        Suggestion s = SUGGESTION_INIT(value);
        char expected[256];
        const char *hint;

        for (size_t i = 0; i < k->n_values; i++)
                if (streq(value, k->values[i])) {
                        *(int *) ((uint8_t *) data + k->offset) = (int) i;
                        return 0;
                }

        format_alternatives(expected, sizeof(expected), k->values, k->n_values);
        for (size_t i = 0; i < k->n_values; i++)
                suggestion_consider(&s, k->values[i]);
        hint = suggestion_get(&s);
        if (hint)
                return parser_error(p, "%s = \"%s\" is not valid; expected %s; did you mean \"%s\"?",
                                    k->name, Q(value), expected, hint);
        return parser_error(p, "%s = \"%s\" is not valid; expected %s", k->name, Q(value), expected);
}

static int key_vnic(Parser *p, const KeyDef *k, const char *value, void *data) {
        /* Checked at the end of the file: a class that does not say which vNIC it wants is incomplete. */
        if (!p->scratch)
                p->vnic_set = true;
        return key_enum(p, k, value, data);
}

/* Replaces the old value: a duplicate [daemon] is reported, but must not leak. */
static int set_string(Parser *p, char **field, const char *value) {
        char *s = strdup(value);

        if (!s) {
                p->oom = true;
                return -ENOMEM;
        }
        free(*field);
        *field = s;
        return 0;
}

static int key_path(Parser *p, const KeyDef *k, const char *value, void *data) {
        if (!absolute_path_valid(value))
                return parser_error(p, "%s = \"%s\" is not a valid absolute path; expected a path starting with \"/\", without \"..\"",
                                    k->name, Q(value));
        return set_string(p, (char **) ((uint8_t *) data + k->offset), value);
}

static int key_group(Parser *p, const KeyDef *k, const char *value, void *data) {
        if (!group_name_valid(value))
                return parser_error(p, "%s = \"%s\" is not a valid group name; expected [a-z_][a-z0-9_-]*, at most 32 characters",
                                    k->name, Q(value));
        return set_string(p, (char **) ((uint8_t *) data + k->offset), value);
}

/* --check-config looks the group up and reports at this line. */
static int key_group_line(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = key_group(p, k, value, data);
        if (r >= 0)
                ((Config *) data)->access_group_line = p->line;
        return r;
}

static int key_uri(Parser *p, const KeyDef *k, const char *value, void *data) {
        if (!value[0] || has_control_chars(value))
                return parser_error(p, "%s = \"%s\" is not a valid URI; expected a libvirt URI such as qemu:///system",
                                    k->name, Q(value));
        return set_string(p, (char **) ((uint8_t *) data + k->offset), value);
}

static int parse_cpu_list(Parser *p, const char *key, const char *value, const char *example, CpuSet *ret) {
        int r;

        r = cpuset_parse_list(value, ret);
        if (r == -ERANGE)
                return parser_error(p, "%s = \"%s\" names a CPU beyond %d; expected CPUs 0 to %d",
                                    key, Q(value), CPUSET_MAX - 1, CPUSET_MAX - 1);
        if (r < 0)
                return parser_error(p, "%s = \"%s\" is not a valid CPU list; expected a list such as %s",
                                    key, Q(value), example);
        return 0;
}

static int key_cpus_rt(Parser *p, const KeyDef *k, const char *value, void *data) {
        Config *c = data;
        int r;

        /* Empty is allowed here: it says "this host has no RT CPUs", unlike leaving the key out. */
        r = parse_cpu_list(p, k->name, value, "4-7,20-23", &c->rt_cpus);
        if (r < 0)
                return r;
        c->have_rt_cpus = true;
        p->rt_line = p->line;
        return 0;
}

static int key_cpus_housekeeping(Parser *p, const KeyDef *k, const char *value, void *data) {
        Config *c = data;
        CpuSet set;
        int r;

        r = parse_cpu_list(p, k->name, value, "0-3,8-19", &set);
        if (r < 0)
                return r;
        /* IRQs and everything non-RT must run somewhere. */
        if (cpuset_is_empty(&set))
                return parser_error(p, "%s = \"%s\" is empty; expected at least one CPU, e.g. 0-3", k->name, Q(value));
        c->housekeeping_cpus = set;
        c->have_housekeeping_cpus = true;
        p->housekeeping_line = p->line;
        return 0;
}

static int irq_cpus_parse(Parser *p, const KeyDef *k, const char *value, void *data) {
        static const char *const words[] = { "numa-local", "rt", "vcpu" };
        static const IrqCpuPolicy policies[] = { IRQ_CPUS_NUMA_LOCAL, IRQ_CPUS_RT, IRQ_CPUS_VCPU };
        TenantClass *cls = data;
        Suggestion s = SUGGESTION_INIT(value);
        const char *hint;
        CpuSet set;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (streq(value, words[i])) {
                        cls->irq_cpus = policies[i];
                        return 0;
                }

        if (isdigit((unsigned char) value[0])) {
                r = parse_cpu_list(p, k->name, value, "0-3,8", &set);
                if (r < 0)
                        return r;
                cls->irq_cpus = IRQ_CPUS_LIST;
                cls->irq_cpu_list = set;
                return 0;
        }

        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                suggestion_consider(&s, words[i]);
        hint = suggestion_get(&s);
        if (hint)
                return parser_error(p, "%s = \"%s\" is not valid; expected rt, numa-local, vcpu or a CPU list such as 0-3,8; did you mean \"%s\"?",
                                    k->name, Q(value), hint);
        return parser_error(p, "%s = \"%s\" is not valid; expected rt, numa-local, vcpu or a CPU list such as 0-3,8",
                            k->name, Q(value));
}

static int key_irq_cpus(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r;

        r = irq_cpus_parse(p, k, value, data);
        if (r < 0 && !p->scratch)
                p->irq_cpus_invalid = true;
        return r;
}

static int key_class_ref(Parser *p, const KeyDef *k, const char *value, void *data) {
        PfPolicy *pf = data;

        /* Whether the class exists is checked once the class files are loaded. */
        if (!class_name_valid(value))
                return parser_error(p, "%s = \"%s\" is not a valid class name; expected [a-z0-9][a-z0-9_-]*, at most %d characters",
                                    k->name, Q(value), CLASS_NAME_MAX - 1);
        strcpy(pf->class_name, value);
        if (!p->scratch)
                p->pf_class_lines[p->pf_index] = p->line;
        return 0;
}

static const char *const vf_attach_values[] = { "interface", "hostdev" };
static const char *const vcpu_pinning_values[] = { "none", "rt" };

/* A libvirt network or bridge name: one path component libvirt will take. */
static int key_virtio_source(Parser *p, const KeyDef *k, const char *value, void *data, bool bridge) {
        TenantClass *cls = data;
        size_t n = strlen(value);

        if (n == 0 || n >= (bridge ? 16 : sizeof(cls->virtio_source)) || strspn(value,
                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n)
                return parser_error(p, "%s = \"%s\" is not valid; expected a %s name of [A-Za-z0-9._-], at most %d characters",
                                    k->name, Q(value), bridge ? "bridge" : "libvirt network", bridge ? 15 : 63);
        strcpy(cls->virtio_source, value);
        cls->virtio_bridge = bridge;
        return 0;
}

static int key_virtio_network(Parser *p, const KeyDef *k, const char *value, void *data) {
        return key_virtio_source(p, k, value, data, false);
}

static int key_virtio_bridge(Parser *p, const KeyDef *k, const char *value, void *data) {
        return key_virtio_source(p, k, value, data, true);
}

static const char *const vnic_values[] = {
        [VNIC_SRIOV_REQUIRED] = "sriov-required",
        [VNIC_SRIOV_PREFERRED] = "sriov-preferred",
        [VNIC_VIRTIO] = "virtio",
};

static const char *const irq_spread_values[] = {
        [IRQ_SPREAD_SPREAD] = "spread",
        [IRQ_SPREAD_SINGLE] = "single",
};

#define KEY_INT(n, type, field, lo, hi) \
        { .name = n, .parse = key_int, .offset = offsetof(type, field), .min = lo, .max = hi }
#define KEY_UNSIGNED(n, type, field, lo, hi) \
        { .name = n, .parse = key_unsigned, .offset = offsetof(type, field), .min = lo, .max = hi }
#define KEY_ENUM(n, type, field, table) \
        { .name = n, .parse = key_enum, .offset = offsetof(type, field), .values = table, .n_values = ELEMENTSOF(table) }
#define KEY(n, fn, type, field) \
        { .name = n, .parse = fn, .offset = offsetof(type, field) }

static const KeyDef daemon_keys[] = {
        KEY("state_dir", key_path, Config, state_dir),
        KEY_UNSIGNED("drift_check_sec", Config, drift_check_sec, 0, 86400),
        KEY_UNSIGNED("vf_timeout_sec", Config, vf_timeout_sec, 1, 3600),
        KEY_UNSIGNED("vf_headroom", Config, vf_headroom, 0, 4096),
        KEY_UNSIGNED("vf_target_utilization", Config, vf_target_utilization, 1, 100),
        KEY("release_on_stop", key_bool, Config, release_on_stop),
        KEY("restore_on_stop", key_bool, Config, restore_on_stop),
        KEY("access_group", key_group_line, Config, access_group),
        KEY_UNSIGNED("max_tenants", Config, max_tenants, 1, 16384),
        KEY("libvirt_uri", key_uri, Config, libvirt_uri),
};

static const KeyDef cpus_keys[] = {
        KEY("rt", key_cpus_rt, Config, rt_cpus),
        KEY("housekeeping", key_cpus_housekeeping, Config, housekeeping_cpus),
        KEY("keep_irqs_off_rt", key_bool, Config, keep_irqs_off_rt),
};

static const KeyDef rt_keys[] = {
        { .name = "rtnet_prio", .parse = key_rtnet_prio, .offset = offsetof(Config, rtnet_prio), .min = 0, .max = 99 },
};

static const char *const pf_link_values[] = {
        [PF_LINK_AUTO] = "auto",
        [PF_LINK_UP] = "up",
        [PF_LINK_LEAVE] = "leave",
};

static const char *const vf_mac_values[] = {
        [VF_MAC_LEAVE] = "leave",
        [VF_MAC_DERIVE] = "derive",
};

/* Shifted by one: VF_LINK_STATE_LEAVE is -1. */
static const char *const vf_link_state_values[] = { "leave", "auto", "enable", "disable" };

static int key_vf_link_state(Parser *p, const KeyDef *k, const char *value, void *data) {
        int r = key_enum(p, k, value, data);
        if (r >= 0)
                (*(int *) ((uint8_t *) data + k->offset))--;
        return r;
}

static const char *const vf_driver_values[] = {
        [VF_DRIVER_LEAVE] = "leave",
        [VF_DRIVER_VFIO] = "vfio-pci",
        [VF_DRIVER_HOST] = "host",
};

/* 400 Gbit/s: the fastest ConnectX port; a larger figure is a typo. */
#define VF_RATE_MAX 400000

static const KeyDef pf_keys[] = {
        { .name = "num_vfs", .parse = key_num_vfs, .offset = offsetof(PfPolicy, num_vfs), .min = 0, .max = 4096 },
        KEY("drivers_autoprobe", key_bool, PfPolicy, drivers_autoprobe),
        KEY_ENUM("pf_link", PfPolicy, pf_link, pf_link_values),
        KEY("class", key_class_ref, PfPolicy, class_name),
        KEY_ENUM("vf_mac", PfPolicy, vf_mac, vf_mac_values),
        KEY_INT("vf_vlan", PfPolicy, vf_vlan, 0, 4094),
        KEY_INT("vf_qos", PfPolicy, vf_qos, 0, 7),
        KEY("vf_spoofchk", key_tristate, PfPolicy, vf_spoofchk),
        KEY("vf_trust", key_tristate, PfPolicy, vf_trust),
        { .name = "vf_link_state", .parse = key_vf_link_state, .offset = offsetof(PfPolicy, vf_link_state),
          .values = vf_link_state_values, .n_values = ELEMENTSOF(vf_link_state_values) },
        KEY_INT("vf_min_tx_rate", PfPolicy, vf_min_tx_rate, 0, VF_RATE_MAX),
        KEY_INT("vf_max_tx_rate", PfPolicy, vf_max_tx_rate, 0, VF_RATE_MAX),
        KEY_ENUM("vf_driver", PfPolicy, vf_driver, vf_driver_values),
};

_Static_assert(ELEMENTSOF(pf_keys) <= SECTION_KEYS_MAX, "key_lines[] too small");

static const KeyDef class_keys[] = {
        { .name = "vnic", .parse = key_vnic, .offset = offsetof(TenantClass, vnic),
          .values = vnic_values, .n_values = ELEMENTSOF(vnic_values) },
        KEY_INT("rank", TenantClass, rank, -1000, 1000),
        KEY("allow_remote_numa", key_bool, TenantClass, allow_remote_numa),
        KEY_UNSIGNED("coalesce_rx_usecs", TenantClass, coalesce_rx_usecs, 0, 100000),
        KEY_UNSIGNED("coalesce_tx_usecs", TenantClass, coalesce_tx_usecs, 0, 100000),
        KEY_INT("coalesce_rx_frames", TenantClass, coalesce_rx_frames, 0, 65535),
        KEY_INT("coalesce_tx_frames", TenantClass, coalesce_tx_frames, 0, 65535),
        KEY("adaptive_rx", key_tristate, TenantClass, adaptive_rx),
        KEY("adaptive_tx", key_tristate, TenantClass, adaptive_tx),
        KEY("irq_cpus", key_irq_cpus, TenantClass, irq_cpus),
        KEY_ENUM("irq_spread", TenantClass, irq_spread, irq_spread_values),
        { .name = "irq_thread_priority", .parse = key_irq_thread_priority,
          .offset = offsetof(TenantClass, irq_thread_priority), .min = 0, .max = 99 },
        KEY("offload_tso", key_tristate, TenantClass, offload_tso),
        KEY("offload_gso", key_tristate, TenantClass, offload_gso),
        KEY("offload_gro", key_tristate, TenantClass, offload_gro),
        KEY("offload_lro", key_tristate, TenantClass, offload_lro),
        KEY_ENUM("vf_attach", TenantClass, vf_attach_hostdev, vf_attach_values),
        KEY("virtio_network", key_virtio_network, TenantClass, virtio_source),
        KEY("virtio_bridge", key_virtio_bridge, TenantClass, virtio_source),
        KEY_ENUM("vcpu_pinning", TenantClass, vcpu_pin_rt, vcpu_pinning_values),
        KEY_INT("vcpu_fifo_priority", TenantClass, vcpu_fifo_priority, 0, 99),
};

_Static_assert(ELEMENTSOF(class_keys) <= SECTION_KEYS_MAX, "key_lines[] too small");

#define SECTION(n, k, arg, table) \
        { .name = n, .kind = k, .arg_syntax = arg, .keys = table, .n_keys = ELEMENTSOF(table) }

static const SectionDef main_sections[] = {
        SECTION("daemon", SECTION_DAEMON, NULL, daemon_keys),
        SECTION("cpus", SECTION_CPUS, NULL, cpus_keys),
        SECTION("rt", SECTION_RT, NULL, rt_keys),
        SECTION("match", SECTION_MATCH, "VVVV:DDDD", pf_keys),
        SECTION("pf", SECTION_PF, "DDDD:BB:DD.F", pf_keys),
};

static const SectionDef class_sections[] = {
        SECTION("class", SECTION_CLASS, NULL, class_keys),
};

/* ---- sections ------------------------------------------------------------ */

static void format_section_list(char *buf, size_t size, const SectionDef *defs, size_t n) {
        const char *names[8];
        char parts[8][48];

        for (size_t i = 0; i < n && i < ELEMENTSOF(parts); i++) {
                snprintf(parts[i], sizeof(parts[i]), "[%s%s%s]", defs[i].name,
                         defs[i].arg_syntax ? " " : "", defs[i].arg_syntax ?: "");
                names[i] = parts[i];
        }
        format_alternatives(buf, size, names, n < ELEMENTSOF(parts) ? n : ELEMENTSOF(parts));
}

static int section_unknown(Parser *p, const char *type, const char *arg) {
        Suggestion s = SUGGESTION_INIT(type);
        char expected[256];
        const char *hint;

        for (size_t i = 0; i < p->n_sections; i++)
                suggestion_consider(&s, p->sections[i].name);
        hint = suggestion_get(&s);
        if (hint) {
                _cleanup_free_ char *better = NULL;

                if (asprintf(&better, "[%s%s%s]", hint, *arg ? " " : "", arg) < 0) {
                        p->oom = true;
                        return -ENOMEM;
                }
                return parser_error(p, "unknown section %s; did you mean %s?", p->section_display, Q(better));
        }

        format_section_list(expected, sizeof(expected), p->sections, p->n_sections);
        return parser_error(p, "unknown section %s; expected %s", p->section_display, expected);
}

/* Returns true when this header was seen before (and says so). */
static bool section_check_duplicate(Parser *p, const char *key) {
        char *copy;

        for (size_t i = 0; i < p->n_seen; i++)
                if (streq(p->seen[i].key, key)) {
                        parser_error(p, "duplicate section %s, first at line %u; expected each section once",
                                     p->section_display, p->seen[i].line);
                        return true;
                }

        copy = strdup(key);
        if (!copy || GREEDY_REALLOC(p->seen, p->allocated_seen, p->n_seen + 1) < 0) {
                free(copy);
                p->oom = true;
                return false;
        }
        p->seen[p->n_seen].key = copy;
        p->seen[p->n_seen].line = p->line;
        p->n_seen++;
        return false;
}


const PfPolicy pf_policy_default = {
        .num_vfs = -1,
        .drivers_autoprobe = -1,
        .vf_vlan = -1,
        .vf_qos = -1,
        .vf_spoofchk = TRISTATE_LEAVE,
        .vf_trust = TRISTATE_LEAVE,
        .vf_link_state = VF_LINK_STATE_LEAVE,
        .vf_min_tx_rate = -1,
        .vf_max_tx_rate = -1,
};

static void pf_policy_init(PfPolicy *pf, unsigned line) {
        *pf = pf_policy_default;
        pf->line = line;
}

static void pf_append(Parser *p, const PfPolicy *pf) {
        Config *c = p->config;

        if (GREEDY_REALLOC(c->pfs, p->allocated_pfs, c->n_pfs + 1) < 0 ||
            GREEDY_REALLOC(p->pf_class_lines, p->allocated_pf_class_lines, c->n_pfs + 1) < 0) {
                p->oom = true;
                p->scratch = true;
                return;
        }
        c->pfs[c->n_pfs] = *pf;
        p->pf_class_lines[c->n_pfs] = 0;
        p->pf_index = c->n_pfs++;
}

static void tenant_class_init(TenantClass *cls) {
        *cls = (TenantClass) {
                .vnic = VNIC_SRIOV_PREFERRED,   /* not a default: a class must say it */
                .coalesce_rx_usecs = COALESCE_DEFAULT_USECS,
                .coalesce_tx_usecs = COALESCE_DEFAULT_USECS,
                .coalesce_rx_frames = -1,
                .coalesce_tx_frames = -1,
                .adaptive_rx = TRISTATE_LEAVE,
                .adaptive_tx = TRISTATE_LEAVE,
                .irq_cpus = IRQ_CPUS_NUMA_LOCAL,
                .irq_spread = IRQ_SPREAD_SPREAD,
                .offload_tso = TRISTATE_LEAVE,
                .offload_gso = TRISTATE_LEAVE,
                .offload_gro = TRISTATE_LEAVE,
                .offload_lro = TRISTATE_LEAVE,
                .virtio_source = "default",
        };
}

/*
 * A header, without its brackets and surrounding whitespace. Unknown and
 * malformed headers turn the section into SECTION_SKIP; an invalid argument
 * or a duplicate still has its keys checked, into a scratch object, so every
 * mistake in the section is reported in one go.
 */
static int section_begin(Parser *p, char *header) {
        const SectionDef *def = NULL;
        char key[QUOTE_MAX + 32];
        char *type, *arg;
        PfPolicy pf;

        p->kind = SECTION_SKIP;
        p->section = NULL;
        p->scratch = false;
        memset(p->key_lines, 0, sizeof(p->key_lines));
        p->n_headers++;
        snprintf(p->section_display, sizeof(p->section_display), "[%s]", Q(header));

        type = header;
        arg = type + strcspn(type, " \t\v\f\r\n");
        if (*arg) {
                *arg++ = 0;
                arg = (char *) lskip(arg);
        }

        for (size_t i = 0; i < p->n_sections; i++)
                if (streq(type, p->sections[i].name))
                        def = &p->sections[i];
        if (!def)
                return section_unknown(p, type, arg);

        if (!def->arg_syntax && *arg)
                return parser_error(p, "section [%s] takes no argument; expected [%s]", def->name, def->name);
        if (def->arg_syntax && !*arg)
                return parser_error(p, "section [%s] needs an argument; expected [%s %s]",
                                    def->name, def->name, def->arg_syntax);
        if (p->n_seen >= CONFIG_SECTIONS_MAX)
                return parser_error(p, "too many sections; expected at most %d", CONFIG_SECTIONS_MAX);

        p->kind = def->kind;
        p->section = def;
        pf_policy_init(&pf, p->line);

        switch (def->kind) {
        case SECTION_MATCH:
                pf.by_addr = false;
                if (!pci_id_parse(arg, &pf.id)) {
                        parser_error(p, "invalid [match] ID \"%s\"; expected VVVV:DDDD (vendor:device, 4 hex digits each), e.g. [match 15b3:101d]",
                                     Q(arg));
                        p->scratch = true;
                        break;
                }
                snprintf(key, sizeof(key), "match %04x:%04x", pf.id.vendor, pf.id.device);
                p->scratch = section_check_duplicate(p, key);
                break;

        case SECTION_PF:
                pf.by_addr = true;
                if (!pci_addr_valid(arg)) {
                        char lower[PCI_ADDR_MAX] = {};

                        /* sysfs spells addresses in lowercase; say so when that is the only problem. */
                        for (size_t i = 0; arg[i] && i < sizeof(lower) - 1; i++)
                                lower[i] = (char) tolower((unsigned char) arg[i]);
                        if (strlen(arg) < sizeof(lower) && pci_addr_valid(lower))
                                parser_error(p, "invalid PCI address \"%s\"; expected lowercase hex; did you mean [pf %s]?",
                                             Q(arg), lower);
                        else
                                parser_error(p, "invalid PCI address \"%s\"; expected DDDD:BB:DD.F in lowercase hex (device 00-1f, function 0-7), e.g. [pf 0000:41:00.0]",
                                             Q(arg));
                        p->scratch = true;
                        break;
                }
                strcpy(pf.addr, arg);
                snprintf(key, sizeof(key), "pf %s", arg);
                p->scratch = section_check_duplicate(p, key);
                break;

        case SECTION_CLASS:
                p->scratch = section_check_duplicate(p, def->name);
                if (p->scratch)
                        tenant_class_init(&p->scratch_class);
                else
                        p->class_line = p->line;
                break;

        default:
                /* A repeated [daemon] is reported; its keys still land in the config, which is discarded. */
                (void) section_check_duplicate(p, def->name);
                break;
        }

        if (def->kind == SECTION_MATCH || def->kind == SECTION_PF) {
                if (p->scratch)
                        p->scratch_pf = pf;
                else
                        pf_append(p, &pf);
        }
        return 0;
}

static void *section_data(Parser *p) {
        switch (p->kind) {
        case SECTION_DAEMON:
        case SECTION_CPUS:
        case SECTION_RT:
                return p->config;
        case SECTION_MATCH:
        case SECTION_PF:
                return p->scratch ? &p->scratch_pf : &p->config->pfs[p->pf_index];
        case SECTION_CLASS:
                return p->scratch ? &p->scratch_class : p->class;
        default:
                return NULL;
        }
}

static int key_unknown(Parser *p, const char *name) {
        Suggestion s = SUGGESTION_INIT(name);
        char list[512];
        const char *hint;
        size_t k = 0;

        for (size_t i = 0; i < p->section->n_keys; i++)
                suggestion_consider(&s, p->section->keys[i].name);
        hint = suggestion_get(&s);
        if (hint)
                return parser_error(p, "unknown key \"%s\" in %s; did you mean \"%s\"?",
                                    Q(name), p->section_display, hint);

        /* A key valid elsewhere was most likely put under the wrong header. */
        list[0] = 0;
        for (size_t i = 0; i < p->n_sections; i++) {
                const SectionDef *d = &p->sections[i];

                if (d == p->section)
                        continue;
                for (size_t j = 0; j < d->n_keys; j++)
                        if (streq(name, d->keys[j].name) && k < sizeof(list)) {
                                int w = snprintf(list + k, sizeof(list) - k, "%s[%s%s%s]", k > 0 ? " or " : "",
                                                 d->name, d->arg_syntax ? " " : "", d->arg_syntax ?: "");
                                if (w > 0)
                                        k += (size_t) w;
                        }
        }
        if (k > 0)
                return parser_error(p, "unknown key \"%s\" in %s; it belongs in %s", Q(name), p->section_display, list);

        for (size_t i = 0; i < p->section->n_keys; i++)
                strjoin_appendf(list, sizeof(list), &k, "%s", p->section->keys[i].name);
        return parser_error(p, "unknown key \"%s\" in %s; expected one of: %s", Q(name), p->section_display, list);
}

static int handle_key(void *userdata, const char *section, const char *name, const char *value) {
        Parser *p = userdata;
        const KeyDef *k = NULL;
        size_t idx = 0;

        /* inih cuts section names at 50 bytes; the reader tracks the real header. */
        (void) section;

        if (!name || !value)
                return 1;

        switch (p->kind) {
        case SECTION_NONE:
                parser_error(p, "key \"%s\" is outside any section; expected a section header such as [%s] above it",
                             Q(name), p->sections[0].name);
                return 1;
        case SECTION_SKIP:
                return 1;
        default:
                break;
        }

        for (idx = 0; idx < p->section->n_keys; idx++)
                if (streq(name, p->section->keys[idx].name)) {
                        k = &p->section->keys[idx];
                        break;
                }
        if (!k) {
                key_unknown(p, name);
                return 1;
        }

        if (p->key_lines[idx] > 0) {
                parser_error(p, "duplicate key \"%s\" in %s, first at line %u; expected each key once per section",
                             k->name, p->section_display, p->key_lines[idx]);
                return 1;
        }
        p->key_lines[idx] = p->line;

        k->parse(p, k, value, section_data(p));

        /* Always go on: every error is collected, inih's own error return is left to syntax. */
        return 1;
}

/* ---- the line reader ---------------------------------------------------- */

static void syntax_error(Parser *p) {
        parser_error(p, "syntax error: expected \"[section]\" or \"key = value\"");
        if (p->first_syntax_error == 0)
                p->first_syntax_error = p->line;
}

/*
 * inih calls the key handler right after the reader returned the key's line,
 * so the reader's count is the line number (Debian's inih is built without
 * INI_HANDLER_LINENO). The reader also sees every header, even of a section
 * without keys, which inih never reports, and every line inih rejects, where
 * inih would only return the first.
 */
static void classify_line(Parser *p, const char *line) {
        _cleanup_free_ char *copy = NULL;
        char *end, *header;
        const char *rest;

        copy = strdup(line);
        if (!copy) {
                p->oom = true;
                return;
        }
        rstrip(copy);

        if (!copy[0] || strchr(";#", copy[0]))
                return;

        if (copy[0] != '[') {
                end = (char *) find_chars_or_comment(copy, "=:");
                if (*end != '=' && *end != ':')
                        syntax_error(p);
                return;
        }

        end = (char *) find_chars_or_comment(copy + 1, "]");
        if (*end != ']') {
                syntax_error(p);
                /* Its keys would otherwise be taken for the previous section's. */
                p->kind = SECTION_SKIP;
                p->section = NULL;
                return;
        }
        *end = 0;
        rest = lskip(end + 1);
        /* inih ignores text after "]"; a key written there would silently vanish. */
        if (*rest && !strchr(";#", *rest))
                parser_error(p, "syntax error: unexpected \"%s\" after \"]\"; expected one \"[section]\" or \"key = value\" per line",
                             Q(rest));

        header = (char *) lskip(copy + 1);
        rstrip(header);
        section_begin(p, header);
}

static char *line_reader(char *str, int num, void *stream) {
        Parser *p = stream;
        const char *s, *nl;
        size_t n, left;

        if (p->pos >= p->size || num < 3)
                return NULL;

        s = p->text + p->pos;
        left = p->size - p->pos;
        nl = memchr(s, '\n', left);
        n = nl ? (size_t) (nl - s) : left;
        p->pos += nl ? n + 1 : n;
        p->line++;

        if (p->line == 1 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
                s += 3;
                n -= 3;
        }
        /* inih would take an indented line for a continuation of the previous value. */
        while (n > 0 && isspace((unsigned char) *s)) {
                s++;
                n--;
        }

        if (memchr(s, 0, n)) {
                parser_error(p, "line contains a NUL byte; expected text");
                if (*s == '[')
                        p->kind = SECTION_SKIP;
                return strcpy(str, "\n");
        }
        if (n + 2 > (size_t) num) {
                /* A long comment harms nobody; anything else would be cut by inih. */
                if (*s == ';' || *s == '#')
                        return strcpy(str, ";\n");
                parser_error(p, "line is too long (%zu characters); expected at most %d", n, num - 2);
                if (*s == '[')
                        p->kind = SECTION_SKIP;
                return strcpy(str, "\n");
        }

        memcpy(str, s, n);
        str[n] = '\n';
        str[n + 1] = 0;
        classify_line(p, str);
        return str;
}

static int parser_run(Parser *p) {
        int r;

        /* A global in Debian's inih; the reader strips indentation as well, for builds without it. */
        ini_allow_multiline = false;

        r = ini_parse_stream(line_reader, p, handle_key, p);
        if (r == -2 || p->oom)
                return -ENOMEM;
        if (r < 0)
                return -EIO;
        /* The reader mirrors inih's rules; should they ever differ, inih's verdict still shows. */
        if (r > 0 && (unsigned) r != p->first_syntax_error)
                error_add(p->errors, p->file_idx, p->file, (unsigned) r,
                          "syntax error: expected \"[section]\" or \"key = value\"");
        return 0;
}

/* ---- loading ------------------------------------------------------------- */

static void report_read_error(ErrorList *errors, unsigned file_idx, const char *path, int r) {
        if (r == -EFBIG)
                error_add(errors, file_idx, path, 0, "file is larger than %d KiB; expected a small INI file",
                          CONFIG_FILE_MAX / 1024);
        else {
                errno = -r;
                error_add(errors, file_idx, path, 0, "cannot read: %m");
        }
}

static int class_load(Config *c, ErrorList *errors, unsigned file_idx, const char *name,
                      size_t *allocated, ClassInfoList *info, int *read_error) {
        _cleanup_(parser_done) Parser p = {};
        _cleanup_free_ char *path = NULL, *text = NULL;
        TenantClass cls;
        size_t size;
        int r;

        if (asprintf(&path, "%s/%s.ini", c->classes_dir, name) < 0)
                return -ENOMEM;

        if (!class_name_valid(name)) {
                error_add(errors, file_idx, path, 0,
                          "invalid class name \"%s\"; expected a file named NAME.ini, NAME matching [a-z0-9][a-z0-9_-]* and at most %d characters",
                          Q(name), CLASS_NAME_MAX - 1);
                return 0;
        }

        r = read_file(path, &text, &size);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                report_read_error(errors, file_idx, path, r);
                if (*read_error == 0)
                        *read_error = r;
                return 0;
        }

        tenant_class_init(&cls);
        strcpy(cls.name, name);

        p = (Parser) {
                .config = c,
                .errors = errors,
                .file = path,
                .file_idx = file_idx,
                .sections = class_sections,
                .n_sections = ELEMENTSOF(class_sections),
                .text = text,
                .size = size,
                .class = &cls,
        };
        r = parser_run(&p);
        if (r < 0)
                return r;

        if (p.n_headers == 0)
                error_add(errors, file_idx, path, 0, "no [class] section; expected a [class] section with at least a vnic key");
        else if (p.class_line > 0 && !p.vnic_set)
                error_add(errors, file_idx, path, p.class_line,
                          "[class] has no vnic key; expected vnic = sriov-required, sriov-preferred or virtio");

        /*
         * Kept even when the file had errors: the load fails anyway, and a PF
         * naming this class should not get a second, misleading error.
         */
        if (GREEDY_REALLOC(c->classes, *allocated, c->n_classes + 1) < 0 ||
            GREEDY_REALLOC(info->items, info->allocated, c->n_classes + 1) < 0)
                return -ENOMEM;
        info->items[c->n_classes] = (ClassInfo) {
                .file_idx = file_idx,
                .prio_line = p.irq_prio_line,
                .irq_cpus_invalid = p.irq_cpus_invalid,
        };
        cls.file = TAKE_PTR(path);
        c->classes[c->n_classes++] = cls;
        return 0;
}

static int compare_strings(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static void strv_free_n(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

/* Every NAME.ini in classes_dir, in name order, info parallel to c->classes; a missing directory means no classes. */
static int load_classes(Config *c, ErrorList *errors, ClassInfoList *info, int *read_error) {
        _cleanup_closedir_ DIR *d = NULL;
        char **names = NULL;
        size_t n = 0, allocated = 0, allocated_classes = 0;
        int r = 0;

        d = opendir(c->classes_dir);
        if (!d) {
                if (errno == ENOENT)
                        return 0;
                r = negative_errno();
                report_read_error(errors, 1, c->classes_dir, r);
                if (*read_error == 0)
                        *read_error = r;
                return 0;
        }

        for (;;) {
                struct dirent *de;
                size_t len;
                char *stem;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0) {
                                r = negative_errno();
                                report_read_error(errors, 1, c->classes_dir, r);
                                if (*read_error == 0)
                                        *read_error = r;
                                r = 0;
                        }
                        break;
                }

                /* Hidden files, editor backups and READMEs are not classes. */
                len = strlen(de->d_name);
                if (de->d_name[0] == '.' || len <= 4 || !streq(de->d_name + len - 4, ".ini"))
                        continue;

                if (n >= CONFIG_CLASSES_MAX) {
                        error_add(errors, 1, c->classes_dir, 0, "more than %d class files; expected fewer",
                                  CONFIG_CLASSES_MAX);
                        break;
                }

                stem = strndup(de->d_name, len - 4);
                if (!stem || GREEDY_REALLOC(names, allocated, n + 1) < 0) {
                        free(stem);
                        r = -ENOMEM;
                        goto finish;
                }
                names[n++] = stem;
        }

        /* Sorting the names without ".ini" keeps c->classes in name order ("a" < "a-b"). */
        if (n > 0)
                qsort(names, n, sizeof(char *), compare_strings);
        for (size_t i = 0; i < n; i++) {
                r = class_load(c, errors, (unsigned) i + 1, names[i], &allocated_classes, info, read_error);
                if (r < 0)
                        break;
        }

finish:
        strv_free_n(names, n);
        return r;
}

static void check_class_refs(Config *c, ErrorList *errors, const unsigned *lines) {
        for (size_t i = 0; i < c->n_pfs; i++) {
                const char *name = c->pfs[i].class_name;
                Suggestion s = SUGGESTION_INIT(name);
                const char *hint;
                char list[512];
                size_t k = 0;

                if (!name[0] || config_find_class(c, name))
                        continue;

                for (size_t j = 0; j < c->n_classes; j++)
                        suggestion_consider(&s, c->classes[j].name);
                hint = suggestion_get(&s);

                if (hint)
                        error_add(errors, 0, c->path, lines[i], "class \"%s\" is not defined in %s; did you mean \"%s\"?",
                                  name, c->classes_dir, hint);
                else if (!c->classes_dir)
                        error_add(errors, 0, c->path, lines[i],
                                  "class \"%s\" is not defined; expected a class from a tenant-classes.d directory, but none is loaded",
                                  name);
                else if (c->n_classes == 0)
                        error_add(errors, 0, c->path, lines[i], "class \"%s\" is not defined; expected a file %s/%s.ini",
                                  name, c->classes_dir, name);
                else {
                        list[0] = 0;
                        for (size_t j = 0; j < c->n_classes; j++)
                                strjoin_appendf(list, sizeof(list), &k, "%s", c->classes[j].name);
                        error_add(errors, 0, c->path, lines[i], "class \"%s\" is not defined in %s; expected one of: %s",
                                  name, c->classes_dir, list);
                }
        }
}

static void check_vf_keys(Config *c, ErrorList *errors) {
        for (size_t i = 0; i < c->n_pfs; i++) {
                const PfPolicy *pf = &c->pfs[i];

                /* The kernel takes QoS only inside the VLAN tag it belongs to. */
                if (pf->vf_qos >= 0 && pf->vf_vlan < 0)
                        error_add(errors, 0, c->path, pf->line,
                                  "vf_qos = %d without vf_vlan in this section; expected a vf_vlan for the priority to tag",
                                  pf->vf_qos);
                if (pf->vf_min_tx_rate > 0 && pf->vf_max_tx_rate > 0 && pf->vf_min_tx_rate > pf->vf_max_tx_rate)
                        error_add(errors, 0, c->path, pf->line,
                                  "vf_min_tx_rate = %d exceeds vf_max_tx_rate = %d in this section; expected min <= max",
                                  pf->vf_min_tx_rate, pf->vf_max_tx_rate);
        }
}

static void check_cpus(Config *c, ErrorList *errors, const Parser *p) {
        char buf[CPUSET_LIST_MAX];
        CpuSet both;

        if (!c->have_rt_cpus || !c->have_housekeeping_cpus)
                return;

        cpuset_and(&both, &c->rt_cpus, &c->housekeeping_cpus);
        if (cpuset_is_empty(&both))
                return;

        /* Reported where the second of the two lists is, which is where the conflict arises. */
        error_add(errors, 0, c->path, p->rt_line > p->housekeeping_line ? p->rt_line : p->housekeeping_line,
                  "rt and housekeeping CPUs overlap in %s; expected disjoint lists (a CPU is either real-time or housekeeping)",
                  cpuset_format_list(&both, buf, sizeof(buf)));
}

static bool class_prio_checked(const Config *c, const ClassInfo *info, size_t i) {
        return info[i].prio_line > 0 && !info[i].irq_cpus_invalid && c->classes[i].irq_thread_priority > 0;
}

/*
 * The softirq partition only works if the ordering holds: RT classes' IRQ
 * threads at or above rtnet_prio, everyone else's below it, so that non-RT
 * network work never runs in the RT partition and RT work never waits on it.
 * Without rtnet_prio the same ordering is required between the classes
 * themselves. Reported at the irq_thread_priority line that breaks it;
 * priority 0 (kernel default) is never checked.
 */
static void check_rt_priorities(const Config *c, ErrorList *errors, const ClassInfo *info, unsigned rtnet_prio_line) {
        size_t lowest_rt = SIZE_MAX;

        for (size_t i = 0; i < c->n_classes; i++) {
                const TenantClass *t = &c->classes[i];
                bool rt = t->irq_cpus == IRQ_CPUS_RT;

                if (!class_prio_checked(c, info, i))
                        continue;

                if (c->rtnet_prio < 0) {
                        if (rt && (lowest_rt == SIZE_MAX ||
                                   t->irq_thread_priority < c->classes[lowest_rt].irq_thread_priority))
                                lowest_rt = i;
                        continue;
                }

                if (rt && t->irq_thread_priority < c->rtnet_prio)
                        error_add(errors, info[i].file_idx, t->file, info[i].prio_line,
                                  "irq_thread_priority = %d is below [rt] rtnet_prio = %d (%s:%u); "
                                  "expected an RT class's IRQ threads at or above the softirq threshold",
                                  t->irq_thread_priority, c->rtnet_prio, c->path, rtnet_prio_line);
                else if (!rt && t->irq_thread_priority >= c->rtnet_prio)
                        error_add(errors, info[i].file_idx, t->file, info[i].prio_line,
                                  "irq_thread_priority = %d is not below [rt] rtnet_prio = %d (%s:%u); "
                                  "expected non-RT classes' IRQ threads below the softirq threshold",
                                  t->irq_thread_priority, c->rtnet_prio, c->path, rtnet_prio_line);
        }

        if (lowest_rt == SIZE_MAX)
                return;

        /* Against the lowest RT class only: one error per non-RT class is enough to fix it. */
        for (size_t i = 0; i < c->n_classes; i++) {
                const TenantClass *t = &c->classes[i], *low = &c->classes[lowest_rt];

                if (!class_prio_checked(c, info, i) || t->irq_cpus == IRQ_CPUS_RT ||
                    t->irq_thread_priority < low->irq_thread_priority)
                        continue;
                error_add(errors, info[i].file_idx, t->file, info[i].prio_line,
                          "irq_thread_priority = %d is not below RT class \"%s\"'s irq_thread_priority = %d (%s:%u); "
                          "expected non-RT classes' IRQ threads below every RT class's",
                          t->irq_thread_priority, low->name, low->irq_thread_priority, low->file,
                          info[lowest_rt].prio_line);
        }
}

static int build_scope(Config *c) {
        size_t n_ids = 0, n_addrs = 0;

        /* Never zero-sized: calloc(0) may return NULL, which is not a failure. */
        c->scope_ids = calloc(scope_default_n_ids + c->n_pfs + 1, sizeof(PciId));
        c->scope_addrs = calloc(c->n_pfs + 1, PCI_ADDR_MAX);
        if (!c->scope_ids || !c->scope_addrs)
                return -ENOMEM;

        for (size_t i = 0; i < scope_default_n_ids; i++)
                c->scope_ids[n_ids++] = scope_default_ids[i];

        for (size_t i = 0; i < c->n_pfs; i++) {
                const PfPolicy *pf = &c->pfs[i];
                bool found = false;

                if (pf->by_addr) {
                        memcpy(c->scope_addrs[n_addrs++], pf->addr, PCI_ADDR_MAX);
                        continue;
                }
                for (size_t j = 0; j < n_ids && !found; j++)
                        found = c->scope_ids[j].vendor == pf->id.vendor && c->scope_ids[j].device == pf->id.device;
                if (!found)
                        c->scope_ids[n_ids++] = pf->id;
        }

        c->n_scope_ids = n_ids;
        c->n_scope_addrs = n_addrs;
        return 0;
}

static int config_new(const char *path, const char *classes_dir, Config **ret) {
        _cleanup_(config_freep) Config *c = NULL;

        c = calloc(1, sizeof(Config));
        if (!c)
                return -ENOMEM;

        *c = (Config) {
                .path = strdup(path),
                .classes_dir = classes_dir ? strdup(classes_dir) : NULL,
                .state_dir = strdup(CONFIG_DEFAULT_STATE_DIR),
                .drift_check_sec = DEFAULT_DRIFT_CHECK_SEC,
                .vf_timeout_sec = DEFAULT_VF_TIMEOUT_SEC,
                /* Measured (bench-allocator): 2 moves ~115 tenants/h at 128 VFs, 8 loses 5 points; 4 between. */
                .vf_headroom = 4,
                .max_tenants = 16384,
                .vf_target_utilization = 85,
                .access_group = strdup(DEFAULT_ACCESS_GROUP),
                .libvirt_uri = strdup(CONFIG_DEFAULT_LIBVIRT_URI),
                .rtnet_prio = -1,
                .keep_irqs_off_rt = true,
        };
        if (!c->path || (classes_dir && !c->classes_dir) || !c->state_dir || !c->access_group || !c->libvirt_uri)
                return -ENOMEM;

        *ret = TAKE_PTR(c);
        return 0;
}

/* Parses text into c, loads the classes, cross-checks; errors go to *ret_errors (NULL = dropped). */
static int config_parse(Config *c, const char *text, size_t size, char **ret_errors) {
        _cleanup_(error_list_done) ErrorList errors = {};
        _cleanup_(parser_done) Parser p = {};
        _cleanup_free_ char *joined = NULL;
        _cleanup_(class_info_list_done) ClassInfoList info = {};
        int read_error = 0, r;

        p = (Parser) {
                .config = c,
                .errors = &errors,
                .file = c->path,
                .file_idx = 0,
                .sections = main_sections,
                .n_sections = ELEMENTSOF(main_sections),
                .text = text,
                .size = size,
        };
        r = parser_run(&p);
        if (r < 0)
                return r;

        if (c->classes_dir) {
                r = load_classes(c, &errors, &info, &read_error);
                if (r < 0)
                        return r;
        }

        check_class_refs(c, &errors, p.pf_class_lines);
        check_cpus(c, &errors, &p);
        check_vf_keys(c, &errors);
        check_rt_priorities(c, &errors, info.items, p.rtnet_prio_line);

        if (errors.oom)
                return -ENOMEM;
        if (errors.n_items > 0 || errors.n_dropped > 0) {
                r = error_list_join(&errors, c->path, &joined);
                if (r < 0)
                        return r;
                if (ret_errors)
                        *ret_errors = TAKE_PTR(joined);
                return read_error < 0 ? read_error : -EINVAL;
        }

        return build_scope(c);
}

static int classes_dir_beside(const char *path, char **ret) {
        const char *slash = strrchr(path, '/');
        int k;

        if (!slash)
                k = asprintf(ret, "%s", CLASSES_DIR_NAME);
        else
                k = asprintf(ret, "%.*s/%s", (int) (slash - path), path, CLASSES_DIR_NAME);
        return k < 0 ? -ENOMEM : 0;
}

int config_load(const char *path, Config **ret, char **ret_errors) {
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *text = NULL, *dir = NULL;
        size_t size;
        int r;

        if (ret_errors)
                *ret_errors = NULL;
        if (!path || !ret)
                return -EINVAL;

        r = read_file(path, &text, &size);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                _cleanup_(error_list_done) ErrorList errors = {};
                _cleanup_free_ char *joined = NULL;

                report_read_error(&errors, 0, path, r);
                if (error_list_join(&errors, path, &joined) < 0)
                        return -ENOMEM;
                if (ret_errors)
                        *ret_errors = TAKE_PTR(joined);
                return r;
        }

        r = classes_dir_beside(path, &dir);
        if (r < 0)
                return r;
        r = config_new(path, dir, &c);
        if (r < 0)
                return r;

        r = config_parse(c, text, size, ret_errors);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(c);
        return 0;
}

int config_load_string(const char *name, const char *text, const char *classes_dir,
                       Config **ret, char **ret_errors) {
        _cleanup_(config_freep) Config *c = NULL;
        int r;

        if (ret_errors)
                *ret_errors = NULL;
        if (!name || !text || !ret)
                return -EINVAL;

        r = config_new(name, classes_dir, &c);
        if (r < 0)
                return r;

        r = config_parse(c, text, strlen(text), ret_errors);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(c);
        return 0;
}

Config *config_free(Config *c) {
        if (!c)
                return NULL;

        free(c->path);
        free(c->classes_dir);
        free(c->state_dir);
        free(c->access_group);
        free(c->libvirt_uri);
        free(c->pfs);
        for (size_t i = 0; i < c->n_classes; i++)
                free(c->classes[i].file);
        free(c->classes);
        free(c->scope_ids);
        free(c->scope_addrs);
        free(c);
        return NULL;
}

static int class_compare(const void *key, const void *elem) {
        return strcmp(key, ((const TenantClass *) elem)->name);
}

const char *vf_driver_policy_to_string(VfDriverPolicy p) {
        return (unsigned) p < ELEMENTSOF(vf_driver_values) ? vf_driver_values[p] : "unknown";
}

const TenantClass *config_find_class(const Config *c, const char *name) {
        if (!c || !name || c->n_classes == 0)
                return NULL;
        return bsearch(name, c->classes, c->n_classes, sizeof(TenantClass), class_compare);
}

const PfPolicy *config_pf_policy(const Config *c, const char *addr, uint16_t vendor, uint16_t device) {
        if (!c)
                return NULL;

        if (addr)
                for (size_t i = 0; i < c->n_pfs; i++)
                        if (c->pfs[i].by_addr && streq(c->pfs[i].addr, addr))
                                return &c->pfs[i];

        for (size_t i = 0; i < c->n_pfs; i++)
                if (!c->pfs[i].by_addr && c->pfs[i].id.vendor == vendor && c->pfs[i].id.device == device)
                        return &c->pfs[i];

        return NULL;
}

void config_scope(const Config *c, Scope *ret) {
        *ret = (Scope) {
                .ids = c->scope_ids,
                .n_ids = c->n_scope_ids,
                .addrs = (const char (*)[PCI_ADDR_MAX]) c->scope_addrs,
                .n_addrs = c->n_scope_addrs,
        };
}

const char *vnic_kind_to_string(VnicKind k) {
        return (size_t) k < ELEMENTSOF(vnic_values) ? vnic_values[k] : NULL;
}

const char *irq_cpu_policy_to_string(IrqCpuPolicy p) {
        static const char *const table[] = {
                [IRQ_CPUS_NUMA_LOCAL] = "numa-local",
                [IRQ_CPUS_RT] = "rt",
                [IRQ_CPUS_VCPU] = "vcpu",
                [IRQ_CPUS_LIST] = "list",
        };

        return (size_t) p < ELEMENTSOF(table) ? table[p] : NULL;
}

const char *irq_spread_to_string(IrqSpread s) {
        return (size_t) s < ELEMENTSOF(irq_spread_values) ? irq_spread_values[s] : NULL;
}

const char *tristate_to_string(Tristate t) {
        switch (t) {
        case TRISTATE_LEAVE:
                return "leave";
        case TRISTATE_OFF:
                return "off";
        case TRISTATE_ON:
                return "on";
        }
        return NULL;
}
