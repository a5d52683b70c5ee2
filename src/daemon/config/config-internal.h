/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config-internal.h — what the parts of the INI reader share: the error list, the parser and the key tables */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* Policy files are a few hundred bytes. Anything far larger is a mistake, such as /dev/zero. */
#define CONFIG_FILE_MAX (1024 * 1024)
/* Past this many errors, further ones are counted but not listed, because nobody reads the 101st. */
#define CONFIG_ERRORS_MAX 100
/* Enforce limits on everything the operator controls, even if they are generous. */
#define CONFIG_SECTIONS_MAX 4096
#define CONFIG_CLASSES_MAX 1024
/* The most keys that any section has. key_lines[] is sized by it. */
#define SECTION_KEYS_MAX 40
/* A suggestion further away than this edit distance confuses more than it helps. */
#define SUGGEST_DISTANCE_MAX 3
/* Values and names are echoed in messages quoted and cut to this length. */
#define QUOTE_MAX 64
#define CLASSES_DIR_NAME "tenant-classes.d"

typedef struct ConfigError {
        unsigned file;   /* 0 is the main file, then the class files in load order */
        unsigned line;   /* 0 means the error is about the whole file */
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

typedef struct Suggestion {
        const char *input;
        const char *best;            /* the closest near miss so far */
        size_t distance;
        const char *completion;      /* a name that input is the start of */
        unsigned n_completions;
} Suggestion;

#define SUGGESTION_INIT(s) ((Suggestion) { .input = (s), .distance = SIZE_MAX })

typedef enum SectionKind {
        SECTION_NONE,     /* before the first header */
        SECTION_SKIP,     /* after a bad header; its keys are ignored, because one error is enough */
        SECTION_DAEMON,
        SECTION_CPUS,
        SECTION_RT,
        SECTION_MATCH,
        SECTION_PF,
        SECTION_ALERT,
        SECTION_CLASS,
} SectionKind;

/* The lines where an [alert NAME] section set the keys that the final checks need. 0 means not set. */
typedef struct AlertLines {
        unsigned section, metric, threshold, clear;
} AlertLines;

typedef struct Parser Parser;
typedef struct KeyDef KeyDef;

/* Parses value into data + k->offset, or reports why it cannot. */
typedef int (*KeyParse)(Parser *p, const KeyDef *k, const char *value, void *data);

struct KeyDef {
        const char *name;
        KeyParse parse;
        size_t offset;
        long min, max;                 /* for integers */
        const char *const *values;     /* for enums, in enum order */
        size_t n_values;
};

typedef struct SectionDef {
        const char *name;              /* the header's first word */
        SectionKind kind;
        const char *arg_syntax;        /* NULL if the section takes no argument */
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
        unsigned key_lines[SECTION_KEYS_MAX];   /* the line that set each key, or 0 */
        bool scratch;                    /* for a bad or duplicate section: keys are checked, the result dropped */
        size_t pf_index;
        PfPolicy scratch_pf;
        TenantClass scratch_class;

        /* every header seen, to find duplicates */
        struct {
                char *key;
                unsigned line;
        } *seen;
        size_t n_seen, allocated_seen;

        size_t allocated_pfs;

        /* [alert NAME] sections. They run parallel to config->alerts until check_alerts() adds the built-in rules. */
        size_t alert_index;
        AlertPolicy scratch_alert;
        size_t allocated_alerts;
        AlertLines *alert_lines;
        size_t allocated_alert_lines;

        /* checked once everything is loaded */
        unsigned rt_line, housekeeping_line;
        unsigned rtnet_prio_line;
        unsigned kthread_prio_lines[_KTHREAD_KIND_MAX];   /* the [rt] *_priority lines, by KthreadKind */
        unsigned *pf_class_lines;        /* parallel to config->pfs */
        size_t allocated_pf_class_lines;

        /* class files */
        TenantClass *class;
        unsigned class_line;
        bool vnic_set;
        unsigned irq_prio_line;          /* the line that set irq_thread_priority, or 0 */
        unsigned napi_prio_line;         /* the line that set napi_thread_priority, or 0 */
        unsigned napi_threads_line;      /* the line that set napi_threads, or 0 */
        unsigned vhost_cpus_line;        /* the line that set vhost_cpus, or 0 */
        unsigned vcpu_prio_line;         /* the line that set vcpu_fifo_priority, or 0 */
        unsigned vhost_prio_line;        /* the line that set vhost_priority, or 0 */
        unsigned l3_mask_line;           /* the line that set l3_cache_mask, or 0 */
        bool irq_cpus_invalid;           /* irq_cpus was given but rejected */
        bool vcpu_pinning_invalid;       /* vcpu_pinning was given but rejected */
        bool oom;
};

/* What the RT priority checks need to know about each loaded class, parallel to config->classes. */
typedef struct ClassInfo {
        unsigned file_idx;
        unsigned prio_line;              /* 0 if irq_thread_priority is not set; then no check applies */
        unsigned napi_prio_line;         /* 0 if napi_thread_priority is not set; then it follows irq_thread_priority */
        bool irq_cpus_invalid;           /* already reported, and a check against the default would mislead */
        bool vcpu_pinning_invalid;       /* the same, for an irq_cpus = vcpu class */
        unsigned vcpu_prio_line;         /* 0 if vcpu_fifo_priority is not set */
        unsigned vhost_prio_line;        /* 0 if vhost_priority is not set */
} ClassInfo;

typedef struct ClassInfoList {
        ClassInfo *items;
        size_t allocated;
} ClassInfoList;

/* config-errors.c: the collected messages. Each reads "FILE:LINE: ...", and joining sorts them by file and line. */
void error_list_done(ErrorList *l);
_printf_(5, 0) void error_addv(ErrorList *l, unsigned file_idx, const char *file, unsigned line,
                               const char *fmt, va_list ap);
_printf_(5, 6) void error_add(ErrorList *l, unsigned file_idx, const char *file, unsigned line,
                              const char *fmt, ...);
/* Joins the errors in file order, then line order. Each error is one line, with no trailing newline. */
int error_list_join(ErrorList *l, const char *main_file, char **ret);
/* Adds an error at the parser's current line. It returns -EINVAL, so that checks can "return parser_error(...)". */
_printf_(2, 3) int parser_error(Parser *p, const char *fmt, ...);
/* Makes operator input safe to echo in a message. It cuts it to QUOTE_MAX and replaces control and non-ASCII bytes. */
const char *config_quote(char *buf, const char *s);
#define Q(s) config_quote((char[QUOTE_MAX + 4]) {}, (s))
/* Formats a list as "a, b or c" for messages. */
void format_alternatives(char *buf, size_t size, const char *const *values, size_t n);

/* config-reader.c: the line reader and the loading of files. It skips leading whitespace. */
const char *lskip(const char *s);

/* config-sections.c: the sections and keys the line reader meets.
 * section_begin takes a header without its brackets. It reports an unknown, malformed or repeated one. */
int section_begin(Parser *p, char *header);
/* inih's key handler. It always returns 1, so that inih goes on and every error is collected. */
int handle_key(void *userdata, const char *section, const char *name, const char *value);

/* config-validate.c: the "did you mean" suggestions, and the checks that need everything loaded. */
void suggestion_consider(Suggestion *s, const char *candidate);
/* Returns the suggestion, or NULL when none is worth making. */
const char *suggestion_get(const Suggestion *s);
void check_class_refs(Config *c, ErrorList *errors, const unsigned *lines);
void check_vf_keys(Config *c, ErrorList *errors);
void check_cpus(Config *c, ErrorList *errors, const Parser *p);
void check_rt_priorities(const Config *c, ErrorList *errors, const ClassInfo *info, const Parser *p);
/* Completes the [alert] sections with the clear defaults and the pool rule's target.
 * Then it adds each built-in rule that the file did not name. */
int check_alerts(Config *c, ErrorList *errors, const Parser *p);

/* config-keys.c: the sections, their keys, and how each value is read. */
extern const SectionDef config_main_sections[];
extern const size_t config_n_main_sections;
extern const SectionDef config_class_sections[];
extern const size_t config_n_class_sections;
/* Reads yes/no, true/false, on/off or 1/0 into the int at data + k->offset. */
int key_bool(Parser *p, const KeyDef *k, const char *value, void *data);

/* config-keys-alert.c: the keys of an [alert NAME] section. config-keys.c holds their table. */
int key_alert_metric(Parser *p, const KeyDef *k, const char *value, void *data);
int key_alert_gate(Parser *p, const KeyDef *k, const char *value, void *data);
int key_alert_fallback(Parser *p, const KeyDef *k, const char *value, void *data);
int key_alert_level(Parser *p, const KeyDef *k, const char *value, void *data);
int key_alert_enabled(Parser *p, const KeyDef *k, const char *value, void *data);
int key_alert_filter(Parser *p, const KeyDef *k, const char *value, void *data);

/* config-values.c: the syntax of values. These only check text and report nothing. */
/* Parses a PCI ID written as VVVV:DDDD, in either case. */
bool pci_id_parse(const char *s, PciId *ret);
/* A class name matches [a-z0-9][a-z0-9_-]{0,62}, so it is safe as a file name and as a D-Bus argument. */
bool class_name_valid(const char *s);
bool group_name_valid(const char *s);
bool has_control_chars(const char *s);
bool absolute_path_valid(const char *s);
/* Returns -EINVAL for anything but a plain decimal, and -ERANGE when it does not fit a long. */
int parse_long_strict(const char *s, long *ret);
/* Returns 1 or 0, or -EINVAL for a word that is not a boolean. */
int parse_boolean(const char *s);
