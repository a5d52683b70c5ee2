/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config-reader.c — read sriovd.conf and the tenant class files with inih into the policy model */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/shared/util.h"
#include "config-internal.h"

const char *lskip(const char *s) {
        while (*s && isspace((unsigned char) *s))
                s++;
        return s;
}

static void rstrip(char *s) {
        size_t n = strlen(s);

        while (n > 0 && isspace((unsigned char) s[n - 1]))
                s[--n] = 0;
}

/*
 * This mirrors inih's own scan exactly. For example, an inline ';' comment counts only
 * after whitespace. So the reader below classifies a line as a section header or as a
 * syntax error exactly as inih parses it.
 */
static const char *find_chars_or_comment(const char *s, const char *chars) {
        bool was_space = false;

        while (*s && !strchr(chars, *s) && !(was_space && *s == ';')) {
                was_space = isspace((unsigned char) *s);
                s++;
        }
        return s;
}

static int read_file(const char *path, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();

        for (;;) {
                ssize_t n;

                if (GREEDY_REALLOC(buf, allocated, size + 4096 + 1) < 0)
                        return -ENOMEM;
                n = read(fd, buf + size, allocated - size - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                size += (size_t) n;
                if (size > CONFIG_FILE_MAX)
                        return -EFBIG;
        }

        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

static void class_info_list_done(ClassInfoList *l) {
        free(l->items);
        *l = (ClassInfoList) {};
}

static void parser_done(Parser *p) {
        for (size_t i = 0; i < p->n_seen; i++)
                free(p->seen[i].key);
        free(p->seen);
        free(p->pf_class_lines);
        free(p->alert_lines);
}

/* ---- the line reader ---------------------------------------------------- */

static void syntax_error(Parser *p) {
        parser_error(p, "syntax error: expected \"[section]\" or \"key = value\"");
        if (p->first_syntax_error == 0)
                p->first_syntax_error = p->line;
}

/*
 * inih calls the key handler right after the reader returned the key's line. So the
 * reader's count is the key's line number. Debian builds inih without INI_HANDLER_LINENO,
 * so inih cannot give that number itself. The reader also sees every header, even that of
 * a section without keys, which inih never reports. It also sees every line that inih
 * rejects, where inih would return only the first.
 */
static void classify_line(Parser *p, const char *line) {
        _cleanup_free_ char *copy = NULL;
        char *end, *header;
        const char *rest;

        copy = strdup(line);
        if (!copy) {
                p->oom = true;
                return;
        }
        rstrip(copy);

        if (!copy[0] || strchr(";#", copy[0]))
                return;

        if (copy[0] != '[') {
                end = (char *) find_chars_or_comment(copy, "=:");
                if (*end != '=' && *end != ':')
                        syntax_error(p);
                return;
        }

        end = (char *) find_chars_or_comment(copy + 1, "]");
        if (*end != ']') {
                syntax_error(p);
                /* Otherwise its keys would be taken as keys of the previous section. */
                p->kind = SECTION_SKIP;
                p->section = NULL;
                return;
        }
        *end = 0;
        rest = lskip(end + 1);
        /* inih ignores text after "]", so a key written there would silently vanish. */
        if (*rest && !strchr(";#", *rest))
                parser_error(p, "syntax error: unexpected \"%s\" after \"]\"; expected one \"[section]\" or \"key = value\" per line",
                             Q(rest));

        header = (char *) lskip(copy + 1);
        rstrip(header);
        section_begin(p, header);
}

static char *line_reader(char *str, int num, void *stream) {
        Parser *p = stream;
        const char *s, *nl;
        size_t n, left;

        if (p->pos >= p->size || num < 3)
                return NULL;

        s = p->text + p->pos;
        left = p->size - p->pos;
        nl = memchr(s, '\n', left);
        n = nl ? (size_t) (nl - s) : left;
        p->pos += nl ? n + 1 : n;
        p->line++;

        if (p->line == 1 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
                s += 3;
                n -= 3;
        }
        /* inih would take an indented line for a continuation of the previous value. */
        while (n > 0 && isspace((unsigned char) *s)) {
                s++;
                n--;
        }

        if (memchr(s, 0, n)) {
                parser_error(p, "line contains a NUL byte; expected text");
                if (*s == '[')
                        p->kind = SECTION_SKIP;
                return strcpy(str, "\n");
        }
        if (n + 2 > (size_t) num) {
                /* A long comment harms nobody, but inih would cut any other long line. */
                if (*s == ';' || *s == '#')
                        return strcpy(str, ";\n");
                parser_error(p, "line is too long (%zu characters); expected at most %d", n, num - 2);
                if (*s == '[')
                        p->kind = SECTION_SKIP;
                return strcpy(str, "\n");
        }

        memcpy(str, s, n);
        str[n] = '\n';
        str[n + 1] = 0;
        classify_line(p, str);
        return str;
}

static int parser_run(Parser *p) {
        int r;

        /* This is a global in Debian's inih. The reader strips indentation too, in case a build ignores it. */
        ini_allow_multiline = false;

        r = ini_parse_stream(line_reader, p, handle_key, p);
        if (r == -2 || p->oom)
                return -ENOMEM;
        if (r < 0)
                return -EIO;
        /* The reader mirrors inih's rules. Should they ever differ, inih's verdict is still reported. */
        if (r > 0 && (unsigned) r != p->first_syntax_error)
                error_add(p->errors, p->file_idx, p->file, (unsigned) r,
                          "syntax error: expected \"[section]\" or \"key = value\"");
        return 0;
}

/* ---- loading ------------------------------------------------------------- */

static void report_read_error(ErrorList *errors, unsigned file_idx, const char *path, int r) {
        if (r == -EFBIG)
                error_add(errors, file_idx, path, 0, "file is larger than %d KiB; expected a small INI file",
                          CONFIG_FILE_MAX / 1024);
        else {
                errno = -r;
                error_add(errors, file_idx, path, 0, "cannot read: %m");
        }
}

static int class_load(Config *c, ErrorList *errors, unsigned file_idx, const char *name,
                      size_t *allocated, ClassInfoList *info, int *read_error) {
        _cleanup_(parser_done) Parser p = {};
        _cleanup_free_ char *path = NULL, *text = NULL;
        TenantClass cls;
        size_t size;
        int r;

        if (asprintf(&path, "%s/%s.ini", c->classes_dir, name) < 0)
                return -ENOMEM;

        if (!class_name_valid(name)) {
                error_add(errors, file_idx, path, 0,
                          "invalid class name \"%s\"; expected a file named NAME.ini, NAME matching [a-z0-9][a-z0-9_-]* and at most %d characters",
                          Q(name), CLASS_NAME_MAX - 1);
                return 0;
        }

        r = read_file(path, &text, &size);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                report_read_error(errors, file_idx, path, r);
                if (*read_error == 0)
                        *read_error = r;
                return 0;
        }

        tenant_class_init(&cls);
        strcpy(cls.name, name);

        p = (Parser) {
                .config = c,
                .errors = errors,
                .file = path,
                .file_idx = file_idx,
                .sections = config_class_sections,
                .n_sections = config_n_class_sections,
                .text = text,
                .size = size,
                .class = &cls,
        };
        r = parser_run(&p);
        if (r < 0)
                return r;

        if (p.n_headers == 0)
                error_add(errors, file_idx, path, 0, "no [class] section; expected a [class] section with at least a vnic key");
        else if (p.class_line > 0 && !p.vnic_set)
                error_add(errors, file_idx, path, p.class_line,
                          "[class] has no vnic key; expected vnic = sriov-required, sriov-preferred or virtio");
        if (cls.vhost_cpus == VHOST_CPUS_RT && !cls.vcpu_pin_rt && !p.vcpu_pinning_invalid)
                error_add(errors, file_idx, path, p.vhost_cpus_line,
                          "vhost_cpus = rt needs the guest's own RT CPUs; expected vcpu_pinning = rt in this class, "
                          "or vhost_cpus = housekeeping");
        if (cls.l3_cache_mask && !cls.vcpu_pin_rt && !p.vcpu_pinning_invalid)
                error_add(errors, file_idx, path, p.l3_mask_line,
                          "l3_cache_mask needs RT vCPU threads to put in the cache group; expected vcpu_pinning = rt "
                          "in this class");

        /* Only threaded NAPI has threads whose priority can be raised. The per-NAPI settings work either way. */
        if (cls.napi_thread_priority > 0 && cls.napi_threads != TRISTATE_ON) {
                if (p.napi_threads_line > 0)
                        error_add(errors, file_idx, path, p.napi_prio_line,
                                  "napi_thread_priority = %d needs NAPI threads, but napi_threads = %s (%s:%u); "
                                  "expected napi_threads = on in this class, or napi_thread_priority = 0",
                                  cls.napi_thread_priority, tristate_to_string(cls.napi_threads), path,
                                  p.napi_threads_line);
                else
                        error_add(errors, file_idx, path, p.napi_prio_line,
                                  "napi_thread_priority = %d needs NAPI threads, but napi_threads is not set "
                                  "(leave); expected napi_threads = on in this class, or napi_thread_priority = 0",
                                  cls.napi_thread_priority);
        }

        /*
         * The class is kept even when its file had errors. The load fails anyway, and a PF
         * that names this class should not get a second, misleading error.
         */
        if (GREEDY_REALLOC(c->classes, *allocated, c->n_classes + 1) < 0 ||
            GREEDY_REALLOC(info->items, info->allocated, c->n_classes + 1) < 0)
                return -ENOMEM;
        info->items[c->n_classes] = (ClassInfo) {
                .file_idx = file_idx,
                .prio_line = p.irq_prio_line,
                .napi_prio_line = p.napi_prio_line,
                .irq_cpus_invalid = p.irq_cpus_invalid,
                .vcpu_pinning_invalid = p.vcpu_pinning_invalid,
                .vcpu_prio_line = p.vcpu_prio_line,
                .vhost_prio_line = p.vhost_prio_line,
        };
        cls.file = TAKE_PTR(path);
        c->classes[c->n_classes++] = cls;
        return 0;
}

static int compare_strings(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static void strv_free_n(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

/* Loads every NAME.ini in classes_dir in name order, with info parallel to c->classes.
 * A missing directory means that there are no classes. */
static int load_classes(Config *c, ErrorList *errors, ClassInfoList *info, int *read_error) {
        _cleanup_closedir_ DIR *d = NULL;
        char **names = NULL;
        size_t n = 0, allocated = 0, allocated_classes = 0;
        int r = 0;

        d = opendir(c->classes_dir);
        if (!d) {
                if (errno == ENOENT)
                        return 0;
                r = negative_errno();
                report_read_error(errors, 1, c->classes_dir, r);
                if (*read_error == 0)
                        *read_error = r;
                return 0;
        }

        for (;;) {
                struct dirent *de;
                size_t len;
                char *stem;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0) {
                                r = negative_errno();
                                report_read_error(errors, 1, c->classes_dir, r);
                                if (*read_error == 0)
                                        *read_error = r;
                                r = 0;
                        }
                        break;
                }

                /* Hidden files, editor backups and READMEs are not classes. */
                len = strlen(de->d_name);
                if (de->d_name[0] == '.' || len <= 4 || !streq(de->d_name + len - 4, ".ini"))
                        continue;

                if (n >= CONFIG_CLASSES_MAX) {
                        error_add(errors, 1, c->classes_dir, 0, "more than %d class files; expected fewer",
                                  CONFIG_CLASSES_MAX);
                        break;
                }

                stem = strndup(de->d_name, len - 4);
                if (!stem || GREEDY_REALLOC(names, allocated, n + 1) < 0) {
                        free(stem);
                        r = -ENOMEM;
                        goto finish;
                }
                names[n++] = stem;
        }

        /* The names are sorted without ".ini", so c->classes is in name order and "a" comes before "a-b". */
        if (n > 0)
                qsort(names, n, sizeof(char *), compare_strings);
        for (size_t i = 0; i < n; i++) {
                r = class_load(c, errors, (unsigned) i + 1, names[i], &allocated_classes, info, read_error);
                if (r < 0)
                        break;
        }

finish:
        strv_free_n(names, n);
        return r;
}

/* Parses text into c, loads the classes and cross-checks them.
 * Errors go to *ret_errors, or are dropped when ret_errors is NULL. */
static int config_parse(Config *c, const char *text, size_t size, char **ret_errors) {
        _cleanup_(error_list_done) ErrorList errors = {};
        _cleanup_(parser_done) Parser p = {};
        _cleanup_free_ char *joined = NULL;
        _cleanup_(class_info_list_done) ClassInfoList info = {};
        int read_error = 0, r;

        p = (Parser) {
                .config = c,
                .errors = &errors,
                .file = c->path,
                .file_idx = 0,
                .sections = config_main_sections,
                .n_sections = config_n_main_sections,
                .text = text,
                .size = size,
        };
        r = parser_run(&p);
        if (r < 0)
                return r;

        if (c->classes_dir) {
                r = load_classes(c, &errors, &info, &read_error);
                if (r < 0)
                        return r;
        }

        check_class_refs(c, &errors, p.pf_class_lines);
        check_cpus(c, &errors, &p);
        check_vf_keys(c, &errors);
        check_rt_priorities(c, &errors, info.items, &p);
        r = check_alerts(c, &errors, &p);
        if (r < 0)
                return r;

        if (errors.oom)
                return -ENOMEM;
        if (errors.n_items > 0 || errors.n_dropped > 0) {
                r = error_list_join(&errors, c->path, &joined);
                if (r < 0)
                        return r;
                if (ret_errors)
                        *ret_errors = TAKE_PTR(joined);
                return read_error < 0 ? read_error : -EINVAL;
        }

        return config_build_scope(c);
}

static int classes_dir_beside(const char *path, char **ret) {
        const char *slash = strrchr(path, '/');
        int k;

        if (!slash)
                k = asprintf(ret, "%s", CLASSES_DIR_NAME);
        else
                k = asprintf(ret, "%.*s/%s", (int) (slash - path), path, CLASSES_DIR_NAME);
        return k < 0 ? -ENOMEM : 0;
}

int config_load(const char *path, Config **ret, char **ret_errors) {
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *text = NULL, *dir = NULL;
        size_t size;
        int r;

        if (ret_errors)
                *ret_errors = NULL;
        if (!path || !ret)
                return -EINVAL;

        r = read_file(path, &text, &size);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                _cleanup_(error_list_done) ErrorList errors = {};
                _cleanup_free_ char *joined = NULL;

                report_read_error(&errors, 0, path, r);
                if (error_list_join(&errors, path, &joined) < 0)
                        return -ENOMEM;
                if (ret_errors)
                        *ret_errors = TAKE_PTR(joined);
                return r;
        }

        r = classes_dir_beside(path, &dir);
        if (r < 0)
                return r;
        r = config_new(path, dir, &c);
        if (r < 0)
                return r;

        r = config_parse(c, text, size, ret_errors);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(c);
        return 0;
}

int config_load_string(const char *name, const char *text, const char *classes_dir,
                       Config **ret, char **ret_errors) {
        _cleanup_(config_freep) Config *c = NULL;
        int r;

        if (ret_errors)
                *ret_errors = NULL;
        if (!name || !text || !ret)
                return -EINVAL;

        r = config_new(name, classes_dir, &c);
        if (r < 0)
                return r;

        r = config_parse(c, text, strlen(text), ret_errors);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(c);
        return 0;
}
