/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-journal.c — libFuzzer target: the state journal's replay on arbitrary bytes over a fixed file */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "state/state.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The file the journal changes: generation 3, two tenants. */
static State base(void) {
        State s = { .tenants = calloc(2, sizeof(StateTenant)), .generation = 3 };

        if (!s.tenants)
                return s;
        s.tenants[0] = (StateTenant) { .tenant = "vm-a", .class_name = "latency-critical", .kind = STATE_KIND_VF,
                                       .vf = "0000:41:00.2", .mac = { 2, 0, 0, 0, 0, 1 }, .vlan = -1,
                                       .numa_node = 0, .seq = 1 };
        s.tenants[1] = (StateTenant) { .tenant = "vm-b", .class_name = "best-effort", .kind = STATE_KIND_VIRTIO,
                                       .mac = { 2, 0, 0, 0, 0, 2 }, .vlan = 100, .numa_node = -1, .seq = 2 };
        s.n = 2;
        return s;
}

/* Whatever is applied must be a valid file, which formats and parses back. */
static void check(const char *buf, size_t size) {
        StateError e = {};
        StateReplay rep = {};
        State s = base(), back = {};
        char *text = NULL;
        size_t text_size;
        int r;

        if (!s.tenants)
                return;
        r = state_journal_replay(buf, size, &s, &rep, &e);
        if (r == -ENOMEM)
                goto done;
        if (r < 0 && (r != -EBADMSG || !e.message[0] || !memchr(e.message, 0, sizeof(e.message))))
                __builtin_trap();
        if (rep.applied + rep.skipped > size)
                __builtin_trap();
        if (state_validate(&s, NULL) < 0)
                __builtin_trap();
        r = state_format(&s, &text, &text_size, NULL);
        if (r == -ENOMEM)
                goto done;
        if (r < 0 || state_parse(text, text_size, &back, NULL) < 0 || back.n != s.n)
                __builtin_trap();
done:
        free(text);
        state_done(&back);
        state_done(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char key[] = "\"checksum\"", prefix[] = "crc32c:";
        char *fixed;
        size_t start = 0;

        /* The bytes as they are: no copy, so reading past size is caught. */
        check((const char *) data, size);

        /* Each line with the checksum of what precedes its "checksum" key, so mutations get past it. */
        fixed = malloc(size ?: 1);
        if (!fixed)
                return 0;
        memcpy(fixed, data, size);
        while (start < size) {
                const uint8_t *nl = memchr(data + start, '\n', size - start);
                size_t end = nl ? (size_t) (nl - data) : size;
                const uint8_t *k = memmem(data + start, end - start, key, sizeof(key) - 1);
                const uint8_t *v = k ? memmem(k, end - (size_t) (k - data), prefix, sizeof(prefix) - 1) : NULL;

                if (v && (size_t) (v - data) + sizeof(prefix) - 1 + 8 <= end) {
                        char hex[9];
                        snprintf(hex, sizeof(hex), "%08x", crc32c_bitwise(data + start, (size_t) (k - data) - start));
                        memcpy(fixed + (v - data) + sizeof(prefix) - 1, hex, 8);
                }
                start = end + 1;
        }
        check(fixed, size);
        free(fixed);
        return 0;
}
