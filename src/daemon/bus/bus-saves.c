/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bus-saves.c — hold each reply that acknowledges a change until the change's write is durable.
 *
 * The manager groups the changes of the calls handled together into one write in manager-tenants.c.
 * Their replies wait here and go out together once the write is durable. If the write fails, each
 * call gets the error that a change saved on its own would have had. Nothing of the group stays.
 * A reply never goes out before its write, because a controller that heard yes may act on it.
 * The write runs on the writer's thread, so the next group's replies are held too. Each reply is
 * sent when its own group's write is done. Groups finish in order, so the held list is answered
 * from its front.
 */

#include <stdio.h>
#include <string.h>

#include "sriovd/protocol/bus-protocol.h"
#include "base/log.h"
#include "bus-internal.h"

static void held_done(BusHeld *h) {
        sd_bus_message_unref(h->call);
        sd_bus_message_unref(h->reply);
}

void bus_held_free(Bus *b) {
        for (size_t i = 0; i < b->n_held; i++)
                held_done(&b->held[i]);
        b->held = mfree(b->held);
        b->n_held = b->allocated_held = 0;
}

/* Once a change is durable, its log line is written and its tenant is marked for signals. */
static void announce(Bus *b, const BusHeld *h) {
        if (h->done[0])
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(.tenant = h->tenant, .vf = h->vf[0] ? h->vf : NULL), "%s",
                               h->done);
        if (b->bus && h->tenant[0])
                bus_objects_mark_tenant(b, h->tenant);
}

static void held_set(BusHeld *h, const char *tenant, const char *vf, const char *failed, const char *done) {
        strscpy(h->tenant, sizeof(h->tenant), tenant ?: "");
        strscpy(h->vf, sizeof(h->vf), vf ?: "");
        strscpy(h->failed, sizeof(h->failed), failed);
        strscpy(h->done, sizeof(h->done), done ?: "");
}

int bus_reply_when_saved(Bus *b, sd_bus_message *call, sd_bus_message *reply, const char *tenant, const char *vf,
                         const char *failed, const char *done) {
        BusHeld *h;

        if (manager_saves_pending(b->manager) && GREEDY_REALLOC(b->held, b->allocated_held, b->n_held + 1) < 0) {
                /* There is no memory to hold the reply. So the group is written now,
                 * and this call is answered with the outcome. */
                int r = manager_flush_saves(b->manager);
                if (r < 0) {
                        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;

                        (void) bus_error_setf(&e, -EIO, "%s: %s", failed, strerror(-r));
                        return sd_bus_reply_method_error(call, &e);
                }
        }
        if (!manager_saves_pending(b->manager)) {
                BusHeld now = {};

                held_set(&now, tenant, vf, failed, done);
                announce(b, &now);
                bus_flush_now(b);
                return sd_bus_send(NULL, reply, NULL);
        }
        h = &b->held[b->n_held++];
        *h = (BusHeld) { .call = sd_bus_message_ref(call), .reply = sd_bus_message_ref(reply),
                         .seq = manager_saves_seq(b->manager) };
        held_set(h, tenant, vf, failed, done);
        /* A flood of calls, Ping included, could keep the write waiting.
         * So this many held replies make a group, and it is written now. */
        if (b->n_held >= BUS_HELD_MAX)
                (void) manager_flush_saves(b->manager);
        return 1;
}

void bus_on_saved(Manager *m, int error, uint64_t seq, void *userdata) {
        Bus *b = userdata;
        size_t n = 0;
        int r;

        /* Sending replies and signals dispatches no incoming call, so no reply joins the list meanwhile. */
        while (n < b->n_held && b->held[n].seq <= seq)
                n++;
        /*
         * The flush comes with every saved group, held replies or not, because Device1's figures
         * wait for the save that makes them true.
         */
        if (error >= 0) {
                for (size_t i = 0; i < n; i++)
                        announce(b, &b->held[i]);
                if (b->bus)
                        bus_flush_now(b);
        }
        for (size_t i = 0; i < n; i++) {
                BusHeld *h = &b->held[i];

                if (error >= 0)
                        r = sd_bus_send(NULL, h->reply, NULL);
                else {
                        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;

                        (void) bus_error_setf(&e, -EIO, "%s: %s", h->failed, strerror(-error));
                        r = sd_bus_reply_method_error(h->call, &e);
                }
                if (r < 0)
                        log_full_errno(LOG_DEBUG, r, NULL, "Failed to send a reply held for its save, ignoring: %m");
                held_done(h);
        }
        if (n > 0) {
                memmove(b->held, b->held + n, (b->n_held - n) * sizeof(*b->held));
                b->n_held -= n;
        }
}
