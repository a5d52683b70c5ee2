/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-state.c — libFuzzer target: the state file parser on arbitrary bytes, and what it accepts round-trips */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "state/state.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool tenant_equal(const StateTenant *a, const StateTenant *b) {
        return streq(a->tenant, b->tenant) && streq(a->class_name, b->class_name) && a->kind == b->kind &&
               streq(a->vf, b->vf) && memcmp(a->mac, b->mac, 6) == 0 && a->vlan == b->vlan &&
               streq(a->domain, b->domain) && a->numa_node == b->numa_node &&
               a->have_coalesce == b->have_coalesce && a->rx_usecs == b->rx_usecs &&
               a->tx_usecs == b->tx_usecs && a->seq == b->seq && streq(a->pin_pf, b->pin_pf) &&
               streq(a->domain_uuid, b->domain_uuid) && streq(a->owner, b->owner);
}

/* Parse; whatever is accepted must be valid, format, and parse back to the same State. */
static void check(const char *buf, size_t size) {
        StateError e = {};
        State s = {}, back = {};
        char *text = NULL;
        size_t text_size;
        int r;

        r = state_parse(buf, size, &s, &e);
        if (r == -ENOMEM)
                return;
        if (r < 0) {
                if (r != -EBADMSG || !e.message[0] || !memchr(e.message, 0, sizeof(e.message)))
                        __builtin_trap();
                return;
        }
        if (state_validate(&s, NULL) < 0)
                __builtin_trap();
        r = state_format(&s, &text, &text_size, NULL);
        if (r == -ENOMEM)
                goto done;
        if (r < 0 || state_parse(text, text_size, &back, NULL) < 0)
                __builtin_trap();
        if (back.n != s.n || back.generation != s.generation)
                __builtin_trap();
        for (size_t i = 0; i < s.n; i++)
                if (!tenant_equal(&s.tenants[i], &back.tenants[i]))
                        __builtin_trap();
done:
        free(text);
        state_done(&back);
        state_done(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char key[] = "\"checksum\"", prefix[] = "crc32c:";
        const uint8_t *last = NULL;
        _cleanup_free_ char *fixed = NULL;

        /* The bytes as they are: no copy, so reading past size is caught. */
        check((const char *) data, size);

        /*
         * Mutations almost never carry the right checksum, which would keep the fuzzer out of
         * everything after it: put in the checksum of what precedes the last "checksum" key,
         * as an operator fixing up an edit would, and parse again.
         */
        for (const uint8_t *p = data; p && (size_t) (p - data) < size;) {
                p = memmem(p, size - (size_t) (p - data), key, sizeof(key) - 1);
                if (p)
                        last = p++;
        }
        if (!last)
                return 0;
        const uint8_t *v = memmem(last, size - (size_t) (last - data), prefix, sizeof(prefix) - 1);
        if (!v || (size_t) (v - data) + sizeof(prefix) - 1 + 8 > size)
                return 0;
        fixed = malloc(size);
        if (!fixed)
                return 0;
        memcpy(fixed, data, size);
        char hex[9];
        snprintf(hex, sizeof(hex), "%08x", crc32c_bitwise(data, (size_t) (last - data)));
        memcpy(fixed + (v - data) + sizeof(prefix) - 1, hex, 8);
        check(fixed, size);
        return 0;
}
