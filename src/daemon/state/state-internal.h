/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state-internal.h — what the state file and its journal share: the strict JSON reader and the writer's helpers */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/jsonc.h"
#include "state.h"

#define CHECKSUM_PREFIX "crc32c:"
#define ASIDE_INFIX ".corrupt-"

/* A document being read. It lies within the whole file or journal, in which lines and columns are counted. */
typedef struct StateText {
        const char *buf;          /* the whole file or journal */
        size_t start, end;        /* the document: [start, end) */
        const char *root;         /* what messages call the document, such as "the file" or "the journal line" */
        StateError *error;        /* may be NULL */
} StateText;

/*
 * A value's place in a document, as the keys and indexes that lead to it from the root. When
 * key is true, the path names the member's key, not its value.
 */
typedef struct JsonStep {
        const char *key;          /* NULL for an array index */
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
 * Parse the document t. *ret receives json-c's tree, which the caller puts. *ret_end is set just
 * after the document's value, and *ret_last_key to the place of its last top-level key. Returns
 * -EBADMSG with t->error set for a syntax error, for a duplicate key, and for anything else that
 * json-c lets through but the format refuses. Returns -ENOMEM when out of memory.
 */
int state_json_parse(const StateText *t, json_object **ret, size_t *ret_end, size_t *ret_last_key);
/*
 * Find where the value or key at p is in t. Returns the document's start if it is not there.
 * The search is linear, so it is meant for error messages only.
 */
size_t state_json_locate(const StateText *t, const JsonPath *p);

_printf_(4, 5) void state_error_set(StateError *e, unsigned line, unsigned column, const char *fmt, ...);
/* Set t->error to "line L, column C: ..." for the place pos, or p, and return -EBADMSG. */
_printf_(3, 4) int state_text_error(const StateText *t, size_t pos, const char *fmt, ...);
_printf_(3, 4) int state_path_error(const StateText *t, const JsonPath *p, const char *fmt, ...);
/* Describe what is at pos as "'x'", "byte 0xNN" or "end of file", for "expected ..., found ..." messages. */
const char *state_describe_at(const StateText *t, size_t pos, char buf[static 16]);
/* Whether s is valid UTF-8: shortest forms only, no surrogates, and nothing above U+10FFFF. */
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

/*
 * Called for one member of an object being read. The member's key is keys[key], p is the path
 * to its value, and v is the value. v is NULL for a JSON null.
 */
typedef int (*MemberFn)(const StateText *t, unsigned key, const JsonPath *p, json_object *v, void *userdata);

uint32_t state_crc32c(const void *data, size_t size);
/*
 * The rules for each tenant field, in state-check.c. Each returns NULL for a valid value, or
 * else what is expected. state_uuid_check() and state_owner_check() accept an empty string.
 */
const char *state_tenant_id_check(const char *s);
const char *state_class_name_check(const char *s);
const char *state_pci_addr_check(const char *s);
const char *state_domain_check(const char *s);
const char *state_uuid_check(const char *s);
const char *state_owner_check(const char *s);
const char *state_mac_check(const uint8_t mac[static 6]);
/*
 * Read the object at p. Its keys must be exactly those in keys[], each once, and keys[] holds
 * at most 32. what names the object in messages.
 */
int state_read_object(const StateText *t, const JsonPath *p, json_object *o, const char *what, const char *const *keys,
                      unsigned n_keys, MemberFn fn, void *userdata);
int state_read_string(const StateText *t, const JsonPath *p, json_object *v, const char *what, char *dst, size_t cap);
int state_read_integer(const StateText *t, const JsonPath *p, json_object *v, const char *what, int64_t min, int64_t max,
                       int64_t *ret);
/* Read the list of tenants at p, and append them to d. */
int state_read_tenants(const StateText *t, const JsonPath *p, json_object *v, DocCtx *d);
/* Read the "format" and "version" members, with which every sriovd document opens. */
int state_read_format(const StateText *t, const JsonPath *p, json_object *v, const char *want);
int state_read_version(const StateText *t, const JsonPath *p, json_object *v, int version);
/* Read a checksum written as "crc32c:xxxxxxxx", in lowercase. */
int state_read_checksum(const StateText *t, const JsonPath *p, json_object *v, uint32_t *ret);
/* Check that tenant ids, VF addresses and seqs are unique. t and p locate the tenants, and may be NULL. */
int state_check_duplicates(const State *s, const StateText *t, const JsonPath *p, StateError *e);

/* A tenant in the form that the file and the journal write, or NULL when out of memory. */
json_object *state_tenant_to_json(const StateTenant *t);
/*
 * Print the document doc with json-c's flags, followed by a newline. doc's last member must be
 * "checksum": CHECKSUM_PREFIX "00000000". The checksum of everything before that last
 * "checksum" key is then filled in. *ret receives the text, which the caller frees, and
 * *ret_size receives its size without the NUL.
 */

int state_document_finish(json_object *doc, int flags, char **ret, size_t *ret_size);

bool state_name_valid(const char *name);
int state_dir_sync(int dir_fd);
int state_move_aside(int dir_fd, const char *name, char aside[static NAME_MAX + 1]);
int state_write_all(int fd, const char *buf, size_t size);
