/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bpf-events-none.c — bpf-events.h for a build without BPF: nothing loads, and the reason says so */

#include <errno.h>
#include <stdlib.h>

#include "sriovd/kernel/bpf-events.h"
#include "sriovd/shared/util.h"

struct BpfEvents {
        char reason[160];
};

int bpf_events_new(pid_t self, const BpfEventsOptions *options, BpfEvents **ret) {
        return bpf_events_new_disabled("sriovd was built without BPF (meson -Dbpf=disabled)", ret);
}

int bpf_events_new_disabled(const char *reason, BpfEvents **ret) {
        BpfEvents *b = calloc(1, sizeof(*b));

        if (!b)
                return -ENOMEM;
        strscpy(b->reason, sizeof(b->reason), reason);
        *ret = b;
        return 0;
}

BpfEvents *bpf_events_free(BpfEvents *b) {
        return mfree(b);
}

bool bpf_events_status(const BpfEvents *b, BpfFeature f, const char **ret_reason) {
        if (ret_reason)
                *ret_reason = b->reason;
        return false;
}

int bpf_events_track(BpfEvents *b, unsigned flag, const pid_t *pids, size_t n) {
        return n > BPF_TRACK_MAX ? -ENOSPC : 0;
}

int bpf_events_read_latency(BpfEvents *b, pid_t pid, LatencyHist *ret) {
        return -EOPNOTSUPP;
}

int bpf_events_fd(const BpfEvents *b) {
        return -1;
}

int bpf_events_dispatch(BpfEvents *b, BpfEventFn fn, void *userdata) {
        return 0;
}
