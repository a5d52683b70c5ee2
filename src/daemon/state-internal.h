/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state-internal.h — what the state file and its journal share: the strict JSON reader, the writer's pieces */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/jsonc.h"
#include "sriovd/state.h"

#define CHECKSUM_PREFIX "crc32c:"
#define ASIDE_INFIX ".corrupt-"

/* A document being read: its bytes, within the whole file or journal that lines and columns count in. */
typedef struct StateText {
        const char *buf;          /* the whole file or journal */
        size_t start, end;        /* the document: [start, end) */
        const char *root;         /* how messages name the document: "the file", "the journal line" */
        StateError *error;        /* may be NULL */
} StateText;

/* A value's place in a document: keys and indexes from its root; key: the member's key, not its value. */
typedef struct JsonStep {
        const char *key;          /* NULL: an array index */
        size_t index;
} JsonStep;

typedef struct JsonPath {
        JsonStep step[6];
        unsigned n;
        bool key;
} JsonPath;

JsonPath state_path_key(const JsonPath *p, const char *key);
JsonPath state_path_index(const JsonPath *p, size_t index);

/*
 * Parse the document t: json-c's tree in *ret (the caller puts it), *ret_end just after its
 * value, *ret_last_key the place of its last top-level key. -EBADMSG with t->error set (syntax,
 * what json-c lets through but the format refuses, a duplicate key); -ENOMEM.
 */
int state_json_parse(const StateText *t, json_object **ret, size_t *ret_end, size_t *ret_last_key);
/* Where the value (or key) at p is in t; the document's start if it is not there. Linear: for errors. */
size_t state_json_locate(const StateText *t, const JsonPath *p);

_printf_(4, 5) void state_error_set(StateError *e, unsigned line, unsigned column, const char *fmt, ...);
/* Set t->error to "line L, column C: ..." for the place pos (or p) and return -EBADMSG. */
_printf_(3, 4) int state_text_error(const StateText *t, size_t pos, const char *fmt, ...);
_printf_(3, 4) int state_path_error(const StateText *t, const JsonPath *p, const char *fmt, ...);
/* "'x'" or "byte 0xNN" or "end of file", for "expected ..., found ..." */
const char *state_describe_at(const StateText *t, size_t pos, char buf[static 16]);
/* Valid UTF-8: shortest forms, no surrogates, at most U+10FFFF. */
bool state_utf8_valid(const char *s, size_t n);

/* A list of tenants being read, and the document around it. */
typedef struct DocCtx {
        StateTenant *tenants;
        size_t n, n_alloc;
        uint64_t generation;
        uint32_t checksum;
        bool have_checksum;
        JsonPath tenants_path;    /* where the list is, for messages about duplicates */
} DocCtx;

/* One member of an object being read: keys[key] at p (a path to its value), v its value (NULL = null). */
typedef int (*MemberFn)(const StateText *t, unsigned key, const JsonPath *p, json_object *v, void *userdata);

uint32_t state_crc32c(const void *data, size_t size);
/* NULL, or why s is not a tenant id. */
const char *state_tenant_id_check(const char *s);
/* An object at p whose keys are all of keys[] (at most 32), each once; what names it in messages. */
int state_read_object(const StateText *t, const JsonPath *p, json_object *o, const char *what, const char *const *keys,
                      unsigned n_keys, MemberFn fn, void *userdata);
int state_read_string(const StateText *t, const JsonPath *p, json_object *v, const char *what, char *dst, size_t cap);
int state_read_integer(const StateText *t, const JsonPath *p, json_object *v, const char *what, int64_t min, int64_t max,
                       int64_t *ret);
/* A list of tenants at p, appended to d. */
int state_read_tenants(const StateText *t, const JsonPath *p, json_object *v, DocCtx *d);
/* The "format" and "version" members every document of ours opens with. */
int state_read_format(const StateText *t, const JsonPath *p, json_object *v, const char *want);
int state_read_version(const StateText *t, const JsonPath *p, json_object *v, int version);
/* "crc32c:xxxxxxxx", lowercase. */
int state_read_checksum(const StateText *t, const JsonPath *p, json_object *v, uint32_t *ret);
/* Tenant ids, VF addresses and seqs are unique; t and p (where the tenants are) may be NULL. */
int state_check_duplicates(const State *s, const StateText *t, const JsonPath *p, StateError *e);

/* A tenant as the file and the journal write it; NULL when out of memory. */
json_object *state_tenant_to_json(const StateTenant *t);
/*
 * The document doc (whose last member is "checksum": CHECKSUM_PREFIX "00000000") printed with
 * json-c's flags, a newline after it, and the checksum of everything before its last "checksum"
 * key put in: *ret (the caller frees), *ret_size without the NUL.
 */
int state_document_finish(json_object *doc, int flags, char **ret, size_t *ret_size);

bool state_name_valid(const char *name);
int state_dir_sync(int dir_fd);
int state_move_aside(int dir_fd, const char *name, char aside[static NAME_MAX + 1]);
int state_write_all(int fd, const char *buf, size_t size);
