/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state.h — tenant allocations on disk: one checksummed JSON file, replaced atomically */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/plan.h"   /* TENANT_ID_MAX; CLASS_NAME_MAX through config.h */
#include "sriovd/shared/macro.h"

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
 * The checksum is the CRC32C, or Castagnoli CRC, of every byte of the file before the
 * "checksum" key, so that key must be the last. The file ends with "}\n". So a torn or
 * truncated file never passes. Every key is required, and "none" is written as null. An
 * operator who edits the file on purpose copies into it the checksum that the error message
 * reports for the content.
 */
#define STATE_FILE_NAME "allocations.json"
#define STATE_FORMAT "sriovd-allocations"
#define STATE_FORMAT_VERSION 1

/* Limits on what a file may hold. A file beyond them is corrupt. */
#define STATE_TENANTS_MAX 16384
#define STATE_FILE_SIZE_MAX (16u * 1024u * 1024u)
#define STATE_DOMAIN_MAX 256               /* bytes with the NUL, valid UTF-8, no control characters or '/' */
#define STATE_VF_MAX 16                    /* "0000:41:00.2" and NUL */
#define STATE_UUID_MAX 37                  /* "1b4e28ba-2fa1-11d2-883f-0016d3cca427" and NUL */
#define STATE_VLAN_MAX 4094                /* 0..4094, or -1 for none, written as null */
#define STATE_NUMA_NODE_MAX 1023           /* 0..1023, or -1 for any, written as null */
#define STATE_COALESCE_USECS_MAX 100000    /* the range tenant classes allow */
#define STATE_RT_CPUS_MAX 8                /* = ALLOC_RT_CPUS_MAX */
#define STATE_RT_CPU_MAX 1023              /* CPU numbers 0..1023, within CPUSET_MAX */

typedef enum StateKind {
        STATE_KIND_VIRTIO = 0,
        STATE_KIND_VF = 1,
        STATE_KIND_WAITING = 2,            /* "waiting": sriov-required, with no NIC until a VF is free */
} StateKind;

/* "virtio", "vf" or "waiting", or NULL for anything else. */
const char *state_kind_to_string(int kind);

/* One tenant's allocation as saved. It does not depend on the allocator's internals. */
typedef struct StateTenant {
        char tenant[TENANT_ID_MAX];        /* [A-Za-z0-9._-]{1,63}, unique */
        char class_name[CLASS_NAME_MAX];   /* [a-z0-9][a-z0-9_-]{0,62}, as tenant classes are named */
        int kind;                          /* StateKind */
        char vf[STATE_VF_MAX];             /* lowercase "0000:41:00.2" and unique when kind is vf; else "" */
        uint8_t mac[6];                    /* unicast */
        int vlan;                          /* -1 for none */
        char domain[STATE_DOMAIN_MAX];     /* the libvirt domain name, or "" for none */
        int numa_node;                     /* -1 for any */
        unsigned rx_usecs, tx_usecs;       /* the per-guest coalescing override, if have_coalesce */
        bool have_coalesce;
        uint64_t seq;                      /* arrival order, for deterministic ties; unique, at most INT64_MAX */
        uint16_t rt_cpus[STATE_RT_CPUS_MAX];   /* the guest's booked RT CPUs, vCPU 0's first; optional */
        unsigned n_rt_cpus;
        /* The next three are optional, and absent from the file when empty. */
        char pin_pf[STATE_VF_MAX];         /* the PF that its VF must be on, or "" */
        char domain_uuid[STATE_UUID_MAX];  /* the libvirt domain's UUID, canonical lower case, or "" */
        char owner[TENANT_ID_MAX];         /* [A-Za-z0-9._-]{1,63}, or "" */
        TxRates tx_rates;                  /* optional too: "min_tx_rate" and "max_tx_rate", each when asked */
} StateTenant;

typedef struct State {
        StateTenant *tenants;              /* in file order */
        size_t n;
        uint64_t generation;               /* of the file it was loaded from or last saved to; 0 if never saved */
} State;

/* What was wrong with a file or a State, for the log. The location is 0 when it is not tied to a place. */
typedef struct StateError {
        unsigned line, column;             /* counted from 1, the column in bytes */
        char message[384];                 /* "line 12, column 15: what was wrong; what was expected" */
} StateError;

/*
 * Parse and validate a state file's bytes, without I/O. buf need not be NUL-terminated. Returns
 * 0 and fills *ret, which is freed with state_done(). Returns -EBADMSG if the bytes are not a
 * valid state file, with *ret_error saying what is wrong and where. The causes are bad syntax,
 * unknown, missing or duplicate keys, a wrong format or version, a field that breaks its rule,
 * a duplicate tenant, VF or seq, a count over the limits, and a checksum mismatch. Returns
 * -ENOMEM when out of memory. ret is untouched on failure, and ret_error may be NULL.
 */
int state_parse(const char *buf, size_t size, State *ret, StateError *ret_error);

/*
 * Check the rules that state_parse() enforces on a State in memory. Returns 0, or -EINVAL with
 * *ret_error naming the tenant, by index and id, and the rule. ret_error may be NULL.
 */
int state_validate(const State *s, StateError *ret_error);

/*
 * Format the file's bytes for s, with its generation as it is and the checksum included, without
 * I/O. A State that breaks a rule of state_validate() is refused with -EINVAL, so that nothing
 * is written that would be read back as corrupt. *ret is NUL-terminated, *ret_size excludes the
 * NUL, and the caller frees *ret. Returns -ENOMEM when out of memory.
 */
int state_format(const State *s, char **ret, size_t *ret_size, StateError *ret_error);

/*
 * Read dir_fd/name, where name is STATE_FILE_NAME. The leftover temporary files of a save that
 * crashed are removed first. That is best effort, because they never hold anything that was
 * acknowledged. Returns:
 *  - 0 with *ret filled. Free it with state_done().
 *  - -ENOENT when there is no file. The host is fresh, or an earlier start moved the file aside.
 *  - -EBADMSG when the file is corrupt. It has been renamed to "NAME.corrupt-YYYYMMDDTHHMMSSZ",
 *    with "-N" appended if that name exists, so nothing is overwritten. The rename was made
 *    durable. If ret_aside is not NULL, *ret_aside is the new name, relative to dir_fd, for the
 *    caller to free. *ret_error says what was wrong. The caller logs both.
 *  - Any other negative errno when the file could not be read, or was corrupt but could not be
 *    moved aside. *ret_error says so in the second case. Nothing was moved, and the caller must
 *    not save over the file.
 * One process owns the directory. name is a plain file name that does not start with '.'.
 */
int state_load(int dir_fd, const char *name, State *ret, char **ret_aside, StateError *ret_error);
/*
 * Read the bytes of name in dir_fd, which the caller frees. name must be a regular file of at
 * most STATE_FILE_SIZE_MAX. Returns -ENOENT, -EINVAL when it is not a regular file, or -EFBIG.
 * Nothing is created, removed or moved.
 */
int state_read_file(int dir_fd, const char *name, char **ret, size_t *ret_size);

/*
 * Write s to dir_fd/name with generation s->generation + 1, atomically and durably. A temporary
 * file in the same directory is written, synced with fsync() and renamed over name. Then the
 * directory is synced. Returns 0 only once the new file will survive a crash or a power cut,
 * and only then is s->generation incremented. After a crash at any point, the file holds the
 * previous or the new generation, never a mix. Returns -EINVAL, with *ret_error, for a State
 * that breaks a rule, and -EOVERFLOW if the generation cannot grow. Otherwise it returns the
 * errno of a failed system call. Then the change must not be acknowledged. After a failed
 * directory fsync, the file may already hold the new generation. ret_error may be NULL.
 */
int state_save(int dir_fd, const char *name, State *s, StateError *ret_error);
/*
 * Write the bytes of state_save(), or of any other file that sriovd replaces whole, such as the
 * metrics file. ".NAME.tmp-RANDOM" is created in dir_fd with mode, written, synced and renamed
 * over name, and then the directory is synced. A reader sees the old file or the new one, never
 * a mix. On failure, the temporary file is removed and the errno of the failed system call is
 * returned. After a failed directory fsync, the file may already be the new one. Returns -EINVAL
 * for an invalid name.
 */
int state_file_replace(int dir_fd, const char *name, const char *buf, size_t size, mode_t mode);

/*
 * The journal, STATE_JOURNAL_NAME, sits beside the file. It has one line per acknowledged change
 * since the file was last written whole, and each line has its own checksum:
 *
 *   {"format":"sriovd-journal","version":1,"base":42,"set":[TENANT,...],"released":["id",...],
 *    "checksum":"crc32c:..."}
 *
 * Each change is one line, without blanks. A line with ", " and ": " between the members reads
 * the same, so journals that older versions of sriovd wrote still load.
 *
 * A change costs one short appended line and one fdatasync(), instead of a rewrite of every
 * tenant. Now and then the owner rewrites the whole file with state_save(), and empties the
 * journal. base is the generation of the file that the change applies to. Lines of an older
 * base are left over from a rewrite that crashed before the journal was emptied, and they are
 * skipped. Only the last line can be torn, by an append that never completed and so was never
 * acknowledged. A torn line is dropped. A whole line that does not parse, or a change that
 * breaks a rule of the file, is corruption.
 */
#define STATE_JOURNAL_NAME "allocations.journal"

typedef struct StateChange {
        const StateTenant *set;                  /* the tenants added or replaced, whole */
        size_t n_set;
        const char (*released)[TENANT_ID_MAX];   /* the tenants that are gone */
        size_t n_released;
} StateChange;

typedef struct StateReplay {
        size_t applied, skipped;                 /* the lines applied, and the lines of an older base */
        bool torn;                               /* the last line was torn and dropped */
} StateReplay;

/*
 * Format the line for change c against a file of generation base, "\n" included, without I/O.
 * Returns -EINVAL, with *ret_error, for a tenant that breaks a rule or for an invalid id, and
 * -ENOMEM when out of memory.
 */
int state_journal_format(uint64_t base, const StateChange *c, char **ret, size_t *ret_size, StateError *ret_error);

/*
 * Apply the journal's bytes to s, the file it belongs to, in O((n + m) log(n + m)) and without
 * I/O. Returns 0 with s updated, and s is then in id order. Returns -EBADMSG for a corrupt line,
 * which *ret_error locates by line and column in the journal, or for changes that together break
 * a rule of the file. The longest run of lines before the problem that keeps the rules is
 * applied, and ret->applied counts them. Returns -ENOMEM with s unchanged.
 */
int state_journal_replay(const char *buf, size_t size, State *s, StateReplay *ret, StateError *ret_error);

/*
 * Read dir_fd/name and replay it onto s. A missing journal counts as an empty one. On -EBADMSG,
 * the journal is corrupt. It was moved aside as state_load() does with the file, and *ret_aside
 * names it. The changes before the corrupt line were applied.
 */
int state_journal_load(int dir_fd, const char *name, State *s, StateReplay *ret, char **ret_aside,
                       StateError *ret_error);

/*
 * Move the journal aside unread, because its file was corrupt and what it changes is unknown.
 * Returns 1 when it was moved, with *ret_aside, and 0 when there was none.
 */
int state_journal_set_aside(int dir_fd, const char *name, char **ret_aside);
/* Open the journal for appending, creating it durably. The caller closes *ret_fd. */
int state_journal_open(int dir_fd, const char *name, int *ret_fd);
/*
 * Append one change and sync it with fdatasync(). Returns 0 only once the change survives a
 * crash. On failure, the journal is cut back to where it was. If even that fails, it returns
 * -EIO, and the whole file must be written before the next append.
 */
int state_journal_append(int fd, uint64_t base, const StateChange *c, StateError *ret_error);
/*
 * Append lines of state_journal_format(), one or many, each with its "\n", with one
 * fdatasync(). That is what a group of changes costs. On failure, the journal is cut back as
 * state_journal_append() does.
 */
int state_journal_write(int fd, const char *lines, size_t size);
/* Empty the journal, once the whole file was written. */

int state_journal_reset(int fd);

/* Free the tenants; s is empty afterwards. */
void state_done(State *s);
