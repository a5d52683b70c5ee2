/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-dbus-client.c — N concurrent sd-bus clients calling one org.sriovd.Manager1 method; latency and rate */

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>

#include "sriovd/protocol/bus-protocol.h"
#include "sriovd/shared/macro.h"

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return (x > y) - (x < y);
}

/* One call; tenant ids are PREFIX-CLIENT-I so concurrent clients never collide. */
static int one_call(sd_bus *bus, const char *method, const char *prefix, unsigned client, unsigned i) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        char tenant[64];
        int r;

        snprintf(tenant, sizeof(tenant), "%s-%u-%u", prefix, client, i);
        if (streq(method, "Ping"))
                r = sd_bus_call_method(bus, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, "Ping", &e, &reply, "");
        else if (streq(method, "Allocate"))
                r = sd_bus_call_method(bus, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, "Allocate", &e, &reply,
                                       "sssa{sv}", tenant, "best-effort", "", 0);
        else if (streq(method, "AllocateSame"))
                /* The same tenant and class again: idempotent, nothing saved. */
                r = sd_bus_call_method(bus, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, "Allocate", &e, &reply,
                                       "sssa{sv}", tenant, "best-effort", "", 0);
        else if (streq(method, "GetTenant"))
                r = sd_bus_call_method(bus, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, "GetTenant", &e, &reply,
                                       "s", tenant);
        else if (streq(method, "Release"))
                r = sd_bus_call_method(bus, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, "Release", &e, &reply,
                                       "s", tenant);
        else
                r = -EINVAL;
        if (r < 0)
                fprintf(stderr, "%s %s: %s\n", method, tenant, e.message ?: strerror(-r));
        sd_bus_error_free(&e);
        sd_bus_message_unref(reply);
        return r;
}

int main(int argc, char **argv) {
        const char *address = NULL, *method = "Ping", *prefix = "b";
        unsigned clients = 1, calls = 1000, same_tenants = 0;
        uint64_t *lat, t0, t1;
        int *go;
        int c, failed = 0;

        while ((c = getopt(argc, argv, "a:m:c:n:p:s")) >= 0)
                switch (c) {
                case 'a': address = optarg; break;
                case 'm': method = optarg; break;
                case 'c': clients = (unsigned) atoi(optarg); break;
                case 'n': calls = (unsigned) atoi(optarg); break;
                case 'p': prefix = optarg; break;
                case 's': same_tenants = 1; break;   /* GetTenant/AllocateSame: tenant index 0 every time */
                default: return 2;
                }
        if (!address || clients == 0 || clients > 256 || calls < clients)
                return 2;
        unsigned per = calls / clients;
        calls = per * clients;

        lat = mmap(NULL, calls * sizeof(*lat), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        go = mmap(NULL, sizeof(int) * 2, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (lat == MAP_FAILED || go == MAP_FAILED)
                return 1;
        go[0] = go[1] = 0;

        for (unsigned k = 0; k < clients; k++) {
                pid_t pid = fork();
                if (pid < 0)
                        return 1;
                if (pid == 0) {
                        sd_bus *bus = NULL;
                        int r = sd_bus_new(&bus);
                        if (r >= 0) r = sd_bus_set_address(bus, address);
                        if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
                        if (r >= 0) r = sd_bus_start(bus);
                        if (r < 0)
                                _exit(1);
                        /* Warm up (connection, first replies), then wait for everyone. */
                        for (int w = 0; w < 20; w++)
                                (void) one_call(bus, "Ping", prefix, k, 0);
                        __atomic_add_fetch(&go[1], 1, __ATOMIC_SEQ_CST);
                        while (!__atomic_load_n(&go[0], __ATOMIC_SEQ_CST))
                                ;
                        for (unsigned i = 0; i < per; i++) {
                                uint64_t s = now_ns();
                                if (one_call(bus, method, prefix, k, same_tenants ? 0 : i) < 0)
                                        _exit(1);
                                lat[k * per + i] = now_ns() - s;
                        }
                        sd_bus_flush_close_unref(bus);
                        _exit(0);
                }
        }
        while (__atomic_load_n(&go[1], __ATOMIC_SEQ_CST) < (int) clients) {
                struct timespec ts = { 0, 100000 };
                nanosleep(&ts, NULL);
        }
        t0 = now_ns();
        __atomic_store_n(&go[0], 1, __ATOMIC_SEQ_CST);
        for (unsigned k = 0; k < clients; k++) {
                int status;
                if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        failed++;
        }
        t1 = now_ns();
        if (failed)
                return 1;
        qsort(lat, calls, sizeof(*lat), cmp_u64);
        printf("{\"method\": \"%s\", \"clients\": %u, \"calls\": %u, \"p50_us\": %.1f, \"p99_us\": %.1f, "
               "\"max_us\": %.1f, \"per_sec\": %.0f}\n",
               method, clients, calls, lat[calls / 2] / 1e3, lat[(size_t) (calls * 0.99)] / 1e3, lat[calls - 1] / 1e3,
               calls / ((t1 - t0) / 1e9));
        return 0;
}
