/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-access.c — decide who may change state over D-Bus: root or a member of access_group */

#include <grp.h>
#include <string.h>

#include "sriovd/protocol/bus-protocol.h"
#include "base/log.h"
#include "config/config.h"
#include "bus-internal.h"

static void creds_unrefp(sd_bus_creds **c) {
        sd_bus_creds_unref(*c);
}

/* Returns the group's ID, or -ENOENT. The buffer is large because a group's member list can be long. */
static int group_id(const char *name, gid_t *ret) {
        struct group grp, *result = NULL;
        char buf[16384];
        int r;

        if (!name || !*name)
                return -ENOENT;
        r = getgrnam_r(name, &grp, buf, sizeof(buf), &result);
        if (r != 0)
                return -r;
        if (!result)
                return -ENOENT;
        *ret = result->gr_gid;
        return 0;
}

static int sender_privileged(Bus *b, sd_bus_message *m) {
        __attribute__((cleanup(creds_unrefp))) sd_bus_creds *creds = NULL;
        const gid_t *gids = NULL;
        gid_t group, egid;
        uid_t euid;
        int r, n;

        /* Only the effective UID counts, because the kernel checked that one at connect time.
         * The real UID would give ENODATA here anyway. */
        r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID | SD_BUS_CREDS_EGID | SD_BUS_CREDS_SUPPLEMENTARY_GIDS |
                                              SD_BUS_CREDS_AUGMENT, &creds);
        if (r < 0)
                return r;
        r = sd_bus_creds_get_euid(creds, &euid);
        if (r < 0)
                return r;
        if (euid == 0)
                return 1;
        r = group_id(manager_config(b->manager)->access_group, &group);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;   /* NSS did not answer. That is no verdict, so the next call asks again. */
        if (sd_bus_creds_get_egid(creds, &egid) >= 0 && egid == group)
                return 1;
        n = sd_bus_creds_get_supplementary_gids(creds, &gids);
        for (int i = 0; i < n; i++)
                if (gids[i] == group)
                        return 1;
        return 0;
}

/*
 * The bus daemon records a connection's credentials at connect time, and asking for them blocks.
 * At a thousand changes a second, that round trip and its /proc reads took half of sriovd's time.
 * Every other call waited behind them. So the verdict is cached per connection. This is safe
 * because the bus never gives out a unique name twice. A changed access_group asks again. So does
 * a caller whose verdict was pushed out of the last BUS_VERDICTS.
 */
int bus_sender_privileged(Bus *b, sd_bus_message *m) {
        const char *sender = sd_bus_message_get_sender(m), *group = manager_config(b->manager)->access_group ?: "";
        BusVerdict *v;
        int r;

        if (!sender || strlen(sender) >= sizeof(v->sender) || strlen(group) >= sizeof(v->access_group))
                return sender_privileged(b, m);
        for (size_t i = 0; i < BUS_VERDICTS; i++) {
                v = &b->verdicts[i];
                if (streq(v->sender, sender) && streq(v->access_group, group))
                        return v->privileged;
        }
        r = sender_privileged(b, m);
        if (r < 0)
                return r;   /* An error is not cached, so the next call asks again. */
        v = &b->verdicts[b->next_verdict++ % BUS_VERDICTS];
        strscpy(v->sender, sizeof(v->sender), sender);
        strscpy(v->access_group, sizeof(v->access_group), group);
        v->privileged = r > 0;
        return r;
}

int bus_check_change(Bus *b, sd_bus_message *m, sd_bus_error *error) {
        int r = bus_sender_privileged(b, m);

        if (r < 0)
                return bus_error_setf(error, -EPERM, "Cannot tell who the caller is (%s); changes need root or group %s",
                                      strerror(-r), manager_config(b->manager)->access_group);
        if (r == 0)
                return bus_error_setf(error, -EPERM, "%s() changes state: it needs root or membership of group %s",
                                      sd_bus_message_get_member(m), manager_config(b->manager)->access_group);
        /* This tells an operator who turned on debug logging which caller asked for a change. */
        log_debug("D-Bus: %s.%s() from %s allowed", sd_bus_message_get_interface(m) ?: "?",
                  sd_bus_message_get_member(m) ?: "?", sd_bus_message_get_sender(m) ?: "?");
        return 0;
}
