/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state-writer.c — the state's writes and fsyncs, on a thread of their own */

/*
 * A group's write costs one fdatasync(). That takes about 0.2 ms on a quiet disk and several ms
 * on a busy one. A rewrite of the whole file also costs its formatting, which takes milliseconds
 * at thousands of tenants. On the event loop, every call that arrived meanwhile would wait for
 * that write, and then for its own group's write. So the loop hands the job to one thread, and
 * goes on applying the next group's calls in memory. An eventfd brings the outcome back, and
 * only then are the group's replies sent. One job is in flight at a time. So lines reach the
 * disk in the order they were made, and a failed line is cut back before anything follows it.
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sriovd/shared/util.h"
#include "state-writer.h"

typedef enum { JOB_IDLE, JOB_QUEUED, JOB_DONE } JobState;

struct StateWriter {
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t wake;      /* wakes the thread for a job, or to stop */
        pthread_cond_t done;      /* tells state_writer_wait() that the job is done */
        int efd;
        sd_event_source *source;
        bool stop, started;
        bool in_flight;           /* used by the loop only; set by submit, cleared once the done function has run */
        /* The job. state and result are only touched under the lock. */
        JobState state;
        StateWriterJobFn fn;
        void *job;
        void (*free_job)(void *job);
        int result;
        StateWriterDoneFn done_fn;
        void *userdata;
};

static void *writer_main(void *userdata) {
        StateWriter *w = userdata;

        pthread_mutex_lock(&w->lock);
        for (;;) {
                while (w->state != JOB_QUEUED && !w->stop)
                        pthread_cond_wait(&w->wake, &w->lock);
                if (w->state != JOB_QUEUED)
                        break;
                pthread_mutex_unlock(&w->lock);

                int r = w->fn(w->job);

                pthread_mutex_lock(&w->lock);
                w->result = r;
                w->state = JOB_DONE;
                pthread_cond_broadcast(&w->done);
                /* The eventfd counts, so a wakeup that the loop has not read yet does no harm. */
                (void) eventfd_write(w->efd, 1);
        }
        pthread_mutex_unlock(&w->lock);
        return NULL;
}

/*
 * Hand the job's outcome to its done function, on the loop's thread. The job is taken out
 * first, because the done function may submit the next one.
 */
static void finish(StateWriter *w) {
        void (*free_job)(void *job);
        StateWriterDoneFn fn;
        void *userdata, *job;
        int result;

        pthread_mutex_lock(&w->lock);
        if (w->state != JOB_DONE) {
                pthread_mutex_unlock(&w->lock);
                return;
        }
        fn = w->done_fn;
        userdata = w->userdata;
        result = w->result;
        job = TAKE_PTR(w->job);
        free_job = w->free_job;
        w->state = JOB_IDLE;
        pthread_mutex_unlock(&w->lock);
        w->in_flight = false;
        if (fn)
                fn(result, job, userdata);
        if (free_job)
                free_job(job);
}

static int on_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        eventfd_t n;

        (void) eventfd_read(fd, &n);
        finish(userdata);
        return 0;
}

int state_writer_new(sd_event *e, StateWriter **ret) {
        _cleanup_(state_writer_freep) StateWriter *w = NULL;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->efd = -EBADF;
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->wake, NULL);
        pthread_cond_init(&w->done, NULL);
        w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (w->efd < 0)
                return negative_errno();
        r = sd_event_add_io(e, &w->source, w->efd, EPOLLIN, on_done, w);
        if (r < 0)
                return r;
        /* This source is above the bus, so a durable group's replies go out before more calls are read. */
        (void) sd_event_source_set_priority(w->source, SD_EVENT_PRIORITY_NORMAL - 1);
        (void) sd_event_source_set_description(w->source, "state-writer");
        r = -pthread_create(&w->thread, NULL, writer_main, w);
        if (r < 0)
                return r;
        w->started = true;
        *ret = TAKE_PTR(w);
        return 0;
}

StateWriter *state_writer_free(StateWriter *w) {
        if (!w)
                return NULL;
        if (w->started) {
                state_writer_wait(w);
                pthread_mutex_lock(&w->lock);
                w->stop = true;
                pthread_cond_signal(&w->wake);
                pthread_mutex_unlock(&w->lock);
                pthread_join(w->thread, NULL);
        }
        sd_event_source_disable_unref(w->source);
        if (w->efd >= 0)
                close(w->efd);
        pthread_cond_destroy(&w->done);
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
}

bool state_writer_busy(const StateWriter *w) {
        return w && w->in_flight;
}

int state_writer_submit(StateWriter *w, StateWriterJobFn fn, void *job, void (*free_job)(void *job),
                        StateWriterDoneFn done, void *userdata) {
        if (state_writer_busy(w))
                return -EBUSY;
        pthread_mutex_lock(&w->lock);
        w->fn = fn;
        w->job = job;
        w->free_job = free_job;
        w->done_fn = done;
        w->userdata = userdata;
        w->state = JOB_QUEUED;
        pthread_cond_signal(&w->wake);
        pthread_mutex_unlock(&w->lock);
        w->in_flight = true;
        return 0;
}

void state_writer_wait(StateWriter *w) {
        if (!state_writer_busy(w))
                return;
        pthread_mutex_lock(&w->lock);
        while (w->state == JOB_QUEUED)
                pthread_cond_wait(&w->done, &w->lock);
        pthread_mutex_unlock(&w->lock);
        finish(w);   /* The eventfd's count stays, and on_done() then finds nothing to finish. */

}
