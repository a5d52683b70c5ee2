/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * state-writer.h — journal appends written and fdatasync()ed on a thread of their own, so the
 * event loop goes on handling calls (the next group's) while the disk works.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "sriovd/macro.h"

typedef struct StateWriter StateWriter;

/* A write is done: 0 and the journal's size after it, or the errno (the append cut back). */
typedef void (*StateWriterDoneFn)(int error, uint64_t size, void *userdata);

/* The thread started, its completions dispatched by e. */
int state_writer_new(sd_event *e, StateWriter **ret);
/* Waits for the write in flight (its done fn runs) and stops the thread. */
StateWriter *state_writer_free(StateWriter *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(StateWriter *, state_writer_free);

/*
 * Append lines (taken, freed once written) to the journal fd and fdatasync() it on the thread;
 * done runs from the event loop once it is durable or has failed. One write at a time: -EBUSY
 * while one is in flight (nothing taken then). fd is the thread's until done runs.
 */
int state_writer_append(StateWriter *w, int fd, char *lines, size_t size, StateWriterDoneFn done, void *userdata);
bool state_writer_busy(const StateWriter *w);
/* Block until the write in flight is done and run its done fn now; nothing in flight: nothing. */
void state_writer_wait(StateWriter *w);
