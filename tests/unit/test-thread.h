/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-thread.h — a thread of the test's own process under a name of the tests' choosing (a vhost worker's, a vCPU's) */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "test.h"

typedef struct TestThread {
        pthread_t th;
        pthread_mutex_t lock;
        pid_t tid;                   /* its TID, once it runs */
        volatile bool stop;
} TestThread;

static void *test_thread_main(void *userdata) {
        TestThread *t = userdata;

        pthread_mutex_lock(&t->lock);
        t->tid = (pid_t) syscall(SYS_gettid);
        pthread_mutex_unlock(&t->lock);
        while (!t->stop)
                usleep(1000);
        return NULL;
}

/* t running, named name, its TID known. */
static inline void test_thread_start(TestThread *t, const char *name) {
        *t = (TestThread) { .lock = PTHREAD_MUTEX_INITIALIZER };
        ASSERT_EQ(pthread_create(&t->th, NULL, test_thread_main, t), 0);
        ASSERT_EQ(pthread_setname_np(t->th, name), 0);
        for (;;) {
                pthread_mutex_lock(&t->lock);
                pid_t tid = t->tid;
                pthread_mutex_unlock(&t->lock);
                if (tid > 0)
                        return;
                usleep(1000);
        }
}

/* t ended: its TID is gone. */
static inline void test_thread_stop(TestThread *t) {
        t->stop = true;
        ASSERT_EQ(pthread_join(t->th, NULL), 0);
}
