/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* runtime.h — the daemon's files in $RUNTIME_DIRECTORY: gone at reboot, kept across a crash */
#pragma once

#include <stdio.h>
#include <sys/types.h>

#include "sriovd/plan.h"

/*
 * Write $RUNTIME_DIRECTORY/name whole (temporary file, then rename): a reader
 * never sees half of it. fill writes the content. 0 without RUNTIME_DIRECTORY
 * (not under systemd, and no test asked for it).
 */
typedef void (*RuntimeFill)(FILE *f, const void *userdata);
int runtime_file_write(const char *name, mode_t mode, RuntimeFill fill, const void *userdata);
/* The whole file; -ENOENT when absent or without RUNTIME_DIRECTORY. */
int runtime_file_read(const char *name, char **ret);
/* The same in dir (NULL = $RUNTIME_DIRECTORY). */
int runtime_file_write_at(const char *dir, const char *name, mode_t mode, RuntimeFill fill, const void *userdata);
int runtime_file_read_at(const char *dir, const char *name, char **ret);

/* Where systemd's RuntimeDirectory=sriovd puts it; sriovd --restore looks here without RUNTIME_DIRECTORY. */
#define RUNTIME_DIR_DEFAULT "/run/sriovd"

/*
 * Hold $RUNTIME_DIRECTORY/lock (flock) for the life of the process: one sriovd daemon, and no
 * sriovd --restore undoing what a running daemon would only redo. 0 with *ret_fd set (-1
 * without RUNTIME_DIRECTORY: nothing to guard), -EBUSY when another process holds it.
 */
int runtime_lock(int *ret_fd);
/*
 * The same in dir (NULL: nothing to guard). create false: only an existing lock file is tried,
 * nothing is written (sriovd --dry-run); -ENOENT when there is none (no daemon ran since boot).
 */
int runtime_lock_at(const char *dir, bool create, int *ret_fd);
/* Remove $RUNTIME_DIRECTORY/name; 0 also when it was not there. */
int runtime_file_remove(const char *name);

/*
 * IRQs the kernel will not move (EIO: the timer, the cascade, no-balancing
 * ones), so a later run does not ask again: "boot BOOT_ID" then one number per
 * line. IRQ numbers change across boots, so a file of another boot is ignored.
 * The parser is pure: -ESTALE for another boot, -EBADMSG when malformed.
 */
void unmanaged_irqs_format(FILE *f, const char *boot_id, const unsigned *irqs, size_t n);
int unmanaged_irqs_parse(const char *text, const char *boot_id, unsigned **ret, size_t *ret_n);

/*
 * What sriovd changed on IRQ threads, so that a restart after a crash can still
 * put them back: "PID IRQ POLICY PRIORITY [NAME]" per line, NAME for a NAPI or per-CPU
 * kernel thread (IRQ 0), absent for an IRQ thread (files from before NAME read as before).
 * The parser is pure and strict (-EBADMSG on a malformed line, or on a NAME that is not
 * printable, has spaces or is KTHREAD_NAME_MAX long); *ret sorted by PID.
 */
void saved_sched_format(FILE *f, const SavedSched *s, size_t n);
/* Orders SavedSched by PID (qsort/bsearch). */
int saved_sched_cmp(const void *a, const void *b);
int saved_sched_parse(const char *text, SavedSched **ret, size_t *ret_n);
