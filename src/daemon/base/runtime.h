/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* runtime.h — the daemon's files in $RUNTIME_DIRECTORY: gone at reboot, kept across a crash */
#pragma once

#include <stdio.h>
#include <sys/types.h>

#include "sriovd/core/plan.h"
#include "sriovd/kernel/rootfs.h"

/*
 * Write the whole of $RUNTIME_DIRECTORY/name into a temporary file, and then rename it, so that
 * a reader never sees half of it. fill writes the content. Returns 0 without
 * RUNTIME_DIRECTORY, which is unset outside systemd unless a test sets it.
 */
typedef void (*RuntimeFill)(FILE *f, const void *userdata);
int runtime_file_write(const char *name, mode_t mode, RuntimeFill fill, const void *userdata);
/* Read the whole file. Returns -ENOENT when it is absent, or without RUNTIME_DIRECTORY. */
int runtime_file_read(const char *name, char **ret);
/* The same in dir. A NULL dir means $RUNTIME_DIRECTORY. */
int runtime_file_write_at(const char *dir, const char *name, mode_t mode, RuntimeFill fill, const void *userdata);
int runtime_file_read_at(const char *dir, const char *name, char **ret);

/*
 * Where systemd's RuntimeDirectory=sriovd puts the directory. Without RUNTIME_DIRECTORY, sriovd
 * --restore looks here.
 */
#define RUNTIME_DIR_DEFAULT "/run/sriovd"

/*
 * Hold $RUNTIME_DIRECTORY/lock with flock() for the life of the process. The lock allows one
 * sriovd daemon, and no sriovd --restore that would undo what a running daemon would only do
 * again. Returns 0 with *ret_fd set, or -EBUSY when another process holds the lock. Without
 * RUNTIME_DIRECTORY, *ret_fd is -1, because there is nothing to guard.
 */
int runtime_lock(int *ret_fd);
/*
 * The same in dir. A NULL dir means that there is nothing to guard. With create false, only an
 * existing lock file is tried, and nothing is written, for sriovd --dry-run. That returns
 * -ENOENT when there is no lock file, because no daemon ran since boot.
 */
int runtime_lock_at(const char *dir, bool create, int *ret_fd);
/* Remove $RUNTIME_DIRECTORY/name. Returns 0 also when it was not there. */
int runtime_file_remove(const char *name);
/*
 * Where sriovd keeps what it learned in this boot between runs, for the host at root whose state
 * is in state_dir. That is systemd's RuntimeDirectory= when it is set, and then the answer is
 * NULL, which the *_at() functions take for it. Otherwise it is the state directory, as for
 * --once from a shell. A fixture without a state directory of its own keeps nothing, and gets "".
 */
const char *runtime_memory_dir(RootFs *root, const char *state_dir);

/*
 * The IRQs that the kernel will not move, with EIO, are saved so that a later run does not ask
 * again. They include the timer, the cascade and the no-balancing IRQs. The file holds
 * "boot BOOT_ID", then one number per line. IRQ numbers change across boots, so a file of
 * another boot is ignored. The parser does no I/O. It returns -ESTALE for another boot, and
 * -EBADMSG when the text is malformed.
 */
void unmanaged_irqs_format(FILE *f, const char *boot_id, const unsigned *irqs, size_t n);
int unmanaged_irqs_parse(const char *text, const char *boot_id, unsigned **ret, size_t *ret_n);

/*
 * What sriovd changed on IRQ threads, so that a restart after a crash can still put them back.
 * Each line is "PID IRQ POLICY PRIORITY [NAME]". NAME is there for a NAPI or per-CPU kernel
 * thread, whose IRQ is 0, and absent for an IRQ thread. So files written without names still
 * read the same. The parser does no I/O and is strict. It returns -EBADMSG on a malformed
 * line, or on a NAME that is not printable, has spaces or is KTHREAD_NAME_MAX long. *ret is
 * sorted by PID.
 */
void saved_sched_format(FILE *f, const SavedSched *s, size_t n);
/* Orders SavedSched by PID, for qsort() and bsearch(). */

int saved_sched_cmp(const void *a, const void *b);
int saved_sched_parse(const char *text, SavedSched **ret, size_t *ret_n);
