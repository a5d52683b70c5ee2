/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state-writer.h — the state's writes, done on a thread of their own */

/*
 * The writes are journal appends and rewrites of the whole file. They run on their own thread,
 * so that the event loop goes on handling the next group's calls while the disk works.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "sriovd/shared/macro.h"

typedef struct StateWriter StateWriter;

/* What the thread runs. The job belongs to the thread until it is done. Returns the job's outcome. */
typedef int (*StateWriterJobFn)(void *job);
/*
 * Called back on the loop when a job is done, with its outcome and the job. free_job frees the
 * job once this returns.
 */
typedef void (*StateWriterDoneFn)(int result, void *job, void *userdata);

/* Start the thread. e dispatches its completions. */
int state_writer_new(sd_event *e, StateWriter **ret);
/* Wait for the write in flight, whose done function then runs, and stop the thread. */
StateWriter *state_writer_free(StateWriter *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(StateWriter *, state_writer_free);

/*
 * Run fn(job) on the thread. Once it returns, done runs from the event loop, and then
 * free_job(job) runs. There is one job at a time. While one is in flight, this returns -EBUSY
 * and takes nothing. The fds that the job writes belong to the thread until done runs.
 */
int state_writer_submit(StateWriter *w, StateWriterJobFn fn, void *job, void (*free_job)(void *job),
                        StateWriterDoneFn done, void *userdata);
bool state_writer_busy(const StateWriter *w);
/* Block until the write in flight is done, and run its done function now. With nothing in flight, do nothing. */

void state_writer_wait(StateWriter *w);
