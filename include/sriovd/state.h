/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state.h — tenant allocations on disk: one checksummed JSON file, replaced atomically */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/macro.h"
#include "sriovd/plan.h"   /* TENANT_ID_MAX; CLASS_NAME_MAX through config.h */

/*
 * The file, in the state directory (systemd StateDirectory=, /var/lib/sriovd):
 *
 *   {
 *     "format": "sriovd-allocations",
 *     "version": 1,
 *     "generation": 42,
 *     "tenants": [ { "tenant": ..., "class": ..., "kind": "vf", "vf": "0000:41:00.2", ... } ],
 *     "checksum": "crc32c:1c2d3e4f"
 *   }
 *
 * The checksum is CRC32C (Castagnoli) of every byte of the file before the "checksum" key
 * (so it must be the last key), and the file ends with "}\n": a torn or truncated file never
 * passes. Every key is required; "none" is null. An operator who edits the file on purpose
 * copies the checksum the error message reports for the content into the file.
 */
#define STATE_FILE_NAME "allocations.json"
#define STATE_FORMAT "sriovd-allocations"
#define STATE_FORMAT_VERSION 1

/* Limits on what a file may hold; anything beyond them is corrupt. */
#define STATE_TENANTS_MAX 16384
#define STATE_FILE_SIZE_MAX (16u * 1024u * 1024u)
#define STATE_DOMAIN_MAX 256               /* bytes with the NUL, valid UTF-8, no control characters or '/' */
#define STATE_VF_MAX 16                    /* "0000:41:00.2" and NUL */
#define STATE_VLAN_MAX 4094                /* 0..4094; -1 = none (null) */
#define STATE_NUMA_NODE_MAX 1023           /* 0..1023; -1 = any (null) */
#define STATE_COALESCE_USECS_MAX 100000    /* the range tenant classes allow */

typedef enum StateKind {
        STATE_KIND_VIRTIO = 0,
        STATE_KIND_VF = 1,
        STATE_KIND_WAITING = 2,            /* sriov-required, no NIC until a VF is free: "waiting" */
} StateKind;

/* "virtio", "vf", "waiting"; NULL for anything else. */
const char *state_kind_to_string(int kind);

/* One tenant's allocation as persisted; independent of the allocator's internals. */
typedef struct StateTenant {
        char tenant[TENANT_ID_MAX];        /* [A-Za-z0-9._-]{1,63}, unique */
        char class_name[CLASS_NAME_MAX];   /* [a-z0-9][a-z0-9_-]{0,62}, as tenant classes are named */
        int kind;                          /* StateKind */
        char vf[STATE_VF_MAX];             /* "0000:41:00.2" (lowercase) when kind = vf, unique; else "" */
        uint8_t mac[6];                    /* unicast */
        int vlan;                          /* -1 = none */
        char domain[STATE_DOMAIN_MAX];     /* libvirt domain name, "" = none */
        int numa_node;                     /* -1 = any */
        unsigned rx_usecs, tx_usecs;       /* per-guest coalescing override, if have_coalesce */
        bool have_coalesce;
        uint64_t seq;                      /* arrival order, for deterministic tie-breaks; unique, <= INT64_MAX */
} StateTenant;

typedef struct State {
        StateTenant *tenants;              /* file order */
        size_t n;
        uint64_t generation;               /* of the file it was loaded from / last saved to; 0 = never saved */
} State;

/* What was wrong with a file or a State, for the log; location 0 when not tied to a place. */
typedef struct StateError {
        unsigned line, column;             /* 1-based, column in bytes */
        char message[384];                 /* "line 12, column 15: what was wrong; what was expected" */
} StateError;

/*
 * Pure: parse and validate a state file's bytes (buf need not be NUL-terminated). Returns 0
 * and fills *ret (freed with state_done()); -EBADMSG if the bytes are not a valid state file
 * (syntax, unknown/missing/duplicate keys, wrong format or version, a field that breaks its
 * rule, a duplicate tenant, VF or seq, a count over the limits, a checksum mismatch), with
 * *ret_error saying what and where; -ENOMEM. ret untouched on failure; ret_error may be NULL.
 */
int state_parse(const char *buf, size_t size, State *ret, StateError *ret_error);

/*
 * The rules state_parse enforces, on a State in memory: 0, or -EINVAL with *ret_error
 * naming the tenant (by index and id) and the rule. ret_error may be NULL.
 */
int state_validate(const State *s, StateError *ret_error);

/*
 * Pure: the file's bytes for s (its generation as is), checksum included. Refuses with
 * -EINVAL a State that breaks a rule (see state_validate), so nothing is written that
 * would be read back as corrupt. *ret is NUL-terminated, *ret_size excludes the NUL;
 * the caller frees *ret. -ENOMEM.
 */
int state_format(const State *s, char **ret, size_t *ret_size, StateError *ret_error);

/*
 * Read dir_fd/name (use STATE_FILE_NAME). Leftover temporary files of a save that crashed
 * are removed first (best effort: they never hold anything that was acknowledged).
 *
 * 0: *ret filled (freed with state_done()).
 * -ENOENT: no file (a fresh host), or it was already moved aside by an earlier start.
 * -EBADMSG: the file is corrupt. It has been renamed to "NAME.corrupt-YYYYMMDDTHHMMSSZ"
 *   (with "-N" appended if that exists; never overwriting anything) and the rename made
 *   durable; *ret_aside (if non-NULL) is that name, relative to dir_fd, for the caller to free,
 *   and *ret_error says what was wrong. The caller logs both.
 * Any other negative errno (the file could not be read, or was corrupt but could not be moved
 *   aside, in which case *ret_error says so): nothing was moved, and the caller must not save
 *   over the file.
 * One process owns the directory; name is a plain file name not starting with '.'.
 */
int state_load(int dir_fd, const char *name, State *ret, char **ret_aside, StateError *ret_error);

/*
 * Write s to dir_fd/name with generation s->generation + 1, atomically and durably: a
 * temporary file in the same directory is written, fsync()ed and renamed over name, then
 * the directory is fsync()ed. Returns 0 only once the new file will survive a crash or
 * power cut; only then is s->generation incremented. After a crash at any point, the file
 * holds the previous or the new generation, never a mix. -EINVAL (with *ret_error) for a
 * State that breaks a rule, -EOVERFLOW if the generation cannot grow, or the errno of a
 * failed system call (the change must not be acknowledged; after a failed directory fsync
 * the file may already hold the new generation). ret_error may be NULL.
 */
int state_save(int dir_fd, const char *name, State *s, StateError *ret_error);

/* Free the tenants; s is empty afterwards. */
void state_done(State *s);
