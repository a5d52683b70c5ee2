/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state.c — the allocation state file's format: the document read from json-c's tree, and written */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/shared/util.h"
#include "state-internal.h"
#include "state.h"

/* CRC32C, the Castagnoli CRC with the reflected polynomial 0x82f63b78, as iSCSI and ext4 use it. */
uint32_t state_crc32c(const void *data, size_t size) {
        const uint8_t *p = data;
        uint32_t table[256], crc = UINT32_MAX;

        /* At the sizes of sriovd's files, 1 KiB of table per call is cheaper than a global to initialise. */
        for (uint32_t i = 0; i < 256; i++) {
                uint32_t c = i;
                for (int k = 0; k < 8; k++)
                        c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
                table[i] = c;
        }
        for (size_t i = 0; i < size; i++)
                crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
        return crc ^ UINT32_MAX;
}

enum { DOC_FORMAT, DOC_VERSION, DOC_GENERATION, DOC_TENANTS, DOC_CHECKSUM };
static const char *const doc_keys[] = {
        [DOC_FORMAT] = "format",
        [DOC_VERSION] = "version",
        [DOC_GENERATION] = "generation",
        [DOC_TENANTS] = "tenants",
        [DOC_CHECKSUM] = "checksum",
};

static int doc_member(const StateText *t, unsigned key, const JsonPath *p, json_object *v, void *userdata) {
        DocCtx *d = userdata;
        int64_t n;
        int r;

        /* Anything after the checksum would not be covered by it. */
        if (d->have_checksum) {
                JsonPath kp = *p;
                kp.key = true;
                return state_path_error(t, &kp, "\"%s\" after \"checksum\"; the checksum must be the last key", doc_keys[key]);
        }

        switch (key) {
        case DOC_FORMAT:
                return state_read_format(t, p, v, STATE_FORMAT);
        case DOC_VERSION:
                return state_read_version(t, p, v, STATE_FORMAT_VERSION);
        case DOC_GENERATION:
                r = state_read_integer(t, p, v, "generation", 0, INT64_MAX, &n);
                d->generation = (uint64_t) n;
                return r;
        case DOC_TENANTS:
                d->tenants_path = *p;
                return state_read_tenants(t, p, v, d);
        case DOC_CHECKSUM:
                r = state_read_checksum(t, p, v, &d->checksum);
                if (r < 0)
                        return r;
                d->have_checksum = true;
                return 0;
        }
        return -EINVAL;
}

int state_parse(const char *buf, size_t size, State *ret, StateError *ret_error) {
        _cleanup_(json_object_putp) json_object *root = NULL;
        StateText t = { .buf = buf, .end = size, .root = "the file", .error = ret_error };
        DocCtx d = {};
        size_t end, checksum_key;
        uint32_t actual;
        int r;

        if (size == 0) {
                state_error_set(ret_error, 0, 0, "the file is empty (written but never synced before a crash?)");
                return -EBADMSG;
        }
        if (size > STATE_FILE_SIZE_MAX) {
                state_error_set(ret_error, 0, 0, "the file is %zu bytes; expected at most %u", size, STATE_FILE_SIZE_MAX);
                return -EBADMSG;
        }

        r = state_json_parse(&t, &root, &end, &checksum_key);
        if (r < 0)
                return r;
        r = state_read_object(&t, &(JsonPath) {}, root, "the file", doc_keys, ELEMENTSOF(doc_keys), doc_member, &d);
        if (r < 0)
                goto fail;

        /* The writer ends the file with "}\n". Any other ending is a torn write or an edit. */
        if (end == size) {
                r = state_text_error(&t, end, "the file ends without a newline after the final '}' (truncated?)");
                goto fail;
        }
        if (buf[end] != '\n' || end + 1 != size) {
                r = state_text_error(&t, end + (buf[end] == '\n'), "unexpected content after the final '}'; expected the file to end with \"}\\n\"");
                goto fail;
        }

        State s = { .tenants = d.tenants, .n = d.n, .generation = d.generation };
        r = state_check_duplicates(&s, &t, &d.tenants_path, ret_error);
        if (r < 0)
                goto fail;

        /* doc_member() made sure that the checksum is the last key. It covers everything before it. */
        actual = state_crc32c(buf, checksum_key);
        if (actual != d.checksum) {
                r = state_path_error(&t, &(JsonPath) { .step = { { .key = "checksum" } }, .n = 1 },
                                     "checksum mismatch: the file says " CHECKSUM_PREFIX "%08x, its content has " CHECKSUM_PREFIX "%08x "
                                     "(torn write, disk corruption, or edited by hand)", d.checksum, actual);
                goto fail;
        }

        *ret = s;
        return 0;

fail:
        free(d.tenants);
        return r;
}

static json_object *coalesce_to_json(const StateTenant *t) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();

        if (!o || jsonc_add(o, "rx_usecs", json_object_new_int64(t->rx_usecs)) < 0 ||
            jsonc_add(o, "tx_usecs", json_object_new_int64(t->tx_usecs)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

json_object *state_tenant_to_json(const StateTenant *t) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        char mac[18];

        if (!o)
                return NULL;
        snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", t->mac[0], t->mac[1], t->mac[2], t->mac[3],
                 t->mac[4], t->mac[5]);
        /* The members go in the format's order, which hand edits and diffs of old files follow. */
        if (jsonc_add(o, "tenant", json_object_new_string(t->tenant)) < 0 ||
            jsonc_add(o, "class", json_object_new_string(t->class_name)) < 0 ||
            jsonc_add(o, "kind", json_object_new_string(state_kind_to_string(t->kind))) < 0 ||
            (t->vf[0] ? jsonc_add(o, "vf", json_object_new_string(t->vf)) : jsonc_add_null(o, "vf")) < 0 ||
            jsonc_add(o, "mac", json_object_new_string(mac)) < 0 ||
            (t->vlan >= 0 ? jsonc_add(o, "vlan", json_object_new_int(t->vlan)) : jsonc_add_null(o, "vlan")) < 0 ||
            (t->domain[0] ? jsonc_add(o, "domain", json_object_new_string(t->domain)) : jsonc_add_null(o, "domain")) < 0 ||
            (t->numa_node >= 0 ? jsonc_add(o, "numa_node", json_object_new_int(t->numa_node)) : jsonc_add_null(o, "numa_node")) < 0 ||
            (t->have_coalesce ? jsonc_add(o, "coalesce", coalesce_to_json(t)) : jsonc_add_null(o, "coalesce")) < 0 ||
            jsonc_add(o, "seq", json_object_new_int64((int64_t) t->seq)) < 0)
                return NULL;
        if (t->n_rt_cpus > 0) {
                json_object *a = json_object_new_array();
                if (jsonc_add(o, "rt_cpus", a) < 0)
                        return NULL;
                for (unsigned i = 0; i < t->n_rt_cpus && i < STATE_RT_CPUS_MAX; i++)
                        if (json_object_array_add(a, json_object_new_int(t->rt_cpus[i])) < 0)
                                return NULL;
        }
        if ((t->pin_pf[0] && jsonc_add(o, "pin_pf", json_object_new_string(t->pin_pf)) < 0) ||
            (t->domain_uuid[0] && jsonc_add(o, "domain_uuid", json_object_new_string(t->domain_uuid)) < 0) ||
            (t->owner[0] && jsonc_add(o, "owner", json_object_new_string(t->owner)) < 0) ||
            (t->tx_rates.have_min && jsonc_add(o, "min_tx_rate", json_object_new_int64(t->tx_rates.min)) < 0) ||
            (t->tx_rates.have_max && jsonc_add(o, "max_tx_rate", json_object_new_int64(t->tx_rates.max)) < 0))
                return NULL;
        return TAKE_PTR(o);
}

int state_document_finish(json_object *doc, int flags, char **ret, size_t *ret_size) {
        static const char key[] = "\"checksum\"";
        _cleanup_free_ char *buf = NULL;
        const char *text, *at = NULL, *hex;
        size_t len;
        char crc[9];

        text = jsonc_text(doc, flags, &len);
        if (!text)
                return -ENOMEM;
        buf = malloc(len + 2);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, text, len);
        buf[len] = '\n';
        buf[len + 1] = 0;

        /*
         * The last "checksum" key is the placeholder member's. A "checksum" inside a string
         * value cannot match, because the quotes inside a string are escaped.
         */
        for (const char *k = buf; (k = memmem(k, len - (size_t) (k - buf), key, strlen(key))); k++)
                at = k;
        hex = at ? strstr(at, CHECKSUM_PREFIX "00000000") : NULL;
        if (!hex)
                return -EIO;
        snprintf(crc, sizeof(crc), "%08x", state_crc32c(buf, (size_t) (at - buf)));
        memcpy((char *) hex + strlen(CHECKSUM_PREFIX), crc, 8);
        *ret = TAKE_PTR(buf);
        *ret_size = len + 1;
        return 0;
}

int state_format(const State *s, char **ret, size_t *ret_size, StateError *ret_error) {
        _cleanup_(json_object_putp) json_object *doc = NULL;
        json_object *list;
        int r;

        r = state_validate(s, ret_error);
        if (r < 0)
                return r;

        doc = json_object_new_object();
        list = json_object_new_array_ext((int) s->n);
        if (!doc || jsonc_add(doc, "format", json_object_new_string(STATE_FORMAT)) < 0 ||
            jsonc_add(doc, "version", json_object_new_int(STATE_FORMAT_VERSION)) < 0 ||
            jsonc_add(doc, "generation", json_object_new_int64((int64_t) s->generation)) < 0 ||
            jsonc_add(doc, "tenants", list) < 0)   /* list now belongs to doc, or has been put. */
                return -ENOMEM;
        for (size_t i = 0; i < s->n; i++)
                if (jsonc_append(list, state_tenant_to_json(&s->tenants[i])) < 0)
                        return -ENOMEM;
        /* This placeholder is replaced by the checksum of everything before its key. */

        if (jsonc_add(doc, "checksum", json_object_new_string(CHECKSUM_PREFIX "00000000")) < 0)
                return -ENOMEM;
        return state_document_finish(doc, JSONC_PRETTY, ret, ret_size);
}

void state_done(State *s) {
        free(s->tenants);
        *s = (State) {};
}
