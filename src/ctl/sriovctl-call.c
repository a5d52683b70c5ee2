/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-call.c — calls to sriovd, and how their failures and usage errors become sriovctl's exit codes */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/protocol/bus-protocol.h"
#include "sriovd/shared/macro.h"
#include "sriovctl-internal.h"

static int exit_code_for(const sd_bus_error *e, int r) {
        if (e && e->name) {
                if (streq(e->name, SRIOVD_ERROR_NOT_PERMITTED) || streq(e->name, SD_BUS_ERROR_ACCESS_DENIED))
                        return EXIT_NOT_PERMITTED;
                if (streq(e->name, SRIOVD_ERROR_INVALID_ARGUMENT) || streq(e->name, SD_BUS_ERROR_INVALID_ARGS))
                        return EXIT_USAGE;
                if (streq(e->name, SD_BUS_ERROR_SERVICE_UNKNOWN) || streq(e->name, SD_BUS_ERROR_NAME_HAS_NO_OWNER) ||
                    streq(e->name, SD_BUS_ERROR_NO_REPLY) || streq(e->name, SD_BUS_ERROR_DISCONNECTED) ||
                    streq(e->name, SD_BUS_ERROR_UNKNOWN_OBJECT) || streq(e->name, SD_BUS_ERROR_TIMEOUT))
                        return EXIT_UNREACHABLE;
                return EXIT_FAILED;
        }
        if (r == -ECONNREFUSED || r == -ENOENT || r == -ENOTCONN || r == -ECONNRESET || r == -ETIMEDOUT ||
            r == -EACCES || r == -ENXIO)
                return EXIT_UNREACHABLE;
        return EXIT_FAILED;
}

void ctl_json_error(const char *name, const char *message) {
        _cleanup_json_ json_object *o = json_object_new_object();

        json_set(o, "error", json_object_new_string(name));
        json_set(o, "message", json_object_new_string(message));
        json_print(o);
}

int ctl_fail(const Ctl *c, const char *what, const sd_bus_error *e, int r) {
        const char *name = e && e->name ? e->name : NULL;
        const char *message = e && e->message ? e->message : strerror(r < 0 ? -r : r);

        fprintf(stderr, "sriovctl: %s: %s%s%s\n", what, name ? name : "", name ? ": " : "", message);
        if (c->json)
                ctl_json_error(name ? name : SRIOVD_ERROR_FAILED, message);
        return exit_code_for(e, r);
}

int ctl_usage_error(const char *fmt, const char *arg) {
        fprintf(stderr, "sriovctl: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\nTry 'sriovctl --help'.\n");
        return EXIT_USAGE;
}

int ctl_call(const Ctl *c, const char *method, sd_bus_message **reply, const char *types, ...) {
        _cleanup_message_ sd_bus_message *m = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(c->bus, &m, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, method);
        if (r >= 0 && types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = sd_bus_call(c->bus, m, 0, &e, reply);
        if (r < 0) {
                int code = ctl_fail(c, method, &e, r);
                sd_bus_error_free(&e);
                return code;
        }
        return 0;
}

int ctl_parse_failed(int r) {
        fprintf(stderr, "sriovctl: unexpected reply from sriovd: %s\n", strerror(-r));
        return EXIT_FAILED;
}

int ctl_reply_read(sd_bus_message *reply, json_object **ret) {
        int r = read_value(reply, ret);

        return r < 0 ? ctl_parse_failed(r) : 0;
}

int ctl_call_list(const Ctl *c, const char *method, json_object **ret) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        int r = ctl_call(c, method, &reply, NULL);

        if (r != 0)
                return r;
        r = ctl_reply_read(reply, ret);
        if (r == 0 && !json_object_is_type(*ret, json_type_array)) {
                json_object_put(*ret);
                return ctl_parse_failed(-EBADMSG);
        }
        return r;
}
