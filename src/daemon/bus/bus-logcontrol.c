/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-logcontrol.c — org.freedesktop.LogControl1: set the log level and target at runtime */

#include <string.h>

#include "sriovd/protocol/bus-protocol.h"
#include "base/log.h"
#include "bus-internal.h"

/*
 * `systemctl service-log-level sriovd debug` and `systemctl service-log-target` call this
 * interface on the unit's BusName=. systemd documents it for its own services in
 * org.freedesktop.LogControl1(5). Anyone may read the properties. A write changes how much the
 * daemon logs about everyone's requests, so it needs the same rights as the Manager1 methods
 * that change state.
 */

static const struct {
        const char *name;
        LogTarget target;
} targets[] = {
        { "auto", LOG_TARGET_AUTO },
        { "journal", LOG_TARGET_JOURNAL },
        { "console", LOG_TARGET_STDERR },
};

static int property_get_level(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", log_level_to_string(log_get_max_level()));
}

static int property_set_level(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *value, void *userdata, sd_bus_error *error) {
        const char *s;
        int level, r;

        r = bus_check_change(userdata, value, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(value, "s", &s);
        if (r < 0)
                return r;
        level = log_level_from_string(s);
        if (level < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Invalid log level \"%.32s\"; expected emerg, alert, crit, err, warning, "
                                         "notice, info or debug", s);
        /* This is logged before the new level takes effect, so it shows when debug is turned off too. */
        log_full_errno(LOG_NOTICE, 0, NULL, "Log level set to %s over D-Bus", log_level_to_string(level));
        log_set_max_level(level);
        return 1;
}

static int property_get_target(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        LogTarget t = log_get_target();

        for (size_t i = 0; i < ELEMENTSOF(targets); i++)
                if (targets[i].target == t)
                        return sd_bus_message_append(reply, "s", targets[i].name);
        return sd_bus_message_append(reply, "s", "auto");
}

static int property_set_target(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *value, void *userdata, sd_bus_error *error) {
        const char *s;
        int r;

        r = bus_check_change(userdata, value, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(value, "s", &s);
        if (r < 0)
                return r;
        /* systemd also knows kmsg, syslog and null, but sriovd writes only to the journal or to stderr. */
        for (size_t i = 0; i < ELEMENTSOF(targets); i++)
                if (streq(s, targets[i].name)) {
                        log_set_target(targets[i].target);
                        log_full_errno(LOG_NOTICE, 0, NULL, "Log target set to %s over D-Bus", s);
                        return 1;
                }
        return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                 "Invalid or unsupported log target \"%.32s\"; expected auto, journal or console", s);
}

static int property_get_identifier(sd_bus *bus, const char *path, const char *interface, const char *property,
                                   sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", "sriovd");
}

/* Without UNPRIVILEGED, sd-bus would demand CAP_SYS_ADMIN of a writer. The setters check the caller themselves. */
const sd_bus_vtable bus_log_control_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_WRITABLE_PROPERTY("LogLevel", "s", property_get_level, property_set_level, 0,
                                 SD_BUS_VTABLE_PROPERTY_EXPLICIT | SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_WRITABLE_PROPERTY("LogTarget", "s", property_get_target, property_set_target, 0,
                                 SD_BUS_VTABLE_PROPERTY_EXPLICIT | SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_PROPERTY("SyslogIdentifier", "s", property_get_identifier, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_VTABLE_END
};
