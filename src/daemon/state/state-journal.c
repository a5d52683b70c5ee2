/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state-journal.c — acknowledged changes, appended beside the state file as one checksummed line each */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sriovd/kernel/rootfs.h"
#include "state-internal.h"
#include "state.h"

#define JOURNAL_FORMAT "sriovd-journal"
#define JOURNAL_VERSION 1

int state_journal_format(uint64_t base, const StateChange *c, char **ret, size_t *ret_size, StateError *ret_error) {
        _cleanup_(json_object_putp) json_object *doc = NULL;
        State check = { .tenants = (StateTenant *) c->set, .n = c->n_set };
        json_object *set, *released;
        int r;

        /* The journal refuses whatever the file would refuse, because both are read back the same way. */
        r = state_validate(&check, ret_error);
        if (r < 0)
                return r;
        for (size_t i = 0; i < c->n_released; i++)
                if (!memchr(c->released[i], 0, TENANT_ID_MAX) || state_tenant_id_check(c->released[i])) {
                        if (ret_error)
                                snprintf(ret_error->message, sizeof(ret_error->message),
                                         "released[%zu] is not a valid tenant id", i);
                        return -EINVAL;
                }
        if (base > INT64_MAX) {
                if (ret_error)
                        snprintf(ret_error->message, sizeof(ret_error->message), "base %" PRIu64 " is out of range", base);
                return -EINVAL;
        }

        doc = json_object_new_object();
        set = json_object_new_array_ext((int) c->n_set);
        released = json_object_new_array_ext((int) c->n_released);
        if (!doc || jsonc_add(doc, "format", json_object_new_string(JOURNAL_FORMAT)) < 0 ||
            jsonc_add(doc, "version", json_object_new_int(JOURNAL_VERSION)) < 0 ||
            jsonc_add(doc, "base", json_object_new_int64((int64_t) base)) < 0 ||
            jsonc_add(doc, "set", set) < 0) {   /* set now belongs to doc, or has been put. */
                json_object_put(released);
                return -ENOMEM;
        }
        if (jsonc_add(doc, "released", released) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_set; i++)
                if (jsonc_append(set, state_tenant_to_json(&c->set[i])) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < c->n_released; i++)
                if (jsonc_append(released, json_object_new_string(c->released[i])) < 0)
                        return -ENOMEM;
        if (jsonc_add(doc, "checksum", json_object_new_string(CHECKSUM_PREFIX "00000000")) < 0)
                return -ENOMEM;
        /* The line is as short as it can be, because one line is appended and synced per change. */
        return state_document_finish(doc, JSONC_COMPACT, ret, ret_size);
}

/* One change as read: a tenant set whole, or a tenant released, which records its id alone. */
typedef struct Op {
        StateTenant t;
        bool released;
        size_t order;
        size_t line;             /* which applied line it came from, 0-based */
} Op;

typedef struct LineCtx {
        DocCtx set;
        char (*released)[TENANT_ID_MAX];
        size_t n_released, n_released_alloc;
        uint64_t base;
        uint32_t checksum;
        bool have_checksum;
} LineCtx;

enum { LINE_FORMAT, LINE_VERSION, LINE_BASE, LINE_SET, LINE_RELEASED, LINE_CHECKSUM };
static const char *const line_keys[] = {
        [LINE_FORMAT] = "format",
        [LINE_VERSION] = "version",
        [LINE_BASE] = "base",
        [LINE_SET] = "set",
        [LINE_RELEASED] = "released",
        [LINE_CHECKSUM] = "checksum",
};

static int read_released(const StateText *t, const JsonPath *p, json_object *v, LineCtx *c) {
        size_t n, at;
        char d[16];
        int r;

        if (!json_object_is_type(v, json_type_array)) {
                at = state_json_locate(t, p);
                return state_text_error(t, at, "expected '[' (the released tenants), found %s", state_describe_at(t, at, d));
        }
        n = json_object_array_length(v);
        for (size_t i = 0; i < n; i++) {
                JsonPath ip = state_path_index(p, i);
                const char *why;

                if (GREEDY_REALLOC(c->released, c->n_released_alloc, c->n_released + 1) < 0)
                        return -ENOMEM;
                r = state_read_string(t, &ip, json_object_array_get_idx(v, i), "a released tenant", c->released[c->n_released],
                                      TENANT_ID_MAX);
                if (r < 0)
                        return r;
                why = state_tenant_id_check(c->released[c->n_released]);
                if (why)
                        return state_path_error(t, &ip, "released tenant \"%s\" is not a valid id; %s", c->released[c->n_released], why);
                c->n_released++;
        }
        return 0;
}

static int line_member(const StateText *t, unsigned key, const JsonPath *p, json_object *v, void *userdata) {
        LineCtx *c = userdata;
        int64_t n;
        int r;

        if (c->have_checksum) {
                JsonPath kp = *p;
                kp.key = true;
                return state_path_error(t, &kp, "\"%s\" after \"checksum\"; the checksum must be the last key", line_keys[key]);
        }
        switch (key) {
        case LINE_FORMAT:
                return state_read_format(t, p, v, JOURNAL_FORMAT);
        case LINE_VERSION:
                return state_read_version(t, p, v, JOURNAL_VERSION);
        case LINE_BASE:
                r = state_read_integer(t, p, v, "base", 0, INT64_MAX, &n);
                c->base = (uint64_t) n;
                return r;
        case LINE_SET:
                return state_read_tenants(t, p, v, &c->set);
        case LINE_RELEASED:
                return read_released(t, p, v, c);
        case LINE_CHECKSUM:
                r = state_read_checksum(t, p, v, &c->checksum);
                c->have_checksum = true;
                return r;
        }
        return -EINVAL;
}

static void line_done(LineCtx *c) {
        free(c->set.tenants);
        free(c->released);
}

/* Parse the line [start, end) of buf into *c. The line's '\n' is at end. */
static int parse_line(const char *buf, size_t start, size_t end, LineCtx *c, StateError *e) {
        _cleanup_(json_object_putp) json_object *root = NULL;
        StateText t = { .buf = buf, .start = start, .end = end, .root = "the journal line", .error = e };
        size_t value_end, checksum_key;
        uint32_t actual;
        int r;

        r = state_json_parse(&t, &root, &value_end, &checksum_key);
        if (r < 0)
                return r;
        r = state_read_object(&t, &(JsonPath) {}, root, "the journal line", line_keys, ELEMENTSOF(line_keys), line_member, c);
        if (r < 0)
                return r;
        while (value_end < end && strchr(" \t\r", buf[value_end]) && buf[value_end])
                value_end++;
        if (value_end != end)
                return state_text_error(&t, value_end, "unexpected content after the line's final '}'");
        actual = state_crc32c(buf + start, checksum_key - start);
        if (actual != c->checksum)
                return state_text_error(&t, checksum_key, "checksum mismatch: the line says " CHECKSUM_PREFIX "%08x, "
                                        "its content has " CHECKSUM_PREFIX "%08x", c->checksum, actual);
        return 0;
}

static int op_cmp(const void *a, const void *b) {
        const Op *x = a, *y = b;
        int c = strcmp(x->t.tenant, y->t.tenant);
        return c ?: (x->order > y->order) - (x->order < y->order);
}

static int tenant_cmp(const void *a, const void *b) {
        return strcmp(((const StateTenant *) a)->tenant, ((const StateTenant *) b)->tenant);
}

/*
 * Apply to s the last op of each tenant within the first `lines` journal lines, and validate the
 * result as the file would be validated. s changes only when commit is set and the result is
 * valid. ops must be sorted by op_cmp(), and s by tenant id.
 */
static int merge(State *s, const Op *ops, size_t n_ops, size_t lines, bool commit, StateError *ret_error) {
        _cleanup_free_ StateTenant *out = NULL;
        size_t i = 0, j = 0, k = 0;
        int r;

        out = calloc(s->n + n_ops + 1, sizeof(StateTenant));
        if (!out)
                return -ENOMEM;
        while (i < s->n || j < n_ops) {
                int c;

                if (j < n_ops && ops[j].line >= lines) {
                        j++;   /* The change is past the lines taken. */
                        continue;
                }
                /* Lines are in order, so a tenant's changes within the lines taken come first in its group. */
                if (j + 1 < n_ops && ops[j + 1].line < lines && streq(ops[j].t.tenant, ops[j + 1].t.tenant)) {
                        j++;   /* a later change of the same tenant supersedes this one */
                        continue;
                }
                c = i == s->n ? 1 : j == n_ops ? -1 : strcmp(s->tenants[i].tenant, ops[j].t.tenant);
                if (c < 0) {
                        out[k++] = s->tenants[i++];
                        continue;
                }
                if (c == 0)
                        i++;
                if (!ops[j].released)
                        out[k++] = ops[j].t;
                j++;
        }
        State next = { .tenants = out, .n = k, .generation = s->generation };
        r = state_validate(&next, ret_error);
        if (r < 0)
                return -EBADMSG;
        if (commit) {
                free(s->tenants);
                s->tenants = TAKE_PTR(out);
                s->n = k;
        }
        return 0;
}

/* Apply the longest run of lines whose changes together keep the file's rules, all of them if they all do. */
static int merge_longest(State *s, Op *ops, size_t n_ops, size_t lines, size_t *ret_lines, StateError *ret_error) {
        size_t lo = 0, hi = lines;
        int r;

        qsort_safe(s->tenants, s->n, sizeof(StateTenant), tenant_cmp);
        qsort_safe(ops, n_ops, sizeof(Op), op_cmp);
        r = merge(s, ops, n_ops, lines, true, ret_error);
        if (r != -EBADMSG) {
                *ret_lines = lines;
                return r;
        }
        /* The first lo lines keep the rules, and the first hi lines do not. Zero lines always keep them. */
        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                r = merge(s, ops, n_ops, mid, false, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0)
                        lo = mid;
                else
                        hi = mid;
        }
        r = merge(s, ops, n_ops, lo, true, NULL);
        if (r < 0)
                return r;
        *ret_lines = lo;
        return -EBADMSG;
}

int state_journal_replay(const char *buf, size_t size, State *s, StateReplay *ret, StateError *ret_error) {
        _cleanup_free_ Op *ops = NULL;
        StateReplay rep = {};
        size_t n_ops = 0, n_ops_alloc = 0, pos = 0;
        int bad = 0, r;

        while (pos < size) {
                const char *nl = memchr(buf + pos, '\n', size - pos);
                LineCtx c = {};

                if (!nl) {
                        /* The last line is an append that never completed, so it was never acknowledged. */
                        rep.torn = true;
                        break;
                }
                r = parse_line(buf, pos, (size_t) (nl - buf), &c, ret_error);
                if (r >= 0 && c.base > s->generation)
                        r = state_text_error(&(StateText) { .buf = buf, .end = size, .error = ret_error }, pos, "a change to generation %" PRIu64 " of the file, which is generation %"
                                             PRIu64 " (an older file put back?)", c.base, s->generation);
                if (r >= 0 && c.base < s->generation)
                        rep.skipped++;
                else if (r >= 0) {
                        if (GREEDY_REALLOC(ops, n_ops_alloc, n_ops + c.set.n + c.n_released) < 0)
                                r = -ENOMEM;
                        for (size_t i = 0; r >= 0 && i < c.set.n; i++, n_ops++)
                                ops[n_ops] = (Op) { .t = c.set.tenants[i], .order = n_ops, .line = rep.applied };
                        for (size_t i = 0; r >= 0 && i < c.n_released; i++, n_ops++) {
                                ops[n_ops] = (Op) { .released = true, .order = n_ops, .line = rep.applied };
                                strscpy(ops[n_ops].t.tenant, TENANT_ID_MAX, c.released[i]);
                        }
                        rep.applied++;
                }
                line_done(&c);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        bad = r;
                        break;
                }
                pos = (size_t) (nl - buf) + 1;
        }

        if (n_ops > 0) {
                StateError e = {};
                size_t kept = 0;

                r = merge_longest(s, ops, n_ops, rep.applied, &kept, &e);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        /*
                         * A corrupt line found first explains more, so its error is kept. Either
                         * way, the replay reports how many lines were kept.
                         */
                        if (!bad && ret_error) {
                                *ret_error = (StateError) {};
                                snprintf(ret_error->message, sizeof(ret_error->message),
                                         "change %zu of the journal breaks a rule of the file: %.300s", kept + 1,
                                         e.message);
                        }
                        bad = r;
                        rep.applied = kept;
                }
        }
        if (ret)
                *ret = rep;
        return bad;
}

int state_journal_load(int dir_fd, const char *name, State *s, StateReplay *ret, char **ret_aside,
                       StateError *ret_error) {
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        if (ret)
                *ret = (StateReplay) {};
        if (!state_name_valid(name))
                return -EINVAL;
        r = state_read_file(dir_fd, name, &buf, &size);
        if (r == -ENOENT)
                return 0;
        if (r == -EFBIG) {
                if (ret_error)
                        snprintf(ret_error->message, sizeof(ret_error->message),
                                 "the journal is larger than %u bytes; expected at most that", STATE_FILE_SIZE_MAX);
                r = -EBADMSG;
        } else if (r < 0)
                return r;
        else
                r = state_journal_replay(buf, size, s, ret, ret_error);
        if (r != -EBADMSG)
                return r;

        r = state_journal_set_aside(dir_fd, name, ret_aside);
        return r < 0 ? r : -EBADMSG;
}

int state_journal_set_aside(int dir_fd, const char *name, char **ret_aside) {
        _cleanup_free_ char *aside = NULL;
        int r;

        if (!state_name_valid(name))
                return -EINVAL;
        if (faccessat(dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        aside = malloc(NAME_MAX + 1);
        if (!aside)
                return -ENOMEM;
        r = state_move_aside(dir_fd, name, aside);
        if (r < 0)
                return r;   /* The journal was not moved, and nothing may be appended after what it holds. */
        if (ret_aside)
                *ret_aside = TAKE_PTR(aside);
        return 1;
}

int state_journal_open(int dir_fd, const char *name, int *ret_fd) {
        int fd, r;

        if (!state_name_valid(name))
                return -EINVAL;
        fd = openat(dir_fd, name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (fd < 0)
                return negative_errno();
        /* The first append's fdatasync() covers the file but not its name, so sync the directory once. */
        r = state_dir_sync(dir_fd);
        if (r < 0) {
                close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

int state_journal_append(int fd, uint64_t base, const StateChange *c, StateError *ret_error) {
        _cleanup_free_ char *line = NULL;
        size_t size;
        int r;

        r = state_journal_format(base, c, &line, &size, ret_error);
        if (r < 0)
                return r;
        return state_journal_write(fd, line, size);
}

int state_journal_write(int fd, const char *lines, size_t size) {
        off_t end;
        int r;

        end = lseek(fd, 0, SEEK_END);
        if (end < 0)
                return negative_errno();
        r = state_write_all(fd, lines, size);
        if (r >= 0 && fdatasync(fd) < 0)
                r = negative_errno();
        /* Cut the file back durably, or a refused line could come back after a crash. */
        if (r < 0 && (ftruncate(fd, end) < 0 || fdatasync(fd) < 0))
                return -EIO;   /* A torn or refused line would stay, so no append may follow it. */
        return r;
}

int state_journal_reset(int fd) {
        /* A full fsync makes sure the new length is durable before lines of the new base follow. */

        if (ftruncate(fd, 0) < 0 || fsync(fd) < 0)
                return negative_errno();
        return 0;
}
