/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state.h — tenant allocations on disk: one checksummed JSON file, replaced atomically */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
#define STATE_RT_CPUS_MAX 8                /* = ALLOC_RT_CPUS_MAX */
#define STATE_RT_CPU_MAX 1023              /* CPU numbers 0..1023 (CPUSET_MAX) */

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
        uint16_t rt_cpus[STATE_RT_CPUS_MAX];   /* its guest's booked RT CPUs, vCPU 0's first ("rt_cpus", optional) */
        unsigned n_rt_cpus;
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
/* name's bytes in dir_fd (freed by the caller), a regular file of at most STATE_FILE_SIZE_MAX:
 * -ENOENT, -EINVAL (not a regular file), -EFBIG; nothing is created, removed or moved. */
int state_read_file(int dir_fd, const char *name, char **ret, size_t *ret_size);

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
/*
 * The bytes of state_save() and of any other file sriovd replaces whole (the metrics
 * file): ".NAME.tmp-RANDOM" created in dir_fd with mode, written, fsync()ed, renamed over
 * name, the directory fsync()ed. A reader sees the old file or the new, never a mix.
 * The errno of the failed system call (the temporary file removed); after a failed
 * directory fsync the file may already be the new one. -EINVAL for an invalid name.
 */
int state_file_replace(int dir_fd, const char *name, const char *buf, size_t size, mode_t mode);

/*
 * The journal beside the file (STATE_JOURNAL_NAME): one line per acknowledged change since the
 * file was last written whole, each line checksummed on its own:
 *
 *   {"format":"sriovd-journal","version":1,"base":42,"set":[TENANT,...],"released":["id",...],
 *    "checksum":"crc32c:..."}
 *
 * (one line, without blanks; lines with ", " and ": " between members, as sriovd wrote them
 * before it used json-c, read the same)
 *
 * A change costs one short appended line and one fdatasync() instead of rewriting every tenant;
 * the owner rewrites the file whole (state_save) now and then and empties the journal. base is
 * the generation of the file the change applies to: lines of an older base are left over from
 * a rewrite that crashed before the journal was emptied, and are skipped. Only the last line
 * can be torn (an append that never completed, so never acknowledged): it is dropped. A whole
 * line that does not parse, or a change that breaks a rule of the file, is corruption.
 */
#define STATE_JOURNAL_NAME "allocations.journal"

typedef struct StateChange {
        const StateTenant *set;                  /* tenants added or replaced, whole */
        size_t n_set;
        const char (*released)[TENANT_ID_MAX];   /* tenants gone */
        size_t n_released;
} StateChange;

typedef struct StateReplay {
        size_t applied, skipped;                 /* lines applied; lines of an older base */
        bool torn;                               /* the last line was torn and dropped */
} StateReplay;

/* Pure: the line for change c against a file of generation base, "\n" included. -EINVAL (with
 * *ret_error) for a tenant that breaks a rule or an invalid id; -ENOMEM. */
int state_journal_format(uint64_t base, const StateChange *c, char **ret, size_t *ret_size, StateError *ret_error);

/*
 * Pure: apply the journal's bytes to s (the file it belongs to), in O((n + m) log(n + m)).
 * 0: s updated (in id order now). -EBADMSG: a corrupt line, said in *ret_error (line and column
 * in the journal), or changes that together break a rule of the file; the longest run of lines
 * before it that keeps the rules is applied (ret->applied); -ENOMEM: s unchanged.
 */
int state_journal_replay(const char *buf, size_t size, State *s, StateReplay *ret, StateError *ret_error);

/*
 * Read and replay dir_fd/name onto s. A missing journal is an empty one. -EBADMSG: corrupt;
 * moved aside as state_load() does with the file (*ret_aside), what came before applied.
 */
int state_journal_load(int dir_fd, const char *name, State *s, StateReplay *ret, char **ret_aside,
                       StateError *ret_error);

/* Move it aside unread (its file was corrupt, so what it changes is unknown): 1 moved, with
 * *ret_aside; 0 there was none. */
int state_journal_set_aside(int dir_fd, const char *name, char **ret_aside);
/* Open (creating it, durably) for appending; *ret_fd is the caller's to close. */
int state_journal_open(int dir_fd, const char *name, int *ret_fd);
/* Append one change and fdatasync(): 0 only once it survives a crash. On failure the journal is
 * cut back to where it was; if even that fails, -EIO: write the file whole before appending again. */
int state_journal_append(int fd, uint64_t base, const StateChange *c, StateError *ret_error);
/* Lines of state_journal_format() (one or many, each with its "\n") appended with one fdatasync():
 * what a group of changes costs. Cut back on failure as state_journal_append() is. */
int state_journal_write(int fd, const char *lines, size_t size);
/* Empty it, once the file was written whole. */
int state_journal_reset(int fd);

/* Free the tenants; s is empty afterwards. */
void state_done(State *s);
