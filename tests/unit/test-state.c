/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-state.c — the allocation state file: format, every kind of corruption, kept-aside files, kill -9 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "state/state.h"
#include "test.h"

#define NAME STATE_FILE_NAME

/* An independent CRC32C (bitwise, no table), to check the library's and to re-checksum edits. */
static uint32_t test_crc32c(const void *data, size_t size) {
        const uint8_t *p = data;
        uint32_t crc = UINT32_MAX;

        for (size_t i = 0; i < size; i++) {
                crc ^= p[i];
                for (int k = 0; k < 8; k++)
                        crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
        }
        return ~crc;
}

/* What an operator does after a deliberate edit: the checksum of everything before its key. */
static void rechecksum(char *text) {
        char *key = NULL, hex[9];

        for (char *k = strstr(text, "\"checksum\""); k; k = strstr(k + 1, "\"checksum\""))
                key = k;
        ASSERT(key);
        snprintf(hex, sizeof(hex), "%08x", test_crc32c(text, (size_t) (key - text)));
        char *v = strstr(key, "crc32c:");
        ASSERT(v);
        memcpy(v + 7, hex, 8);
}

/* Replace the first occurrence of from by to in a heap string. */
static char *replace(const char *text, const char *from, const char *to) {
        const char *at = strstr(text, from);
        size_t n = strlen(text) - strlen(from) + strlen(to);
        char *r = malloc(n + 1);

        if (!at) {
                fprintf(stderr, "\"%s\" not found in the test file\n", from);
                abort();
        }
        ASSERT(r);
        snprintf(r, n + 1, "%.*s%s%s", (int) (at - text), text, to, at + strlen(from));
        return r;
}

static StateTenant tenant_vf(const char *id, const char *vf, uint64_t seq) {
        StateTenant t = {
                .kind = STATE_KIND_VF,
                .mac = { 0x52, 0x54, 0x00, 0x12, 0x34, (uint8_t) seq },
                .vlan = 100,
                .numa_node = 0,
                .seq = seq,
        };
        strscpy(t.tenant, sizeof(t.tenant), id);
        strscpy(t.class_name, sizeof(t.class_name), "latency-critical");
        strscpy(t.vf, sizeof(t.vf), vf);
        snprintf(t.domain, sizeof(t.domain), "%s-vm", id);
        return t;
}

static StateTenant tenant_virtio(const char *id, uint64_t seq) {
        StateTenant t = {
                .kind = STATE_KIND_VIRTIO,
                .mac = { 0x52, 0x54, 0x00, 0xab, 0xcd, (uint8_t) seq },
                .vlan = -1,
                .numa_node = -1,
                .seq = seq,
        };
        strscpy(t.tenant, sizeof(t.tenant), id);
        strscpy(t.class_name, sizeof(t.class_name), "best-effort");
        return t;
}

static bool tenant_equal(const StateTenant *a, const StateTenant *b) {
        return streq(a->tenant, b->tenant) && streq(a->class_name, b->class_name) && a->kind == b->kind &&
               streq(a->vf, b->vf) && memcmp(a->mac, b->mac, 6) == 0 && a->vlan == b->vlan &&
               streq(a->domain, b->domain) && a->numa_node == b->numa_node &&
               a->have_coalesce == b->have_coalesce &&
               (!a->have_coalesce || (a->rx_usecs == b->rx_usecs && a->tx_usecs == b->tx_usecs)) &&
               a->seq == b->seq;
}

static bool state_equal(const State *a, const State *b) {
        if (a->n != b->n || a->generation != b->generation)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (!tenant_equal(&a->tenants[i], &b->tenants[i]))
                        return false;
        return true;
}

/* Three tenants: a VF with coalescing, a virtio guest without domain, a VF with an awkward domain name. */
static StateTenant sample_tenants[3];
static State sample(void) {
        sample_tenants[0] = tenant_vf("acme-web.1", "0000:41:00.2", 7);
        sample_tenants[0].have_coalesce = true;
        sample_tenants[0].rx_usecs = 8;
        sample_tenants[0].tx_usecs = 16;
        sample_tenants[1] = tenant_virtio("globex_db", 9);
        sample_tenants[2] = tenant_vf("initech", "0000:c1:01.7", 12);
        sample_tenants[2].vlan = 0;
        sample_tenants[2].numa_node = 1;
        strscpy(sample_tenants[2].domain, sizeof(sample_tenants[2].domain), "Büro \"blue\" \\ vm");
        return (State) { .tenants = sample_tenants, .n = 3, .generation = 42 };
}

static char *sample_text(size_t *ret_size) {
        State s = sample();
        char *text = NULL;
        size_t size;

        ASSERT_EQ(state_format(&s, &text, &size, NULL), 0);
        ASSERT_EQ(strlen(text), size);
        if (ret_size)
                *ret_size = size;
        return text;
}

static const char sample_expected[] =
        "{\n"
        "  \"format\": \"sriovd-allocations\",\n"
        "  \"version\": 1,\n"
        "  \"generation\": 42,\n"
        "  \"tenants\": [\n"
        "    {\n"
        "      \"tenant\": \"acme-web.1\",\n"
        "      \"class\": \"latency-critical\",\n"
        "      \"kind\": \"vf\",\n"
        "      \"vf\": \"0000:41:00.2\",\n"
        "      \"mac\": \"52:54:00:12:34:07\",\n"
        "      \"vlan\": 100,\n"
        "      \"domain\": \"acme-web.1-vm\",\n"
        "      \"numa_node\": 0,\n"
        "      \"coalesce\": {\n"
        "        \"rx_usecs\": 8,\n"
        "        \"tx_usecs\": 16\n"
        "      },\n"
        "      \"seq\": 7\n"
        "    },\n"
        "    {\n"
        "      \"tenant\": \"globex_db\",\n"
        "      \"class\": \"best-effort\",\n"
        "      \"kind\": \"virtio\",\n"
        "      \"vf\": null,\n"
        "      \"mac\": \"52:54:00:ab:cd:09\",\n"
        "      \"vlan\": null,\n"
        "      \"domain\": null,\n"
        "      \"numa_node\": null,\n"
        "      \"coalesce\": null,\n"
        "      \"seq\": 9\n"
        "    },\n"
        "    {\n"
        "      \"tenant\": \"initech\",\n"
        "      \"class\": \"latency-critical\",\n"
        "      \"kind\": \"vf\",\n"
        "      \"vf\": \"0000:c1:01.7\",\n"
        "      \"mac\": \"52:54:00:12:34:0c\",\n"
        "      \"vlan\": 0,\n"
        "      \"domain\": \"Büro \\\"blue\\\" \\\\ vm\",\n"
        "      \"numa_node\": 1,\n"
        "      \"coalesce\": null,\n"
        "      \"seq\": 12\n"
        "    }\n"
        "  ],\n"
        "  \"checksum\": \"crc32c:";

TEST(crc32c_reference) {
        /* The check value of CRC-32C (RFC 3720, B.4), so both implementations are the standard one. */
        ASSERT_EQ(test_crc32c("123456789", 9), 0xe3069283);
}

TEST(format_exact) {
        _cleanup_free_ char *text = sample_text(NULL);
        char hex[9];

        ASSERT_EQ(strncmp(text, sample_expected, strlen(sample_expected)), 0);
        snprintf(hex, sizeof(hex), "%08x", test_crc32c(text, strlen(sample_expected) - strlen("\"checksum\": \"crc32c:")));
        ASSERT_EQ(strncmp(text + strlen(sample_expected), hex, 8), 0);
        ASSERT_STREQ(text + strlen(sample_expected) + 8, "\"\n}\n");
}

TEST(round_trip) {
        StateTenant many[200];
        State cases[] = {
                sample(),
                { .generation = 0 },
                { .tenants = many, .n = ELEMENTSOF(many), .generation = INT64_MAX },
        };

        for (size_t i = 0; i < ELEMENTSOF(many); i++) {
                char id[32], vf[16];
                snprintf(id, sizeof(id), "t%zu", i);
                snprintf(vf, sizeof(vf), "0000:%02zx:%02zx.%zx", 0x41 + i / 64, (i / 8) % 32, i % 8);
                many[i] = i % 3 ? tenant_vf(id, vf, INT64_MAX - i) : tenant_virtio(id, INT64_MAX - i);
                if (i % 7 == 0 && i % 3 == 0)
                        many[i].kind = STATE_KIND_WAITING;   /* a sriov-required tenant without a VF */
        }
        /* Every character a domain may hold, through the writer's escapes and back. */
        strscpy(many[1].domain, sizeof(many[1].domain), "tab-free \"q\" \\ é 中 😀 ~");

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text = NULL, *again = NULL;
                size_t size, size2;
                State back = {};

                ASSERT_EQ(state_format(&cases[i], &text, &size, NULL), 0);
                ASSERT_EQ(state_parse(text, size, &back, NULL), 0);
                ASSERT(state_equal(&cases[i], &back));
                ASSERT_EQ(state_format(&back, &again, &size2, NULL), 0);
                ASSERT_EQ(size, size2);
                ASSERT_EQ(memcmp(text, again, size), 0);
                state_done(&back);
                ASSERT(!back.tenants && back.n == 0);
        }
}

/* Escapes a hand-edited file may use but the writer does not, decoded to the same bytes. */
TEST(parse_escapes) {
        _cleanup_free_ char *text = sample_text(NULL), *edited = NULL;
        State s = {};

        edited = replace(text, "\"acme-web.1-vm\"", "\"\\u0061cme\\u002dx \\u00e9 \\ud83d\\ude00\"");
        rechecksum(edited);
        StateError e;
        int r = state_parse(edited, strlen(edited), &s, &e);
        if (r < 0)
                fprintf(stderr, "%s\n", e.message);
        ASSERT_EQ(r, 0);
        ASSERT_STREQ(s.tenants[0].domain, "acme-x é 😀");
        state_done(&s);
}

/* The 3 a.m. workflow: an edit is refused with the checksum the content has; using it, the file loads. */
TEST(hand_edit_with_checksum_fixed) {
        _cleanup_free_ char *text = sample_text(NULL), *edited = NULL, *fixed = NULL;
        StateError e;
        State s = {};
        const char *at;
        char want[9];

        edited = replace(text, "\"vlan\": 100", "\"vlan\": 200");
        ASSERT_EQ(state_parse(edited, strlen(edited), &s, &e), -EBADMSG);
        ASSERT_CONTAINS(e.message, "checksum mismatch");
        ASSERT_EQ(e.line, 46);
        at = strstr(e.message, "content has crc32c:");
        ASSERT(at);
        snprintf(want, sizeof(want), "%.8s", at + strlen("content has crc32c:"));
        fixed = strdup(edited);
        ASSERT(fixed);
        memcpy(strstr(fixed, "crc32c:") + 7, want, 8);
        ASSERT_EQ(state_parse(fixed, strlen(fixed), &s, &e), 0);
        ASSERT_EQ(s.tenants[0].vlan, 200);
        state_done(&s);
}

typedef struct BadCase {
        const char *from, *to;     /* edit of the sample file; checksum fixed afterwards unless raw */
        bool raw;
        int line;                  /* expected StateError.line, 0 = not checked */
        const char *message;       /* substring of the message */
} BadCase;

/* Every rule a hand-edited file can break, with what and where. */
TEST(parse_rules) {
        static const BadCase cases[] = {
                { "\"tenant\": \"globex_db\"", "\"tenant\": \"acme-web.1\"", false, 22,
                  "tenant id \"acme-web.1\" of tenants[1] \"acme-web.1\" is also that of tenants[0] \"acme-web.1\" at line 6" },
                { "\"vf\": \"0000:c1:01.7\"", "\"vf\": \"0000:41:00.2\"", false, 37,
                  "vf \"0000:41:00.2\" of tenants[2] \"initech\" is also that of tenants[0] \"acme-web.1\"" },
                { "\"seq\": 12", "\"seq\": 9", false, 43, "seq 9 of tenants[2] \"initech\" is also that of tenants[1]" },
                { "\"tenant\": \"initech\"", "\"tenant\": \"init tech\"", false, 34, "tenants[2].tenant \"init tech\" is not a valid tenant id" },
                { "\"tenant\": \"initech\"", "\"tenant\": \"\"", false, 34, "is not a valid tenant id" },
                { "\"tenant\": \"initech\"",
                  "\"tenant\": \"a234567890123456789012345678901234567890123456789012345678901234\"", false, 34,
                  "tenants[2].tenant is longer than 63 bytes" },
                { "\"class\": \"best-effort\"", "\"class\": \"Best\"", false, 23, "tenants[1].class \"Best\" is not a valid class name" },
                { "\"kind\": \"virtio\"", "\"kind\": \"sriov\"", false, 24, "expected \"vf\", \"virtio\" or \"waiting\"" },
                { "\"kind\": \"virtio\"", "\"kind\": \"vf\"", false, 25, "tenants[1] is of kind \"vf\" but its vf is null" },
                { "\"vf\": null", "\"vf\": \"0000:41:00.5\"", false, 25, "tenants[1] is of kind \"virtio\" but has vf \"0000:41:00.5\"" },
                { "\"0000:41:00.2\"", "\"0000:41:00.A\"", false, 10, "tenants[0].vf \"0000:41:00.A\" is not valid" },
                { "\"0000:41:00.2\"", "\"0000:41:00.8\"", false, 10, "function 0-7" },
                { "\"0000:41:00.2\"", "\"0000:41:20.2\"", false, 10, "device 00-1f" },
                { "\"0000:41:00.2\"", "\"41:00.2\"", false, 10, "expected a PCI address" },
                { "\"52:54:00:12:34:07\"", "\"53:54:00:12:34:07\"", false, 11, "expected a unicast MAC address" },
                { "\"52:54:00:12:34:07\"", "\"52:54:00:12:34\"", false, 11, "expected a MAC address" },
                { "\"vlan\": 100", "\"vlan\": 4095", false, 12, "tenants[0].vlan = 4095 is out of range; expected 0..4094" },
                { "\"vlan\": 100", "\"vlan\": -1", false, 12, "out of range" },
                { "\"vlan\": 100", "\"vlan\": 1e2", false, 12, "must be a whole number" },
                { "\"vlan\": 100", "\"vlan\": 1.0", false, 12, "must be a whole number" },
                { "\"vlan\": 100", "\"vlan\": 0100", false, 12, "leading zero" },
                { "\"vlan\": 100", "\"vlan\": \"100\"", false, 12, "expected an integer for tenants[0].vlan, found '\"'" },
                { "\"numa_node\": 0", "\"numa_node\": 1024", false, 14, "expected 0..1023" },
                { "\"rx_usecs\": 8", "\"rx_usecs\": 100001", false, 16, "tenants[0].coalesce.rx_usecs = 100001 is out of range" },
                { "\"rx_usecs\": 8,\n", "", false, 15, "tenants[0].coalesce has no \"rx_usecs\" key" },
                { "\"seq\": 7", "\"seq\": 9223372036854775808", false, 19, "out of range" },
                { "\"domain\": null", "\"domain\": \"\"", false, 28, "tenants[1].domain is empty; expected a libvirt domain name, or null" },
                { "\"domain\": null", "\"domain\": \"a/b\"", false, 28, "no '/'" },
                { "\"domain\": null", "\"domain\": \"a\\u0000b\"", false, 28, "NUL characters are not allowed" },
                { "\"domain\": null", "\"domain\": \"a\\u0007b\"", false, 28, "no control characters" },
                { "\"domain\": null", "\"domain\": \"a\tb\"", false, 28, "control character 0x09" },
                { "\"domain\": null", "\"domain\": \"a\xc3\x28\"", false, 28, "invalid UTF-8" },
                { "\"domain\": null", "\"domain\": \"\\ud800x\"", false, 28, "without its low half" },
                { "\"domain\": null", "\"domain\": \"\\q\"", false, 28, "invalid escape" },
                { "\"version\": 1", "\"version\": 2", false, 3, "version 2 is not supported; this sriovd reads version 1 (written by a newer sriovd?)" },
                { "\"version\": 1", "\"version\": 0", false, 3, "version 0 is not supported" },
                { "\"format\": \"sriovd-allocations\"", "\"format\": \"other\"", false, 2, "not a sriovd state file?" },
                { "\"generation\": 42", "\"generation\": -1", false, 4, "generation = -1 is out of range" },
                { "\"seq\": 7", "\"seq\": 7, \"color\": 1", false, 19, "unknown key \"color\" in tenants[0]; expected one of: tenant, class, kind" },
                { "\"seq\": 7", "\"seq\": 7, \"seq\": 8", false, 19, "key \"seq\" appears twice in tenants[0]" },
                { "      \"numa_node\": null,\n", "", false, 21, "tenants[1] has no \"numa_node\" key" },
                { "\"seq\": 7", "\"seq\": 7,", false, 20, "trailing comma in tenants[0]" },
                { "\"generation\": 42,\n", "", false, 1, "the file has no \"generation\" key" },
                { "\n}\n", "\n}\n\n", true, 48, "unexpected content after the final '}'" },
                { "\n}\n", "\n} x\n", true, 47, "unexpected content after the final '}'" },
                { "\n}\n", "\n}", true, 47, "ends without a newline" },
                { "\"crc32c:", "\"crc32:", true, 46, "expected \"crc32c:\" and 8 lowercase hex digits" },
                { "\"tenants\": [", "\"tenants\": {", false, 5, "expected '[' (the list of tenants), found '{'" },
                { "\"kind\": \"vf\"", "\"kind\" \"vf\"", false, 9, "expected ':' after the key, found '\"'" },
                { "\"globex_db\"", "\"globex_db", false, 22, "control character 0x0a" },
                { "{", "[", true, 1, "expected '{', found '['" },
        };

        _cleanup_free_ char *text = sample_text(NULL);

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *edited = replace(text, cases[i].from, cases[i].to);
                StateError e;
                State s = { .n = 12345 };

                if (!cases[i].raw)
                        rechecksum(edited);
                int r = state_parse(edited, strlen(edited), &s, &e);
                if (r != -EBADMSG || !strstr(e.message, cases[i].message) || (cases[i].line && (int) e.line != cases[i].line)) {
                        fprintf(stderr, "case %zu (%s -> %s): r=%d line=%u: %s\n", i, cases[i].from, cases[i].to, r, e.line, e.message);
                        abort();
                }
                ASSERT_EQ(s.n, 12345);   /* untouched on failure */
        }

        /* A key moved after the checksum would not be covered by it. */
        {
                _cleanup_free_ char *a = replace(text, "  \"generation\": 42,\n", "");
                _cleanup_free_ char *b = replace(a, "\n}\n", ",\n  \"generation\": 42\n}\n");
                StateError e;
                State s;

                ASSERT_EQ(state_parse(b, strlen(b), &s, &e), -EBADMSG);
                ASSERT_CONTAINS(e.message, "line 46, column 3: \"generation\" after \"checksum\"; the checksum must be the last key");
        }
}

/*
 * What json-c lets through, even in its strict mode, and the format does not: each refused
 * with what and where, as the rules above are.
 */
/* pin_pf, domain_uuid and owner: optional, absent when empty, round-tripped, and checked by name. */
TEST(scheduler_keys) {
        _cleanup_free_ char *text = NULL, *plain = sample_text(NULL);
        StateTenant t = tenant_vf("3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b", "0000:41:01.2", 3);
        State s = { .tenants = &t, .n = 1, .generation = 5 }, back = {};
        StateError e = {};
        size_t size;
        static const struct {
                const char *member, *message;
        } bad[] = {
                { "\"pin_pf\": \"41:00.0\"", "tenants[1].pin_pf \"41:00.0\" is not valid" },
                { "\"pin_pf\": 7", "expected a string for tenants[1].pin_pf" },
                { "\"domain_uuid\": \"3F2A9C1E-5B7D-4E8F-9A0B-1C2D3E4F5A6B\"", "tenants[1].domain_uuid" },
                { "\"domain_uuid\": \"\"", "tenants[1].domain_uuid \"\" is not valid" },
                { "\"owner\": \"a b\"", "tenants[1].owner \"a b\" is not valid" },
                { "\"owner\": \"\"", "tenants[1].owner \"\" is not valid" },
        };

        /* A file without them is what every earlier sriovd wrote, and it loads. */
        ASSERT(!strstr(plain, "pin_pf") && !strstr(plain, "domain_uuid") && !strstr(plain, "owner"));
        ASSERT_EQ(state_parse(plain, strlen(plain), &back, &e), 0);
        ASSERT_STREQ(back.tenants[0].pin_pf, "");
        state_done(&back);

        strscpy(t.pin_pf, sizeof(t.pin_pf), "0000:41:00.0");
        strscpy(t.domain_uuid, sizeof(t.domain_uuid), t.tenant);
        strscpy(t.owner, sizeof(t.owner), "placement");
        ASSERT_EQ(state_format(&s, &text, &size, NULL), 0);
        ASSERT_CONTAINS(text, "\"pin_pf\": \"0000:41:00.0\"");
        ASSERT_EQ(state_parse(text, size, &back, &e), 0);
        ASSERT_STREQ(back.tenants[0].pin_pf, "0000:41:00.0");
        ASSERT_STREQ(back.tenants[0].domain_uuid, t.tenant);
        ASSERT_STREQ(back.tenants[0].owner, "placement");
        state_done(&back);

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char member[96];
                _cleanup_free_ char *edited = NULL;

                snprintf(member, sizeof(member), "\"seq\": 9, %s", bad[i].member);
                edited = replace(plain, "\"seq\": 9", member);
                rechecksum(edited);
                e = (StateError) {};
                ASSERT_EQ(state_parse(edited, strlen(edited), &back, &e), -EBADMSG);
                ASSERT_CONTAINS(e.message, bad[i].message);
        }

        strscpy(t.domain_uuid, sizeof(t.domain_uuid), "not-a-uuid");
        ASSERT_EQ(state_validate(&s, &e), -EINVAL);
        ASSERT_CONTAINS(e.message, "domain_uuid is not valid");
        strscpy(t.domain_uuid, sizeof(t.domain_uuid), "");
        strscpy(t.pin_pf, sizeof(t.pin_pf), "0000:41:00.9");
        ASSERT_EQ(state_validate(&s, &e), -EINVAL);
        ASSERT_CONTAINS(e.message, "pin_pf is not valid");
}

TEST(parse_stricter_than_json_c) {
        static const BadCase cases[] = {
                { "\"domain\": null", "\"domain\": \"\\udc00\"", false, 28, "lone low surrogate \\udc00 in tenants[1].domain" },
                { "\"domain\": null", "\"domain\": \"\\ud800\\u0041\"", false, 28, "without its low half" },
                { "\"domain\": null", "\"domain\": 'x'", false, 28, "expected a value for tenants[1].domain, found '''" },
                { "\"tenant\": \"globex_db\"", "'tenant': \"globex_db\"", false, 22, "expected a string for a key, found '''" },
                { "\"vlan\": 100", "\"vlan\": NaN", false, 12, "expected a value for tenants[0].vlan, found 'N'" },
                { "\"vlan\": 100", "\"vlan\": Infinity", false, 12, "found 'I'" },
                { "\"vlan\": 100", "\"vlan\": -Infinity", false, 12, "expected a value for tenants[0].vlan, found '-'" },
                { "\"vlan\": 100", "\"vlan\": 1.", false, 12, "tenants[0].vlan must be a whole number" },
                { "\"vlan\": 100", "\"vlan\": true", false, 12, "expected an integer for tenants[0].vlan, found 't'" },
                { "\"vlan\": 100", "\"vlan\": +1", false, 12, "found '+'" },
                { "\"vlan\": 100", "\"vlan\": 0x10", false, 12, "found 'x'" },
                { "\"vlan\": 100", "\"vlan\": /* c */ 100", false, 12, "found '/'" },
                { "\"seq\": 7", "\"seq\": 99999999999999999999", false, 19, "tenants[0].seq is out of range; expected 0..9223372036854775807" },
                { "\"seq\": 7", "\"seq\": 18446744073709551615", false, 19, "tenants[0].seq is out of range" },
                { "\"version\": 1", "\"version\": -9223372036854775809", false, 3, "is not supported" },
                { "\"domain\": null", "\"domain\": \"a\xc0\x80\"", false, 28, "invalid UTF-8 in tenants[1].domain" },            /* overlong */
                { "\"domain\": null", "\"domain\": \"a\xed\xa0\x80\"", false, 28, "invalid UTF-8" },   /* a surrogate */
                { "\"domain\": null", "\"domain\": \"a\xf4\x90\x80\x80\"", false, 28, "invalid UTF-8" },   /* > U+10FFFF */
                { "\"seq\": 7", "\"seq\": 7, \"\\u0073eq\": 8", false, 19, "key \"seq\" appears twice in tenants[0]" },
                { "\"version\": 1", "\"version\": 1, \"version\": 1", false, 3, "key \"version\" appears twice in the file" },
                { "\"domain\": null", "\"domain\": [[[[[[[[1]]]]]]]]", false, 28, "nested deeper than 8 levels" },
                { "\"domain\": null", "\"domain\": {\"a\": 1}", false, 28, "expected a string for tenants[1].domain, found '{'" },
                { "\"coalesce\": null", "\"coalesce\": [1]", false, 30, "expected '{', found '['" },
                { "\"rx_usecs\": 8", "\"rx_\\u0075secs\": 8", false, 0, NULL },   /* escapes in a key are fine */
                { "\"seq\": 7", "\"seq\": 7, \"c\\u006flor\": 1", false, 19, "unknown key \"color\" in tenants[0]" },
                { "\"seq\": 7", "\"seq\": 7, \"color\": [1,]", false, 19, "trailing comma in tenants[0].color" },
        };
        _cleanup_free_ char *text = sample_text(NULL);

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *edited = replace(text, cases[i].from, cases[i].to);
                StateError e = {};
                State s = { .n = 12345 };
                int r;

                rechecksum(edited);
                r = state_parse(edited, strlen(edited), &s, &e);
                if (!cases[i].message) {
                        if (r < 0)
                                fprintf(stderr, "case %zu: %s\n", i, e.message);
                        ASSERT_EQ(r, 0);
                        ASSERT_EQ(s.tenants[0].rx_usecs, 8);
                        state_done(&s);
                        continue;
                }
                if (r != -EBADMSG || !strstr(e.message, cases[i].message) || (int) e.line != cases[i].line) {
                        fprintf(stderr, "case %zu (%s -> %s): r=%d line=%u: %s\n", i, cases[i].from, cases[i].to, r, e.line, e.message);
                        abort();
                }
                ASSERT_EQ(s.n, 12345);
        }

        /* NUL bytes, which json-c takes for the end of its input: in a string, and after the file. */
        {
                _cleanup_free_ char *a = replace(text, "\"domain\": null", "\"domain\": \"a@b\"");
                size_t n = strlen(a);
                StateError e;
                State s;

                rechecksum(a);
                *strchr(a, '@') = 0;
                ASSERT_EQ(state_parse(a, n, &s, &e), -EBADMSG);
                ASSERT_CONTAINS(e.message, "line 28, column 19: control character 0x00 in tenants[1].domain");
        }
        {
                size_t n;
                _cleanup_free_ char *a = sample_text(&n), *b = malloc(n + 1);
                StateError e;
                State s;

                ASSERT(b);
                memcpy(b, a, n);
                b[n] = 0;
                ASSERT_EQ(state_parse(b, n + 1, &s, &e), -EBADMSG);
                ASSERT_CONTAINS(e.message, "line 48, column 1: unexpected content after the final '}'");
        }
}

TEST(parse_limits) {
        /* One tenant more than allowed: refused without reading on. */
        size_t cap = (size_t) (STATE_TENANTS_MAX + 1) * 200 + 1024, n = 0;
        _cleanup_free_ char *text = malloc(cap);
        StateError e;
        State s;

        ASSERT(text);
        n += (size_t) snprintf(text + n, cap - n, "{\"format\": \"sriovd-allocations\", \"version\": 1, \"generation\": 1, \"tenants\": [\n");
        for (int i = 0; i <= STATE_TENANTS_MAX; i++)
                n += (size_t) snprintf(text + n, cap - n,
                                       "%s{\"tenant\": \"t%d\", \"class\": \"c\", \"kind\": \"virtio\", \"vf\": null, \"mac\": \"02:00:00:00:00:01\", "
                                       "\"vlan\": null, \"domain\": null, \"numa_node\": null, \"coalesce\": null, \"seq\": %d}\n",
                                       i ? "," : "", i, i);
        n += (size_t) snprintf(text + n, cap - n, "], \"checksum\": \"crc32c:00000000\"}\n");
        ASSERT_EQ(state_parse(text, n, &s, &e), -EBADMSG);
        ASSERT_CONTAINS(e.message, "more than 16384 tenants");
        ASSERT_EQ(e.line, STATE_TENANTS_MAX + 2);

        ASSERT_EQ(state_parse("", 0, &s, &e), -EBADMSG);
        ASSERT_CONTAINS(e.message, "the file is empty");
        ASSERT_EQ(state_parse(text, STATE_FILE_SIZE_MAX + 1u, &s, &e), -EBADMSG);   /* size checked before reading */
        ASSERT_CONTAINS(e.message, "expected at most 16777216");
        ASSERT_EQ(state_parse("\0\0\0\0", 4, &s, &e), -EBADMSG);
        ASSERT_CONTAINS(e.message, "found byte 0x00");
}

/* What state_save would refuse to write, so nothing written is ever read back as corrupt. */
static const char *validate_edit(unsigned i, StateTenant *t) {
        switch (i) {
        case 0: strcpy(t[2].tenant, "a b"); return "tenants[2] \"a b\": tenant id is not valid";
        case 1: strcpy(t[2].class_name, ""); return "class is not valid";
        case 2: t[2].kind = 3; return "kind is not valid";
        case 3: strcpy(t[2].vf, ""); return "vf is not valid";
        case 4: strcpy(t[1].vf, "0000:41:00.3"); return "vf is not valid; expected none unless kind is vf";
        case 5: t[2].mac[0] = 0xff; return "mac is not valid";
        case 6: t[2].vlan = 4095; return "vlan is not valid";
        case 7: t[2].vlan = -2; return "vlan is not valid";
        case 8: t[2].numa_node = -2; return "numa_node is not valid";
        case 9: strcpy(t[2].domain, "\xff"); return "domain is not valid; expected valid UTF-8";
        case 10: strcpy(t[2].domain, "a\nb"); return "domain is not valid";
        case 11: t[2].have_coalesce = true; t[2].tx_usecs = 100001; return "coalesce is not valid";
        case 12: t[2].seq = (uint64_t) INT64_MAX + 1; return "seq is not valid";
        case 13: memset(t[2].tenant, 'a', sizeof(t[2].tenant)); return "not NUL-terminated";
        case 14: strcpy(t[2].tenant, "globex_db"); return "tenant id \"globex_db\" of tenants[2] \"globex_db\" is also that of tenants[1]";
        case 15: strcpy(t[2].vf, "0000:41:00.2"); return "vf \"0000:41:00.2\" of tenants[2]";
        case 16: t[0].seq = 12; return "seq 12 of tenants[2] \"initech\" is also that of tenants[0]";
        }
        return NULL;
}

TEST(validate) {
        for (unsigned i = 0;; i++) {
                State s = sample();
                char *text = NULL;
                size_t size = 0;
                StateError e;
                const char *message = validate_edit(i, s.tenants);

                if (!message)
                        break;
                ASSERT_EQ(state_validate(&s, &e), -EINVAL);
                if (!strstr(e.message, message)) {
                        fprintf(stderr, "case %u: %s\n", i, e.message);
                        abort();
                }
                ASSERT_EQ(state_format(&s, &text, &size, &e), -EINVAL);
                ASSERT(!text);
        }

        State s = sample();
        s.generation = (uint64_t) INT64_MAX + 1;
        ASSERT_EQ(state_validate(&s, NULL), -EINVAL);
        s = (State) { .n = 1 };
        ASSERT_EQ(state_validate(&s, NULL), -EINVAL);
        s = (State) { .tenants = sample_tenants, .n = STATE_TENANTS_MAX + 1 };
        ASSERT_EQ(state_validate(&s, NULL), -EINVAL);
}

/*
 * A private state directory. On tmpfs where there is one, as the corruption loops load and
 * move aside ~10^3 files, each with a directory fsync. The crash test wants a disk instead
 * (/var/tmp): there fsync() takes real time, so most kills land inside a save rather than
 * between two. $SRIOVD_TEST_STATE_TMP overrides both.
 */
typedef struct Dir {
        char path[PATH_MAX];
        int fd;
} Dir;

static void dir_new_on(Dir *d, bool disk) {
        const char *tmp = getenv("SRIOVD_TEST_STATE_TMP");

        if (!tmp)
                tmp = disk ? (access("/var/tmp", W_OK) == 0 ? "/var/tmp" : "/tmp")
                           : (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");

        snprintf(d->path, sizeof(d->path), "%s/sriovd-state-XXXXXX", tmp);
        ASSERT(mkdtemp(d->path));
        d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT(d->fd >= 0);
}

static void dir_new(Dir *d) {
        dir_new_on(d, false);
}

static void dir_done(Dir *d) {
        char cmd[PATH_MAX + 16];

        close(d->fd);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", d->path);
        ASSERT_EQ(system(cmd), 0);
}

static void file_write(int dir_fd, const char *name, const void *data, size_t size) {
        _cleanup_close_ int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ASSERT(fd >= 0);
        ASSERT_EQ(write(fd, data, size), (ssize_t) size);
}

/* The file's bytes, NUL-terminated; NULL if it does not exist. */
static char *file_read(int dir_fd, const char *name, size_t *ret_size) {
        _cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
        struct stat st;
        char *buf;

        if (fd < 0) {
                ASSERT_EQ(errno, ENOENT);
                return NULL;
        }
        ASSERT(fstat(fd, &st) == 0);
        buf = malloc((size_t) st.st_size + 1);
        ASSERT(buf);
        ASSERT_EQ(read(fd, buf, (size_t) st.st_size), st.st_size);
        buf[st.st_size] = 0;
        if (ret_size)
                *ret_size = (size_t) st.st_size;
        return buf;
}

/* Entries of the directory other than . and .., matching prefix. */
static unsigned dir_count(int dir_fd, const char *prefix) {
        DIR *d = fdopendir(openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        struct dirent *de;
        unsigned n = 0;

        ASSERT(d);
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, "..") && strncmp(de->d_name, prefix, strlen(prefix)) == 0)
                        n++;
        closedir(d);
        return n;
}

/* "allocations.json.corrupt-YYYYMMDDTHHMMSSZ" with an optional "-N" */
static bool aside_name_valid(const char *s) {
        const char *p = NAME ".corrupt-";

        if (strncmp(s, p, strlen(p)) != 0)
                return false;
        s += strlen(p);
        for (int i = 0; i < 16; i++)
                if (i == 8 ? s[i] != 'T' : i == 15 ? s[i] != 'Z' : (s[i] < '0' || s[i] > '9'))
                        return false;
        s += 16;
        if (*s == 0)
                return true;
        if (*s++ != '-' || !*s)
                return false;
        return strspn(s, "0123456789") == strlen(s);
}

/*
 * Write bytes as the state file and load it: must be -EBADMSG with a message, the file gone,
 * and an aside file holding exactly the same bytes. The aside file is removed afterwards so
 * the loops do not pile up thousands of them.
 */
static void assert_corrupt(int dir_fd, const void *bytes, size_t size, const char *message) {
        _cleanup_free_ char *aside = NULL, *kept = NULL;
        StateError e = {};
        State s = { .n = 777 };
        size_t kept_size;
        int r;

        file_write(dir_fd, NAME, bytes, size);
        r = state_load(dir_fd, NAME, &s, &aside, &e);
        if (r != -EBADMSG || !e.message[0] || (message && !strstr(e.message, message))) {
                fprintf(stderr, "load of %zu bytes: r=%d: %s\n", size, r, e.message);
                abort();
        }
        ASSERT_EQ(s.n, 777);
        ASSERT(aside && aside_name_valid(aside));
        ASSERT_EQ(faccessat(dir_fd, NAME, F_OK, AT_SYMLINK_NOFOLLOW), -1);
        kept = file_read(dir_fd, aside, &kept_size);
        ASSERT(kept);
        ASSERT_EQ(kept_size, size);
        ASSERT_EQ(memcmp(kept, bytes, size), 0);
        /* The next start finds no file: the caller was told once, with the aside name. */
        ASSERT_EQ(state_load(dir_fd, NAME, &s, NULL, NULL), -ENOENT);
        ASSERT_EQ(unlinkat(dir_fd, aside, 0), 0);
}

TEST(load_fresh_and_save) {
        Dir d;
        State s = sample(), loaded = {};
        struct stat st;
        StateError e;

        dir_new(&d);
        ASSERT_EQ(state_load(d.fd, NAME, &loaded, NULL, NULL), -ENOENT);
        ASSERT_EQ(dir_count(d.fd, ""), 0);

        ASSERT_EQ(state_save(d.fd, NAME, &s, &e), 0);
        ASSERT_EQ(s.generation, 43);
        ASSERT_EQ(fstatat(d.fd, NAME, &st, AT_SYMLINK_NOFOLLOW), 0);
        ASSERT_EQ(st.st_mode & 07777, 0600);
        ASSERT_EQ(dir_count(d.fd, ""), 1);   /* no temporary file left behind */

        ASSERT_EQ(state_load(d.fd, NAME, &loaded, NULL, &e), 0);
        ASSERT(state_equal(&s, &loaded));
        state_done(&loaded);

        /* Each save is the next generation. */
        s.n = 1;
        ASSERT_EQ(state_save(d.fd, NAME, &s, NULL), 0);
        ASSERT_EQ(state_load(d.fd, NAME, &loaded, NULL, NULL), 0);
        ASSERT_EQ(loaded.generation, 44);
        ASSERT_EQ(loaded.n, 1);
        state_done(&loaded);

        /* A State that breaks a rule is not written, and the file on disk stays as it was. */
        _cleanup_free_ char *before = file_read(d.fd, NAME, NULL), *after = NULL;
        State bad = sample();
        bad.tenants[1].vlan = 5000;
        ASSERT_EQ(state_save(d.fd, NAME, &bad, &e), -EINVAL);
        ASSERT_CONTAINS(e.message, "tenants[1] \"globex_db\": vlan is not valid");
        ASSERT_EQ(bad.generation, 42);
        after = file_read(d.fd, NAME, NULL);
        ASSERT_STREQ(before, after);
        ASSERT_EQ(dir_count(d.fd, ""), 1);

        /* The generation cannot wrap. */
        bad = sample();
        bad.generation = INT64_MAX;
        ASSERT_EQ(state_save(d.fd, NAME, &bad, NULL), -EOVERFLOW);

        /* A directory fd opened with O_PATH works too (the directory is fsync()ed through its own fd). */
        _cleanup_close_ int path_fd = open(d.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ASSERT(path_fd >= 0);
        ASSERT_EQ(state_save(path_fd, NAME, &s, NULL), 0);
        ASSERT_EQ(state_load(path_fd, NAME, &loaded, NULL, NULL), 0);
        ASSERT_EQ(loaded.generation, 45);
        state_done(&loaded);

        /* Names that could collide with our temporary files or leave the directory. */
        ASSERT_EQ(state_save(d.fd, ".hidden", &s, NULL), -EINVAL);
        ASSERT_EQ(state_save(d.fd, "a/b", &s, NULL), -EINVAL);
        ASSERT_EQ(state_load(d.fd, "", &loaded, NULL, NULL), -EINVAL);
        dir_done(&d);
}

TEST(load_not_a_file) {
        Dir d;
        State s;

        dir_new(&d);
        ASSERT_EQ(mkdirat(d.fd, NAME, 0700), 0);
        ASSERT_EQ(state_load(d.fd, NAME, &s, NULL, NULL), -EINVAL);

        /* A save that fails at the rename reports it, and leaves no temporary file behind. */
        s = sample();
        ASSERT_EQ(state_save(d.fd, NAME, &s, NULL), -EISDIR);
        ASSERT_EQ(s.generation, 42);
        ASSERT_EQ(dir_count(d.fd, ""), 1);
        ASSERT_EQ(unlinkat(d.fd, NAME, AT_REMOVEDIR), 0);
        ASSERT_EQ(symlinkat("/etc/passwd", d.fd, NAME), 0);
        ASSERT_EQ(state_load(d.fd, NAME, &s, NULL, NULL), -ELOOP);
        ASSERT_EQ(dir_count(d.fd, ""), 1);   /* neither was moved aside */
        dir_done(&d);
}

TEST(leftover_temp_files) {
        _cleanup_free_ char *text = sample_text(NULL);
        Dir d;
        State s;

        dir_new(&d);
        /* A crash before the rename: only the temporary file exists. Never acknowledged: gone, fresh start. */
        file_write(d.fd, "." NAME ".tmp-0123456789abcdef", text, 100);
        ASSERT_EQ(state_load(d.fd, NAME, &s, NULL, NULL), -ENOENT);
        ASSERT_EQ(dir_count(d.fd, ""), 0);

        /* Beside a good file: ignored and removed; other files left alone. */
        file_write(d.fd, NAME, text, strlen(text));
        file_write(d.fd, "." NAME ".tmp-fedcba9876543210", "{", 1);
        file_write(d.fd, "." NAME ".tmp-", "", 0);
        file_write(d.fd, "other.json", "x", 1);
        file_write(d.fd, ".other.json.tmp-0", "x", 1);
        ASSERT_EQ(state_load(d.fd, NAME, &s, NULL, NULL), 0);
        ASSERT_EQ(s.generation, 42);
        ASSERT_EQ(s.n, 3);
        state_done(&s);
        ASSERT_EQ(dir_count(d.fd, "." NAME), 0);
        ASSERT_EQ(dir_count(d.fd, ""), 3);
        dir_done(&d);
}

TEST(corrupt_truncated_at_every_offset) {
        size_t size;
        _cleanup_free_ char *text = sample_text(&size);
        Dir d;

        dir_new(&d);
        for (size_t n = 0; n < size; n++)
                assert_corrupt(d.fd, text, n, n == 0 ? "the file is empty" : n == size - 1 ? "ends without a newline" : NULL);
        ASSERT_EQ(dir_count(d.fd, ""), 0);
        dir_done(&d);
}

TEST(corrupt_flipped_bits) {
        size_t size;
        _cleanup_free_ char *text = sample_text(&size);
        _cleanup_free_ char *copy = malloc(size);
        Dir d;

        ASSERT(copy);
        /* Every single-bit error anywhere in the file, through the pure parser ... */
        for (size_t i = 0; i < size; i++)
                for (int bit = 0; bit < 8; bit++) {
                        State s;
                        StateError e;

                        memcpy(copy, text, size);
                        copy[i] ^= (char) (1 << bit);
                        if (state_parse(copy, size, &s, &e) != -EBADMSG) {
                                fprintf(stderr, "flip of bit %d at offset %zu not detected\n", bit, i);
                                abort();
                        }
                }

        /* ... and a sample of them through load, which must keep each file aside. */
        dir_new(&d);
        for (size_t i = 0; i < size; i += 13) {
                memcpy(copy, text, size);
                copy[i] ^= 0x04;
                assert_corrupt(d.fd, copy, size, NULL);
        }
        dir_done(&d);
}

TEST(corrupt_kinds) {
        size_t size;
        _cleanup_free_ char *text = sample_text(&size);
        Dir d;
        struct {
                const char *from, *to, *message;
        } cases[] = {
                { "\"version\": 1", "\"version\": 2", "version 2 is not supported" },
                { "\"crc32c:", "\"crc32c:0", "checksum \"crc32c:0" },
                { "\"tenant\": \"globex_db\"", "\"tenant\": \"acme-web.1\"", "tenant id \"acme-web.1\" of tenants[1]" },
                { "\"vf\": \"0000:c1:01.7\"", "\"vf\": \"0000:41:00.2\"", "vf \"0000:41:00.2\" of tenants[2]" },
                { "\"tenant\": \"initech\"", "\"tenant\": \"../../etc\"", "is not a valid tenant id" },
        };

        dir_new(&d);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *edited = replace(text, cases[i].from, cases[i].to);
                assert_corrupt(d.fd, edited, strlen(edited), cases[i].message);
        }

        /* A bad checksum alone. */
        {
                _cleanup_free_ char *edited = strdup(text);
                char *c = strstr(edited, "crc32c:") + 7;
                *c = *c == '0' ? '1' : '0';
                assert_corrupt(d.fd, edited, size, "checksum mismatch");
        }

        /* Larger than any valid file: kept aside without parsing it. */
        {
                _cleanup_close_ int fd = openat(d.fd, NAME, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                _cleanup_free_ char *aside = NULL;
                struct stat st;
                State s;

                ASSERT(fd >= 0);
                ASSERT_EQ(ftruncate(fd, (off_t) STATE_FILE_SIZE_MAX + 4096), 0);
                ASSERT_EQ(state_load(d.fd, NAME, &s, &aside, NULL), -EBADMSG);
                ASSERT_EQ(fstatat(d.fd, aside, &st, 0), 0);
                ASSERT_EQ(st.st_size, (off_t) STATE_FILE_SIZE_MAX + 4096);
                ASSERT_EQ(unlinkat(d.fd, aside, 0), 0);
        }
        dir_done(&d);
}

/* An aside name already taken (same second, or an operator's copy) is never overwritten. */
TEST(aside_never_overwrites) {
        _cleanup_free_ char *aside = NULL;
        char taken[3][128];
        time_t now = time(NULL);
        Dir d;
        State s;

        dir_new(&d);
        /* This second and the next two: the load happens within them. */
        for (int i = 0; i < 3; i++) {
                struct tm tm;
                time_t t = now + i;
                char stamp[32];

                gmtime_r(&t, &tm);
                strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
                snprintf(taken[i], sizeof(taken[i]), NAME ".corrupt-%s", stamp);
                file_write(d.fd, taken[i], taken[i], strlen(taken[i]));
        }
        file_write(d.fd, NAME, "garbage", 7);
        ASSERT_EQ(state_load(d.fd, NAME, &s, &aside, NULL), -EBADMSG);
        ASSERT(aside_name_valid(aside));
        for (int i = 0; i < 3; i++) {
                _cleanup_free_ char *kept = file_read(d.fd, taken[i], NULL);
                ASSERT(!streq(aside, taken[i]));
                ASSERT_STREQ(kept, taken[i]);
        }
        {
                _cleanup_free_ char *kept = file_read(d.fd, aside, NULL);
                ASSERT_STREQ(kept, "garbage");
        }
        ASSERT_EQ(dir_count(d.fd, NAME ".corrupt-"), 4);
        dir_done(&d);
}

/* Generation g of the crash test: 50-199 tenants, every one's fields depending on g. */
static void crash_state(uint64_t g, State *ret) {
        size_t n = 50 + (size_t) (g * 7) % 150;
        StateTenant *t = calloc(n, sizeof(StateTenant));

        ASSERT(t);
        for (size_t i = 0; i < n; i++) {
                char id[32], vf[16];

                snprintf(id, sizeof(id), "tenant-%zu", (size_t) (i + g) % 400);
                snprintf(vf, sizeof(vf), "0000:%02zx:%02zx.%zx", 0x41 + (i + g) % 400 / 64, (i + g) % 400 / 8 % 32, (i + g) % 8);
                t[i] = (i + g) % 4 ? tenant_vf(id, vf, g * 1000 + i) : tenant_virtio(id, g * 1000 + i);
                t[i].mac[3] = (uint8_t) (g >> 8);
                t[i].mac[4] = (uint8_t) g;
                t[i].vlan = (int) ((g + i) % 4000);
                t[i].have_coalesce = g % 2;
                t[i].rx_usecs = t[i].have_coalesce ? (unsigned) (g % 1000) : 0;
        }
        *ret = (State) { .tenants = t, .n = n, .generation = g };
}

_Noreturn static void crash_child(int dir_fd, int report_fd, uint64_t from) {
        for (uint64_t g = from + 1;; g++) {
                State s;

                crash_state(g, &s);
                s.generation = g - 1;
                if (state_save(dir_fd, NAME, &s, NULL) < 0 || s.generation != g)
                        _exit(2);
                /* 8 bytes: a pipe write this small is atomic, so the parent never sees half a report. */
                if (write(report_fd, &g, sizeof(g)) != sizeof(g))
                        _exit(3);
                state_done(&s);
        }
}

/*
 * kill -9 a process saving generation after generation, at random moments (fixed seed), and
 * load after each kill: the file must be the last generation the child reported as saved or
 * the one it was saving, with exactly that generation's content, never corrupt, missing or
 * older; and the temporary file of the interrupted save is cleaned up by the load.
 */
TEST(crash_kill9) {
        const unsigned iterations = 300;
        unsigned seed = 20240611, in_flight = 0, torn = 0;
        uint64_t base, total_saves = 0;
        struct timespec t0, t1;
        State s;
        Dir d;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        dir_new_on(&d, true);

        /*
         * Kill within 0-3 saves' time, whatever this disk's fsync() costs, so that kills land
         * before, inside and between saves alike: calibrated on the fastest of the first 5
         * generations (the first ones pay for a cold directory).
         */
        long save_us = LONG_MAX;
        for (base = 1; base <= 5; base++) {
                struct timespec a, b;

                crash_state(base, &s);
                s.generation = base - 1;
                clock_gettime(CLOCK_MONOTONIC, &a);
                ASSERT_EQ(state_save(d.fd, NAME, &s, NULL), 0);
                clock_gettime(CLOCK_MONOTONIC, &b);
                save_us = MIN(save_us, (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000);
                state_done(&s);
        }
        base = 5;
        long window_us = MIN(MAX(3 * save_us, 500L), 10000L);

        for (unsigned it = 0; it < iterations; it++) {
                uint64_t last, g;
                int pipefd[2], status;
                StateError e;
                State want;
                pid_t pid;

                ASSERT_EQ(pipe2(pipefd, O_CLOEXEC), 0);
                pid = fork();
                ASSERT(pid >= 0);
                if (pid == 0) {
                        close(pipefd[0]);
                        crash_child(d.fd, pipefd[1], base);
                }
                close(pipefd[1]);

                struct timespec delay = { .tv_nsec = (long) ((unsigned long) rand_r(&seed) % (unsigned long) window_us) * 1000 };
                nanosleep(&delay, NULL);
                ASSERT_EQ(kill(pid, SIGKILL), 0);
                ASSERT_EQ(waitpid(pid, &status, 0), pid);
                if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
                        fprintf(stderr, "iteration %u: child ended otherwise, status 0x%x\n", it, (unsigned) status);
                        abort();
                }

                last = base;
                while (read(pipefd[0], &g, sizeof(g)) == sizeof(g)) {
                        ASSERT_EQ(g, last + 1);
                        last = g;
                }
                close(pipefd[0]);
                total_saves += last - base;
                torn += dir_count(d.fd, "." NAME ".tmp-");

                ASSERT_EQ(state_load(d.fd, NAME, &s, NULL, &e), 0);
                if (s.generation != last && s.generation != last + 1) {
                        fprintf(stderr, "iteration %u: loaded generation %" PRIu64 ", last saved %" PRIu64 "\n",
                                it, s.generation, last);
                        abort();
                }
                in_flight += s.generation == last + 1;
                crash_state(s.generation, &want);
                ASSERT(state_equal(&s, &want));
                base = s.generation;
                state_done(&want);
                state_done(&s);

                /* Nothing left behind, nothing ever kept aside. */
                ASSERT_EQ(dir_count(d.fd, ""), 1);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        fprintf(stderr, "crash_kill9 in %s: a save takes %ld us, kills within %ld us; %u kills, %" PRIu64 " generations saved, %u loads found the save in flight "
                "already renamed, %u interrupted saves left a temporary file; %.1f s\n",
                d.path, save_us, window_us, iterations, total_saves, in_flight, torn,
                (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9);
        dir_done(&d);
}

static char *journal_line(uint64_t base, const StateTenant *set, size_t n_set, const char (*released)[TENANT_ID_MAX],
                          size_t n_released) {
        char *line = NULL;
        size_t size;

        ASSERT_EQ(state_journal_format(base, &(StateChange) { set, n_set, released, n_released }, &line, &size, NULL), 0);
        ASSERT_EQ(strlen(line), size);
        ASSERT(size > 0 && line[size - 1] == '\n' && !memchr(line, '\n', size - 1));   /* one line */
        return line;
}

static char *concat(const char *a, const char *b) {
        char *r = NULL;
        ASSERT(asprintf(&r, "%s%s", a, b) >= 0);
        return r;
}

/* The journal: changes against a base, the last one per tenant wins, a torn tail is dropped. */
TEST(journal_replay) {
        _cleanup_free_ char *l1 = NULL, *l2 = NULL, *l3 = NULL, *stale = NULL, *buf = NULL, *tmp = NULL;
        StateTenant a = tenant_vf("a", "0000:41:00.2", 10), b = tenant_virtio("b", 11), c = tenant_virtio("c", 12);
        StateTenant a2 = tenant_virtio("a", 10), cv = tenant_vf("c", "0000:41:00.2", 12);
        const char rel_b[][TENANT_ID_MAX] = { "b" };
        StateTenant base_tenants[2];
        StateReplay rep;
        StateError e = {};
        State s;

        base_tenants[0] = b;
        base_tenants[1] = a;
        s = (State) { .tenants = malloc(sizeof(base_tenants)), .n = 2, .generation = 7 };
        memcpy(s.tenants, base_tenants, sizeof(base_tenants));

        stale = journal_line(6, &c, 1, NULL, 0);             /* before the file was rewritten */
        l1 = journal_line(7, &a2, 1, rel_b, 1);              /* a leaves its VF, b released */
        l2 = journal_line(7, (StateTenant[]) { c }, 1, NULL, 0);
        l3 = journal_line(7, &cv, 1, NULL, 0);               /* c takes the VF a gave back */
        tmp = concat(stale, l1);
        free(buf);
        buf = concat(tmp, l2);
        free(tmp);
        tmp = concat(buf, l3);
        free(buf);
        /* A torn append: a prefix of a line, without its newline. */
        buf = concat(tmp, "{\"format\": \"sriovd-journal\", \"base\": 7, \"set\": [");

        ASSERT_EQ(state_journal_replay(buf, strlen(buf), &s, &rep, &e), 0);
        ASSERT_EQ(rep.applied, 3);
        ASSERT_EQ(rep.skipped, 1);
        ASSERT(rep.torn);
        ASSERT_EQ(s.n, 2);
        ASSERT_STREQ(s.tenants[0].tenant, "a");
        ASSERT_EQ(s.tenants[0].kind, STATE_KIND_VIRTIO);
        ASSERT_STREQ(s.tenants[1].tenant, "c");
        ASSERT_STREQ(s.tenants[1].vf, "0000:41:00.2");
        ASSERT_EQ(s.generation, 7);
        state_done(&s);

        /* A whole line that does not check out is corruption, even with good lines after it; what
         * came before it is applied. */
        s = (State) { .tenants = calloc(1, sizeof(StateTenant)), .n = 0, .generation = 7 };
        free(tmp);
        tmp = strdup(l2);
        /* Inside the checksum, still a hex digit (a flipped bit may not be, depending on the digit). */
        tmp[strlen(tmp) - 5] = tmp[strlen(tmp) - 5] == '0' ? '1' : '0';
        free(buf);
        buf = concat(l1, tmp);
        free(tmp);
        tmp = concat(buf, l3);
        ASSERT_EQ(state_journal_replay(tmp, strlen(tmp), &s, &rep, &e), -EBADMSG);
        ASSERT_CONTAINS(e.message, "line 2");
        ASSERT_CONTAINS(e.message, "checksum mismatch");
        ASSERT_EQ(rep.applied, 1);
        ASSERT_EQ(s.n, 1);
        ASSERT_STREQ(s.tenants[0].tenant, "a");

        /* A line for a newer file than this one: an older file was put back. */
        state_done(&s);
        s = (State) { .tenants = calloc(1, sizeof(StateTenant)), .generation = 3 };
        ASSERT_EQ(state_journal_replay(l1, strlen(l1), &s, &rep, &e), -EBADMSG);
        ASSERT_CONTAINS(e.message, "generation 7 of the file, which is generation 3");
        ASSERT_EQ(s.n, 0);

        /* Changes that together break a rule (two tenants on one VF): corrupt, nothing applied. */
        free(tmp);
        tmp = journal_line(3, (StateTenant[]) { tenant_vf("x", "0000:41:00.2", 1) }, 1, NULL, 0);
        free(buf);
        buf = journal_line(3, (StateTenant[]) { tenant_vf("y", "0000:41:00.2", 2) }, 1, NULL, 0);
        free(l1);
        l1 = concat(tmp, buf);
        ASSERT_EQ(state_journal_replay(l1, strlen(l1), &s, &rep, &e), -EBADMSG);
        ASSERT_CONTAINS(e.message, "change 2 of the journal breaks a rule");
        ASSERT_EQ(rep.applied, 1);   /* the longest prefix that keeps the rules */
        ASSERT_EQ(s.n, 1);
        ASSERT_STREQ(s.tenants[0].tenant, "x");
        state_done(&s);

        /* What the file refuses, the journal refuses to write. */
        StateTenant bad = tenant_virtio("bad id", 1);
        ASSERT_EQ(state_journal_format(1, &(StateChange) { &bad, 1, NULL, 0 }, &tmp, &(size_t) { 0 }, &e), -EINVAL);
}

/* Appends through a real file: durable, reset, the whole story read back by state_journal_load(). */
TEST(journal_files) {
        char dir[] = "/var/tmp/sriovd-journal-XXXXXX";
        StateTenant a = tenant_virtio("a", 1), b = tenant_vf("b", "0000:41:00.3", 2);
        const char rel_a[][TENANT_ID_MAX] = { "a" };
        _cleanup_free_ char *aside = NULL;
        StateReplay rep;
        StateError e = {};
        State s = {};
        int dfd, fd;

        ASSERT(mkdtemp(dir));
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT(dfd >= 0);
        ASSERT_EQ(state_journal_load(dfd, STATE_JOURNAL_NAME, &s, &rep, NULL, &e), 0);   /* none: empty */
        ASSERT_EQ(rep.applied, 0);
        ASSERT_EQ(state_journal_open(dfd, STATE_JOURNAL_NAME, &fd), 0);
        ASSERT_EQ(state_journal_append(fd, 0, &(StateChange) { &a, 1, NULL, 0 }, &e), 0);
        ASSERT_EQ(state_journal_append(fd, 0, &(StateChange) { &b, 1, rel_a, 1 }, &e), 0);
        ASSERT_EQ(state_journal_load(dfd, STATE_JOURNAL_NAME, &s, &rep, NULL, &e), 0);
        ASSERT_EQ(rep.applied, 2);
        ASSERT_EQ(s.n, 1);
        ASSERT_STREQ(s.tenants[0].tenant, "b");

        /* Written whole, the journal emptied: the next lines are against the new generation. */
        ASSERT_EQ(state_save(dfd, STATE_FILE_NAME, &s, &e), 0);
        ASSERT_EQ(state_journal_reset(fd), 0);
        ASSERT_EQ(state_journal_append(fd, s.generation, &(StateChange) { &a, 1, NULL, 0 }, &e), 0);
        state_done(&s);
        ASSERT_EQ(state_load(dfd, STATE_FILE_NAME, &s, NULL, &e), 0);
        ASSERT_EQ(state_journal_load(dfd, STATE_JOURNAL_NAME, &s, &rep, NULL, &e), 0);
        ASSERT_EQ(rep.applied, 1);
        ASSERT_EQ(s.n, 2);
        state_done(&s);

        /* Corrupt: moved aside, never read again, never appended after. */
        ASSERT_EQ(write(fd, "garbage\n", 8), 8);
        ASSERT_EQ(state_load(dfd, STATE_FILE_NAME, &s, NULL, &e), 0);
        ASSERT_EQ(state_journal_load(dfd, STATE_JOURNAL_NAME, &s, &rep, &aside, &e), -EBADMSG);
        ASSERT_EQ(rep.applied, 1);
        ASSERT(aside && strncmp(aside, "allocations.journal.corrupt-", 28) == 0);
        ASSERT_EQ(faccessat(dfd, STATE_JOURNAL_NAME, F_OK, 0), -1);
        state_done(&s);
        close(fd);
        close(dfd);
        sh("rm -rf %s", dir);
}

/* Journal lines as sriovd wrote them before json-c (", " and ": " between members): still read. */
TEST(journal_old_lines) {
        char line[] =
                "{\"format\": \"sriovd-journal\", \"version\": 1, \"base\": 5, \"set\": [{\"tenant\": \"a\", \"class\": \"best-effort\", "
                "\"kind\": \"vf\", \"vf\": \"0000:41:00.2\", \"mac\": \"52:54:00:12:34:01\", \"vlan\": 7, \"domain\": \"a-vm\", "
                "\"numa_node\": 0, \"coalesce\": {\"rx_usecs\": 8, \"tx_usecs\": 16}, \"seq\": 1}], \"released\": [\"b\"], "
                "\"checksum\": \"crc32c:00000000\"}\n";
        StateTenant b = tenant_virtio("b", 2);
        StateReplay rep;
        StateError e = {};
        State s = { .tenants = malloc(sizeof(StateTenant)), .n = 1, .generation = 5 };

        ASSERT(s.tenants);
        s.tenants[0] = b;
        rechecksum(line);
        ASSERT_EQ(state_journal_replay(line, strlen(line), &s, &rep, &e), 0);
        ASSERT_EQ(rep.applied, 1);
        ASSERT_EQ(s.n, 1);
        ASSERT_STREQ(s.tenants[0].tenant, "a");
        ASSERT_STREQ(s.tenants[0].vf, "0000:41:00.2");
        ASSERT(s.tenants[0].have_coalesce && s.tenants[0].rx_usecs == 8 && s.tenants[0].tx_usecs == 16);
        state_done(&s);
}

/* The journal's line as json-c writes it now: compact, read back the same way. */
TEST(journal_line_format) {
        StateTenant a = tenant_virtio("a", 3);
        const char rel[][TENANT_ID_MAX] = { "b" };
        _cleanup_free_ char *line = journal_line(9, &a, 1, rel, 1);

        ASSERT_EQ(strncmp(line, "{\"format\":\"sriovd-journal\",\"version\":1,\"base\":9,\"set\":[{\"tenant\":\"a\",\"class\":\"best-effort\","
                                "\"kind\":\"virtio\",\"vf\":null,\"mac\":\"52:54:00:ab:cd:03\",\"vlan\":null,\"domain\":null,"
                                "\"numa_node\":null,\"coalesce\":null,\"seq\":3}],\"released\":[\"b\"],\"checksum\":\"crc32c:", 200), 0);
        ASSERT_STREQ(line + strlen(line) - 3, "\"}\n");
}

int main(void) {
        RUN(crc32c_reference);
        RUN(format_exact);
        RUN(round_trip);
        RUN(parse_escapes);
        RUN(scheduler_keys);
        RUN(hand_edit_with_checksum_fixed);
        RUN(parse_rules);
        RUN(parse_stricter_than_json_c);
        RUN(parse_limits);
        RUN(validate);
        RUN(load_fresh_and_save);
        RUN(load_not_a_file);
        RUN(leftover_temp_files);
        RUN(corrupt_truncated_at_every_offset);
        RUN(corrupt_flipped_bits);
        RUN(corrupt_kinds);
        RUN(aside_never_overwrites);
        RUN(journal_replay);
        RUN(journal_files);
        RUN(journal_old_lines);
        RUN(journal_line_format);
        RUN(crash_kill9);
        return 0;
}
