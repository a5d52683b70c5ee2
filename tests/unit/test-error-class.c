/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-error-class.c — the table of what kernel errors mean: each row, its shape and its defaults */

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "sriovd/core/error-class.h"
#include "sriovd/shared/macro.h"
#include "test.h"

/*
 * Each row of the table, through at least one kind and errno that it answers. The index is the
 * row's place in the table. A row that no pair reaches is dead, and the last check finds it.
 */
TEST(each_row) {
        static const struct {
                size_t row;
                ActionKind kind;
                int error;
                ErrorClass class;
                const char *meaning;    /* the start of the meaning */
        } cases[] = {
                { 0, ACTION_SET_IRQ_AFFINITY, ENOENT, ERROR_TRANSIENT, "the IRQ went away (device reset or" },
                { 1, ACTION_SET_IRQ_AFFINITY, EBUSY, ERROR_TRANSIENT, "the IRQ is being set up or moved;" },
                { 2, ACTION_SET_IRQ_AFFINITY, EINVAL, ERROR_TRANSIENT, "the IRQ is being set up or moved;" },
                { 3, ACTION_SET_IRQ_AFFINITY, ERANGE, ERROR_TRANSIENT, "the IRQ is being set up or moved;" },
                { 4, ACTION_SET_IRQ_AFFINITY, ENOMEM, ERROR_TRANSIENT, "the IRQ is being set up or moved;" },
                { 5, ACTION_SET_IRQ_AFFINITY, EAGAIN, ERROR_TRANSIENT, "the IRQ is being set up or moved;" },
                { 6, ACTION_SET_IRQ_AFFINITY, ENOSPC, ERROR_FATAL, "vector space on the target CPUs is" },
                { 7, ACTION_SET_IRQ_AFFINITY, EIO, ERROR_UNMANAGED, "kernel-managed IRQ: its affinity is" },
                { 8, ACTION_SET_IRQ_AFFINITY, EPERM, ERROR_FATAL, "not permitted: sriovd needs root" },
                { 9, ACTION_SET_IRQ_AFFINITY, EACCES, ERROR_FATAL, "not permitted: sriovd needs root" },
                { 10, ACTION_SET_IRQ_AFFINITY, EPIPE, ERROR_UNMANAGED, "the kernel refuses this IRQ's" },
                { 11, ACTION_SET_IRQ_THREAD, ESRCH, ERROR_TRANSIENT, "the handler thread is gone (driver" },
                { 12, ACTION_SET_IRQ_THREAD, EPERM, ERROR_FATAL, "not permitted: sriovd needs" },
                { 13, ACTION_SET_IRQ_THREAD, EINVAL, ERROR_FATAL, "the scheduler refuses this priority" },
                { 14, ACTION_SET_IRQ_THREAD, EPIPE, ERROR_UNMANAGED, "the scheduler refuses changes to this" },
                { 15, ACTION_SET_NAPI_PIN, ESRCH, ERROR_TRANSIENT, "the kernel thread is gone (threaded" },
                { 15, ACTION_SET_NAPI_SCHED, ESRCH, ERROR_TRANSIENT, "the kernel thread is gone (threaded" },
                { 15, ACTION_SET_KTHREAD_SCHED, ESRCH, ERROR_TRANSIENT, "the kernel thread is gone (threaded" },
                { 16, ACTION_SET_NAPI_PIN, EPERM, ERROR_FATAL, "not permitted: sriovd needs" },
                { 16, ACTION_SET_NAPI_SCHED, EPERM, ERROR_FATAL, "not permitted: sriovd needs" },
                { 16, ACTION_SET_KTHREAD_SCHED, EPERM, ERROR_FATAL, "not permitted: sriovd needs" },
                { 17, ACTION_SET_NAPI_PIN, EINVAL, ERROR_FATAL, "the scheduler refuses this priority or" },
                { 17, ACTION_SET_NAPI_SCHED, EINVAL, ERROR_FATAL, "the scheduler refuses this priority or" },
                { 17, ACTION_SET_KTHREAD_SCHED, EINVAL, ERROR_FATAL, "the scheduler refuses this priority or" },
                { 18, ACTION_SET_NAPI_PIN, EPIPE, ERROR_UNMANAGED, "the scheduler refuses changes to this" },
                { 18, ACTION_SET_NAPI_SCHED, EPIPE, ERROR_UNMANAGED, "the scheduler refuses changes to this" },
                { 18, ACTION_SET_KTHREAD_SCHED, EPIPE, ERROR_UNMANAGED, "the scheduler refuses changes to this" },
                { 19, ACTION_SET_NAPI_THREADED, ENOENT, ERROR_UNMANAGED, "this kernel has no threaded NAPI" },
                { 20, ACTION_SET_NAPI_THREADED, EOPNOTSUPP, ERROR_UNMANAGED, "the netdev has no NAPI instances to" },
                { 21, ACTION_SET_NAPI_PARAMS, EOPNOTSUPP, ERROR_UNMANAGED, "unavailable: this kernel has no" },
                { 22, ACTION_SET_NAPI_PARAMS, ENOENT, ERROR_TRANSIENT, "the NAPI is gone (channel change or" },
                { 23, ACTION_SET_NAPI_PARAMS, EIO, ERROR_UNMANAGED, "the kernel accepted but reads back" },
                { 24, ACTION_SET_NAPI_PARAMS, EINVAL, ERROR_FATAL, "the kernel refuses this value" },
                { 25, ACTION_SET_NAPI_PARAMS, ERANGE, ERROR_FATAL, "the kernel refuses this value" },
                { 26, ACTION_SET_NAPI_PARAMS, ENODEV, ERROR_TRANSIENT, "the netdev went away (driver reload)" },
                { 27, ACTION_SET_NAPI_PARAMS, EPERM, ERROR_FATAL, "not permitted: sriovd needs" },
                { 28, ACTION_SET_NAPI_PARAMS, EACCES, ERROR_FATAL, "not permitted: sriovd needs" },
                { 29, ACTION_SET_CHANNELS, EINVAL, ERROR_FATAL, "the driver refuses this channel count" },
                { 30, ACTION_SET_CHANNELS, EBUSY, ERROR_TRANSIENT, "the driver cannot change channels now" },
                { 31, ACTION_SET_VF_LINK, EOPNOTSUPP, ERROR_UNMANAGED, "the PF driver cannot set this on its" },
                { 32, ACTION_SET_VF_LINK, EINVAL, ERROR_FATAL, "the PF driver refuses the value (VLAN," },
                { 33, ACTION_SET_VF_LINK, ERANGE, ERROR_FATAL, "the PF driver refuses the value (VLAN," },
                { 34, ACTION_SET_VF_LINK, ENODEV, ERROR_TRANSIENT, "the PF netdev went away (driver" },
                { 35, ACTION_SET_VF_LINK, ENOENT, ERROR_TRANSIENT, "the PF netdev went away (driver" },
                { 36, ACTION_SET_VF_LINK, EPERM, ERROR_FATAL, "not permitted: sriovd needs" },
                { 37, ACTION_SET_VF_LINK, EACCES, ERROR_FATAL, "not permitted: sriovd needs" },
                { 38, ACTION_SET_COALESCE, EINVAL, ERROR_UNMANAGED, "the driver refuses a value (what it" },
                { 39, ACTION_SET_CHANNELS, EOPNOTSUPP, ERROR_UNMANAGED, "the driver does not support this;" },
                { 39, ACTION_SET_COALESCE, EOPNOTSUPP, ERROR_UNMANAGED, "the driver does not support this;" },
                { 39, ACTION_SET_OFFLOADS, EOPNOTSUPP, ERROR_UNMANAGED, "the driver does not support this;" },
                { 40, ACTION_SET_CHANNELS, EIO, ERROR_UNMANAGED, "the driver accepted but reads back" },
                { 40, ACTION_SET_COALESCE, EIO, ERROR_UNMANAGED, "the driver accepted but reads back" },
                { 40, ACTION_SET_OFFLOADS, EIO, ERROR_UNMANAGED, "the driver accepted but reads back" },
                { 41, ACTION_SET_OFFLOADS, EINVAL, ERROR_FATAL, "the driver refuses this value" },
                { 42, ACTION_SET_CHANNELS, ERANGE, ERROR_FATAL, "the driver refuses this value" },
                { 42, ACTION_SET_COALESCE, ERANGE, ERROR_FATAL, "the driver refuses this value" },
                { 42, ACTION_SET_OFFLOADS, ERANGE, ERROR_FATAL, "the driver refuses this value" },
                { 43, ACTION_SET_CHANNELS, ENODEV, ERROR_TRANSIENT, "the netdev went away (driver reload)" },
                { 43, ACTION_SET_COALESCE, ENODEV, ERROR_TRANSIENT, "the netdev went away (driver reload)" },
                { 43, ACTION_SET_OFFLOADS, ENODEV, ERROR_TRANSIENT, "the netdev went away (driver reload)" },
                { 44, ACTION_SET_CHANNELS, EPERM, ERROR_FATAL, "not permitted: sriovd needs" },
                { 44, ACTION_SET_COALESCE, EPERM, ERROR_FATAL, "not permitted: sriovd needs" },
                { 44, ACTION_SET_OFFLOADS, EPERM, ERROR_FATAL, "not permitted: sriovd needs" },
                { 45, ACTION_SET_CHANNELS, EACCES, ERROR_FATAL, "not permitted: sriovd needs" },
                { 45, ACTION_SET_COALESCE, EACCES, ERROR_FATAL, "not permitted: sriovd needs" },
                { 45, ACTION_SET_OFFLOADS, EACCES, ERROR_FATAL, "not permitted: sriovd needs" },
                { 46, ACTION_SET_VF_DRIVER, ENOENT, ERROR_FATAL, "the driver is not loaded (load" },
                { 47, ACTION_SET_VF_DRIVER, ENODEV, ERROR_TRANSIENT, "the VF went away (PF reset or driver" },
                { 48, ACTION_SET_VF_DRIVER, EINVAL, ERROR_FATAL, "the driver refuses the VF (for" },
                { 49, ACTION_SET_NUM_VFS, EBUSY, ERROR_TRANSIENT, "VFs are in use or the PF is resetting;" },
                { 50, ACTION_SET_NUM_VFS, ENOSPC, ERROR_FATAL, "MSI-X vector or PCI bus number space" },
                { 51, ACTION_SET_NUM_VFS, ERANGE, ERROR_FATAL, "the PF refuses this VF count" },
                { 52, ACTION_SET_NUM_VFS, EINVAL, ERROR_FATAL, "the PF refuses this VF count" },
                { 53, ACTION_SET_NUM_VFS, ENOENT, ERROR_TRANSIENT, "the PF or its driver went away (reload" },
                { 54, ACTION_SET_NUM_VFS, ENODEV, ERROR_TRANSIENT, "the PF or its driver went away (reload" },
                { 55, ACTION_SET_NUM_VFS, EOPNOTSUPP, ERROR_UNMANAGED, "the PF driver does not support" },
                { 56, ACTION_SET_NUM_VFS, ENOSYS, ERROR_UNMANAGED, "the PF driver does not support" },
                { 57, ACTION_SET_CPU_IDLE, ENOENT, ERROR_TRANSIENT, "the CPU went offline or lost the file;" },
                { 57, ACTION_SET_CPU_GOVERNOR, ENOENT, ERROR_TRANSIENT, "the CPU went offline or lost the file;" },
                { 58, ACTION_SET_CPU_GOVERNOR, EINVAL, ERROR_FATAL, "the kernel does not have this governor" },
                { 59, ACTION_SET_CPU_IDLE, EBUSY, ERROR_TRANSIENT, "busy; retried on the next cycle" },
                { 60, ACTION_SET_AUTOPROBE, EPERM, ERROR_FATAL, "not permitted: sriovd needs root" },
                { 61, ACTION_SET_AUTOPROBE, EACCES, ERROR_FATAL, "not permitted: sriovd needs root" },
                { 62, ACTION_SET_AUTOPROBE, EROFS, ERROR_FATAL, "read-only file system" },
                { 63, ACTION_SET_AUTOPROBE, ENOENT, ERROR_UNMANAGED, "this kernel does not have the" },
                { 64, ACTION_SET_AUTOPROBE, EAGAIN, ERROR_TRANSIENT, "busy; retried on the next cycle" },
                { 65, ACTION_SET_AUTOPROBE, EINTR, ERROR_TRANSIENT, "busy; retried on the next cycle" },
                { 66, ACTION_SET_AUTOPROBE, EBUSY, ERROR_TRANSIENT, "busy; retried on the next cycle" },
                { 67, ACTION_SET_AUTOPROBE, EIO, ERROR_UNMANAGED, "the kernel manages this itself" },
                { 68, ACTION_SET_AUTOPROBE, EPIPE, ERROR_TRANSIENT, "unexpected kernel error" },
        };
        size_t n;
        const ErrorClassRow *table = error_class_table(&n);
        bool seen[128] = {};

        ASSERT(n <= ELEMENTSOF(seen));
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const ErrorClassRow *row = error_class_lookup(cases[i].kind, -cases[i].error);
                ErrorInfo e = kernel_error_classify(cases[i].kind, -cases[i].error);

                ASSERT_EQ(row - table, cases[i].row);
                ASSERT_EQ(e.class, cases[i].class);
                ASSERT_EQ(strncmp(e.meaning, cases[i].meaning, strlen(cases[i].meaning)), 0);
                /* A positive errno means the same. */
                ASSERT(error_class_lookup(cases[i].kind, cases[i].error) == row);
                seen[cases[i].row] = true;
        }
        for (size_t i = 0; i < n; i++)
                ASSERT(seen[i]);
}

TEST(table_shape) {
        size_t n;
        const ErrorClassRow *table = error_class_table(&n);

        ASSERT(n > 0);
        /* The last row answers every pair that no other row does. */
        ASSERT_EQ(table[n - 1].kinds, 0);
        ASSERT_EQ(table[n - 1].error, 0);
        for (size_t i = 0; i < n; i++) {
                ASSERT(table[i].meaning && table[i].meaning[0]);
                ASSERT(table[i].error >= 0 && table[i].error <= 133);
                ASSERT(table[i].class == ERROR_TRANSIENT || table[i].class == ERROR_UNMANAGED ||
                       table[i].class == ERROR_FATAL);
                /* A kind's rows name each errno once. */
                for (size_t j = 0; j < i; j++)
                        ASSERT(!(table[j].error == table[i].error && table[j].kinds == table[i].kinds));
        }
}

/* Errors that no row names get the last row's answer, or their kind's catch-all row. */
TEST(defaults) {
        ErrorInfo e;

        e = kernel_error_classify(ACTION_SET_RTNET_PRIO, -EPIPE);
        ASSERT_EQ(e.class, ERROR_TRANSIENT);
        ASSERT_STREQ(e.meaning, "unexpected kernel error");
        e = kernel_error_classify(ACTION_SET_VCPU_PIN, 0);
        ASSERT_EQ(e.class, ERROR_TRANSIENT);
        ASSERT_STREQ(e.meaning, "unexpected kernel error");
        e = kernel_error_classify(ACTION_SET_IRQ_AFFINITY, -EXDEV);
        ASSERT_EQ(e.class, ERROR_UNMANAGED);
        ASSERT_CONTAINS(e.meaning, "left alone from now on");
        e = kernel_error_classify(ACTION_SET_KTHREAD_SCHED, -E2BIG);
        ASSERT_EQ(e.class, ERROR_UNMANAGED);
        ASSERT_STREQ(e.meaning, "the scheduler refuses changes to this thread");
        /* A kind without rows of its own for an errno falls through to the rows for every kind. */
        e = kernel_error_classify(ACTION_SET_NAPI_THREADED, -EPERM);
        ASSERT_EQ(e.class, ERROR_FATAL);
        ASSERT_STREQ(e.meaning, "not permitted: sriovd needs root");
        e = kernel_error_classify(ACTION_SET_CHANNELS, -ENOENT);
        ASSERT_EQ(e.class, ERROR_UNMANAGED);
        ASSERT_STREQ(e.meaning, "this kernel does not have the setting");
        e = kernel_error_classify(ACTION_SET_PF_LINK, INT_MIN);
        ASSERT_EQ(e.class, ERROR_TRANSIENT);
}

TEST(set_result) {
        Action a = { .kind = ACTION_SET_NUM_VFS };

        action_set_result(&a, -EBUSY);
        ASSERT_EQ(a.result, -EBUSY);
        ASSERT_EQ(a.error.class, ERROR_TRANSIENT);
        ASSERT_CONTAINS(a.error.meaning, "VFs are in use");
        action_set_result(&a, 1);
        ASSERT_EQ(a.result, 1);
        ASSERT(!a.error.meaning);
        ASSERT_STREQ(error_class_to_string(ERROR_UNMANAGED), "unmanaged");
}

int main(void) {
        RUN(each_row);
        RUN(table_shape);
        RUN(defaults);
        RUN(set_result);
        return 0;
}
