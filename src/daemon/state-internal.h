/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state-internal.h — what the state file and its journal share: the strict parser, the writer's pieces */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sriovd/json.h"
#include "sriovd/state.h"

#define CHECKSUM_PREFIX "crc32c:"
#define ASIDE_INFIX ".corrupt-"

/* Where each tenant's checked fields are in the file, for messages about duplicates. */
typedef struct TenantPlace {
        size_t start, tenant, vf, seq;
} TenantPlace;

typedef struct Parser {
        const char *buf;
        size_t size, pos;
        StateError *error;
} Parser;

/* A list of tenants being parsed, and the document around it. */
typedef struct DocCtx {
        StateTenant *tenants;
        TenantPlace *places;
        size_t n, n_alloc, n_places_alloc;
        uint64_t generation;
        size_t checksum_key, checksum_value;
        uint32_t checksum;
        bool have_checksum;
} DocCtx;

typedef int (*MemberFn)(Parser *p, unsigned key, size_t key_pos, void *userdata);

uint32_t state_crc32c(const void *data, size_t size);
/* NULL, or why s is not a tenant id. */
const char *state_tenant_id_check(const char *s);
_printf_(3, 4) int state_parser_error(Parser *p, size_t pos, const char *fmt, ...);
void state_skip_ws(Parser *p);
int state_peek(Parser *p);
int state_expect(Parser *p, char c, const char *what);
int state_parse_string(Parser *p, const char *what, char *dst, size_t cap);
int state_parse_integer(Parser *p, const char *what, int64_t min, int64_t max, int64_t *ret);
int state_parse_object(Parser *p, const char *what, const char *const *keys, unsigned n_keys, MemberFn fn, void *userdata);
/* A '[' tenant, ... ']' list appended to d. */
int state_parse_tenants(Parser *p, DocCtx *d);
/* The "format" and "version" members every document of ours opens with. */
int state_parse_format(Parser *p, const char *want);
int state_parse_version(Parser *p, int version);
/* "crc32c:xxxxxxxx", lowercase. */
int state_parse_checksum(Parser *p, uint32_t *ret);

void state_write_tenant(JsonWriter *w, const StateTenant *t);
int state_checksum_patch(char *buf, size_t size, const char *tail);
/* Close the memstream f writing *buf (whose document ends with tail, the checksum placeholder)
 * and put the checksum in: the document moves to *ret, *ret_size. */
int state_document_finish(FILE *f, char **buf, const size_t *size, const char *tail, char **ret, size_t *ret_size);

bool state_name_valid(const char *name);
int state_dir_sync(int dir_fd);
int state_move_aside(int dir_fd, const char *name, char aside[static NAME_MAX + 1]);
int state_write_all(int fd, const char *buf, size_t size);
