/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-config.c — libFuzzer target: the INI configuration loader on arbitrary text */

#include <stdint.h>
#include <string.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = malloc(size + 1), *errors = NULL;
        Config *c = NULL;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = 0;
        if (config_load_string("fuzz.conf", text, NULL, &c, &errors) >= 0) {
                Scope s;
                /* A config that loads must be usable as loaded. */
                config_scope(c, &s);
                if (!c->state_dir || !c->libvirt_uri)
                        __builtin_trap();
        } else if (!errors || strncmp(errors, "fuzz.conf:", 10) != 0)
                __builtin_trap();   /* every error names file:line */
        config_free(c);
        return 0;
}
