/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * state-writer.h — the state's writes (journal appends, the file rewritten whole) done on a
 * thread of their own, so the event loop goes on handling calls (the next group's) while the
 * disk works.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "sriovd/macro.h"

typedef struct StateWriter StateWriter;

/* What the thread runs: job is its own until done; returns its outcome. */
typedef int (*StateWriterJobFn)(void *job);
/* A job is done, back on the loop: its outcome, the job (freed with free_job once this returns). */
typedef void (*StateWriterDoneFn)(int result, void *job, void *userdata);

/* The thread started, its completions dispatched by e. */
int state_writer_new(sd_event *e, StateWriter **ret);
/* Waits for the write in flight (its done fn runs) and stops the thread. */
StateWriter *state_writer_free(StateWriter *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(StateWriter *, state_writer_free);

/*
 * Run fn(job) on the thread; done runs from the event loop once it returned, then free_job(job).
 * One job at a time: -EBUSY while one is in flight (nothing taken then). Whatever the job writes
 * (its fds) is the thread's until done runs.
 */
int state_writer_submit(StateWriter *w, StateWriterJobFn fn, void *job, void (*free_job)(void *job),
                        StateWriterDoneFn done, void *userdata);
bool state_writer_busy(const StateWriter *w);
/* Block until the write in flight is done and run its done fn now; nothing in flight: nothing. */
void state_writer_wait(StateWriter *w);
