/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config-sections.c — section headers and keys: find each one's definition and report the mistakes */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/shared/util.h"
#include "config-internal.h"

static void format_section_list(char *buf, size_t size, const SectionDef *defs, size_t n) {
        const char *names[8];
        char parts[8][48];

        for (size_t i = 0; i < n && i < ELEMENTSOF(parts); i++) {
                snprintf(parts[i], sizeof(parts[i]), "[%s%s%s]", defs[i].name,
                         defs[i].arg_syntax ? " " : "", defs[i].arg_syntax ?: "");
                names[i] = parts[i];
        }
        format_alternatives(buf, size, names, n < ELEMENTSOF(parts) ? n : ELEMENTSOF(parts));
}

static int section_unknown(Parser *p, const char *type, const char *arg) {
        Suggestion s = SUGGESTION_INIT(type);
        char expected[256];
        const char *hint;

        for (size_t i = 0; i < p->n_sections; i++)
                suggestion_consider(&s, p->sections[i].name);
        hint = suggestion_get(&s);
        if (hint) {
                _cleanup_free_ char *better = NULL;

                if (asprintf(&better, "[%s%s%s]", hint, *arg ? " " : "", arg) < 0) {
                        p->oom = true;
                        return -ENOMEM;
                }
                return parser_error(p, "unknown section %s; did you mean %s?", p->section_display, Q(better));
        }

        format_section_list(expected, sizeof(expected), p->sections, p->n_sections);
        return parser_error(p, "unknown section %s; expected %s", p->section_display, expected);
}

/* Returns true when this header was seen before, and reports the duplicate. */
static bool section_check_duplicate(Parser *p, const char *key) {
        char *copy;

        for (size_t i = 0; i < p->n_seen; i++)
                if (streq(p->seen[i].key, key)) {
                        parser_error(p, "duplicate section %s, first at line %u; expected each section once",
                                     p->section_display, p->seen[i].line);
                        return true;
                }

        copy = strdup(key);
        if (!copy || GREEDY_REALLOC(p->seen, p->allocated_seen, p->n_seen + 1) < 0) {
                free(copy);
                p->oom = true;
                return false;
        }
        p->seen[p->n_seen].key = copy;
        p->seen[p->n_seen].line = p->line;
        p->n_seen++;
        return false;
}

static void pf_append(Parser *p, const PfPolicy *pf) {
        Config *c = p->config;

        if (GREEDY_REALLOC(c->pfs, p->allocated_pfs, c->n_pfs + 1) < 0 ||
            GREEDY_REALLOC(p->pf_class_lines, p->allocated_pf_class_lines, c->n_pfs + 1) < 0) {
                p->oom = true;
                p->scratch = true;
                return;
        }
        c->pfs[c->n_pfs] = *pf;
        p->pf_class_lines[c->n_pfs] = 0;
        p->pf_index = c->n_pfs++;
}

/* A section named after a built-in rule starts from that rule. So "enabled = no" alone switches it off. */
static void alert_begin(Parser *p, const char *name) {
        const AlertPolicy *builtin = alert_builtin_find(name);
        Config *c = p->config;
        AlertPolicy a;

        if (builtin) {
                a = *builtin;
                a.line = p->line;
        } else
                alert_policy_init(&a, name, p->line);

        if (p->scratch) {
                p->scratch_alert = a;
                return;
        }
        if (GREEDY_REALLOC(c->alerts, p->allocated_alerts, c->n_alerts + 1) < 0 ||
            GREEDY_REALLOC(p->alert_lines, p->allocated_alert_lines, c->n_alerts + 1) < 0) {
                p->oom = true;
                p->scratch = true;
                p->scratch_alert = a;
                return;
        }
        c->alerts[c->n_alerts] = a;
        p->alert_lines[c->n_alerts] = (AlertLines) { .section = p->line };
        p->alert_index = c->n_alerts++;
}

/*
 * The header comes without its brackets and surrounding whitespace. An unknown or malformed
 * header turns the section into SECTION_SKIP. A section with an invalid argument, or a
 * duplicate, still has its keys checked into a scratch object. So every mistake in the
 * section is reported in one go.
 */
int section_begin(Parser *p, char *header) {
        const SectionDef *def = NULL;
        char key[QUOTE_MAX + 32];
        char *type, *arg;
        PfPolicy pf;

        p->kind = SECTION_SKIP;
        p->section = NULL;
        p->scratch = false;
        memset(p->key_lines, 0, sizeof(p->key_lines));
        p->n_headers++;
        snprintf(p->section_display, sizeof(p->section_display), "[%s]", Q(header));

        type = header;
        arg = type + strcspn(type, " \t\v\f\r\n");
        if (*arg) {
                *arg++ = 0;
                arg = (char *) lskip(arg);
        }

        for (size_t i = 0; i < p->n_sections; i++)
                if (streq(type, p->sections[i].name))
                        def = &p->sections[i];
        if (!def)
                return section_unknown(p, type, arg);

        if (!def->arg_syntax && *arg)
                return parser_error(p, "section [%s] takes no argument; expected [%s]", def->name, def->name);
        if (def->arg_syntax && !*arg)
                return parser_error(p, "section [%s] needs an argument; expected [%s %s]",
                                    def->name, def->name, def->arg_syntax);
        if (p->n_seen >= CONFIG_SECTIONS_MAX)
                return parser_error(p, "too many sections; expected at most %d", CONFIG_SECTIONS_MAX);

        p->kind = def->kind;
        p->section = def;
        pf_policy_init(&pf, p->line);

        switch (def->kind) {
        case SECTION_MATCH:
                pf.by_addr = false;
                if (!pci_id_parse(arg, &pf.id)) {
                        parser_error(p, "invalid [match] ID \"%s\"; expected VVVV:DDDD (vendor:device, 4 hex digits each), e.g. [match 15b3:101d]",
                                     Q(arg));
                        p->scratch = true;
                        break;
                }
                snprintf(key, sizeof(key), "match %04x:%04x", pf.id.vendor, pf.id.device);
                p->scratch = section_check_duplicate(p, key);
                break;

        case SECTION_PF:
                pf.by_addr = true;
                if (!pci_addr_valid(arg)) {
                        char lower[PCI_ADDR_MAX] = {};

                        /* sysfs spells addresses in lowercase. Say so when that is the only problem. */
                        for (size_t i = 0; arg[i] && i < sizeof(lower) - 1; i++)
                                lower[i] = (char) tolower((unsigned char) arg[i]);
                        if (strlen(arg) < sizeof(lower) && pci_addr_valid(lower))
                                parser_error(p, "invalid PCI address \"%s\"; expected lowercase hex; did you mean [pf %s]?",
                                             Q(arg), lower);
                        else
                                parser_error(p, "invalid PCI address \"%s\"; expected DDDD:BB:DD.F in lowercase hex (device 00-1f, function 0-7), e.g. [pf 0000:41:00.0]",
                                             Q(arg));
                        p->scratch = true;
                        break;
                }
                strcpy(pf.addr, arg);
                snprintf(key, sizeof(key), "pf %s", arg);
                p->scratch = section_check_duplicate(p, key);
                break;

        case SECTION_ALERT:
                if (!class_name_valid(arg)) {
                        parser_error(p, "invalid alert name \"%s\"; expected [a-z0-9][a-z0-9_-]*, at most %d characters, e.g. [alert vf-drops]",
                                     Q(arg), ALERT_NAME_MAX - 1);
                        p->scratch = true;
                        alert_begin(p, "scratch");
                        break;
                }
                snprintf(key, sizeof(key), "alert %s", arg);
                p->scratch = section_check_duplicate(p, key);
                alert_begin(p, arg);
                break;

        case SECTION_CLASS:
                p->scratch = section_check_duplicate(p, def->name);
                if (p->scratch)
                        tenant_class_init(&p->scratch_class);
                else
                        p->class_line = p->line;
                break;

        default:
                /* A repeated [daemon] is reported. Its keys still land in the config, which is then discarded. */
                (void) section_check_duplicate(p, def->name);
                break;
        }

        if (def->kind == SECTION_MATCH || def->kind == SECTION_PF) {
                if (p->scratch)
                        p->scratch_pf = pf;
                else
                        pf_append(p, &pf);
        }
        return 0;
}

static void *section_data(Parser *p) {
        switch (p->kind) {
        case SECTION_DAEMON:
        case SECTION_CPUS:
        case SECTION_RT:
                return p->config;
        case SECTION_MATCH:
        case SECTION_PF:
                return p->scratch ? &p->scratch_pf : &p->config->pfs[p->pf_index];
        case SECTION_ALERT:
                return p->scratch ? &p->scratch_alert : &p->config->alerts[p->alert_index];
        case SECTION_CLASS:
                return p->scratch ? &p->scratch_class : p->class;
        default:
                return NULL;
        }
}

static int key_unknown(Parser *p, const char *name) {
        Suggestion s = SUGGESTION_INIT(name);
        char list[512];
        const char *hint;
        size_t k = 0;

        for (size_t i = 0; i < p->section->n_keys; i++)
                suggestion_consider(&s, p->section->keys[i].name);
        hint = suggestion_get(&s);
        if (hint)
                return parser_error(p, "unknown key \"%s\" in %s; did you mean \"%s\"?",
                                    Q(name), p->section_display, hint);

        /* A key valid elsewhere was most likely put under the wrong header. */
        list[0] = 0;
        for (size_t i = 0; i < p->n_sections; i++) {
                const SectionDef *d = &p->sections[i];

                if (d == p->section)
                        continue;
                for (size_t j = 0; j < d->n_keys; j++)
                        if (streq(name, d->keys[j].name) && k < sizeof(list)) {
                                int w = snprintf(list + k, sizeof(list) - k, "%s[%s%s%s]", k > 0 ? " or " : "",
                                                 d->name, d->arg_syntax ? " " : "", d->arg_syntax ?: "");
                                if (w > 0)
                                        k += (size_t) w;
                        }
        }
        if (k > 0)
                return parser_error(p, "unknown key \"%s\" in %s; it belongs in %s", Q(name), p->section_display, list);

        for (size_t i = 0; i < p->section->n_keys; i++)
                strjoin_appendf(list, sizeof(list), &k, "%s", p->section->keys[i].name);
        return parser_error(p, "unknown key \"%s\" in %s; expected one of: %s", Q(name), p->section_display, list);
}

int handle_key(void *userdata, const char *section, const char *name, const char *value) {
        Parser *p = userdata;
        const KeyDef *k = NULL;
        size_t idx = 0;

        /* inih cuts section names at 50 bytes, so the line reader tracks the real header instead. */
        (void) section;

        if (!name || !value)
                return 1;

        switch (p->kind) {
        case SECTION_NONE:
                parser_error(p, "key \"%s\" is outside any section; expected a section header such as [%s] above it",
                             Q(name), p->sections[0].name);
                return 1;
        case SECTION_SKIP:
                return 1;
        default:
                break;
        }

        for (idx = 0; idx < p->section->n_keys; idx++)
                if (streq(name, p->section->keys[idx].name)) {
                        k = &p->section->keys[idx];
                        break;
                }
        if (!k) {
                key_unknown(p, name);
                return 1;
        }

        if (p->key_lines[idx] > 0) {
                parser_error(p, "duplicate key \"%s\" in %s, first at line %u; expected each key once per section",
                             k->name, p->section_display, p->key_lines[idx]);
                return 1;
        }
        p->key_lines[idx] = p->line;

        k->parse(p, k, value, section_data(p));

        /* Always go on, so that every error is collected. inih's own error return is left to syntax errors. */
        return 1;
}
