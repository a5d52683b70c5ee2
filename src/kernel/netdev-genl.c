/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netdev-genl.c — reads and sets a netdev's NAPIs with napi-get and napi-set of the "netdev" generic netlink family */

#include <limits.h>
#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/kernel/netdev-genl.h"

/*
 * The family's numbers are written here because the linux-libc-dev 6.1 of Debian 12 has no
 * <linux/netdev.h> with NAPIs. The values are those that the kernel's
 * Documentation/netlink/specs/netdev.yaml fixes, as does the <linux/netdev.h> generated from it.
 * They are ABI and never renumbered. The trailing underscore keeps them apart from that header's
 * own names, in case a newer header comes in through another include.
 */
#define NETDEV_GENL_NAME "netdev"
#define NETDEV_GENL_VERSION 1

enum {
        NETDEV_CMD_NAPI_GET_ = 11,      /* since 6.8 */
        NETDEV_CMD_NAPI_SET_ = 14,      /* since 6.13 */
};

enum {
        NETDEV_A_NAPI_IFINDEX_ = 1,
        NETDEV_A_NAPI_ID_,
        NETDEV_A_NAPI_IRQ_,
        NETDEV_A_NAPI_PID_,
        NETDEV_A_NAPI_DEFER_HARD_IRQS_,         /* u32, at most S32_MAX */
        NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT_,       /* uint of 4 or 8 bytes */
        NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT_,     /* uint */
        NETDEV_A_NAPI_MAX_ = NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT_,
};

struct NetdevNl {
        struct nl_sock *sk;
        int family;
        bool have_napi_get, have_napi_set;
};

/* --- Requests --- */

static int request_new(int family, uint8_t cmd, int flags, struct nl_msg **ret) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;

        if (family <= 0)
                return -EINVAL;
        msg = nlmsg_alloc();
        if (!msg)
                return -ENOMEM;
        if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST | flags, cmd,
                         NETDEV_GENL_VERSION))
                return -EMSGSIZE;
        *ret = TAKE_PTR(msg);
        return 0;
}

static int params_validate(const NapiParams *p, unsigned *ret_n) {
        const long v[] = { p->defer_hard_irqs, p->gro_flush_timeout, p->irq_suspend_timeout };
        unsigned n = 0;

        for (size_t i = 0; i < ELEMENTSOF(v); i++) {
                if (v[i] < -1)
                        return -EINVAL;
                n += v[i] >= 0;
        }
        /* The kernel's policy makes defer-hard-irqs a u32 of at most S32_MAX. */
        if (p->defer_hard_irqs > INT32_MAX)
                return -EINVAL;
        *ret_n = n;
        return 0;
}

int netdev_nl_build_napi_set(int family, unsigned id, const NapiParams *want, struct nl_msg **ret) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        unsigned n;
        int r;

        if (family <= 0 || id == 0)
                return -EINVAL;
        r = params_validate(want, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return -ENODATA;
        r = request_new(family, NETDEV_CMD_NAPI_SET_, 0, &msg);
        if (r < 0)
                return r;
        if (nla_put_u32(msg, NETDEV_A_NAPI_ID_, id) < 0)
                return -EMSGSIZE;
        if (want->defer_hard_irqs >= 0 &&
            nla_put_u32(msg, NETDEV_A_NAPI_DEFER_HARD_IRQS_, (uint32_t) want->defer_hard_irqs) < 0)
                return -EMSGSIZE;
        /* NLA_UINT takes 4 or 8 bytes. sriovd always sends 8, as the kernel's own replies do for large values. */
        if (want->gro_flush_timeout >= 0 &&
            nla_put_u64(msg, NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT_, (uint64_t) want->gro_flush_timeout) < 0)
                return -EMSGSIZE;
        if (want->irq_suspend_timeout >= 0 &&
            nla_put_u64(msg, NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT_, (uint64_t) want->irq_suspend_timeout) < 0)
                return -EMSGSIZE;
        *ret = TAKE_PTR(msg);
        return 0;
}

/* --- Answers --- */

/* libnl checks only a minimum length, but a u32 must be exactly four bytes. */
static int attr_u32(const struct nlattr *a, uint32_t *ret) {
        if (nla_len(a) != 4)
                return -EBADMSG;
        *ret = nla_get_u32((struct nlattr *) a);
        return 0;
}

/* An NLA_UINT has four or eight bytes, as the value needs. */
static int attr_uint(const struct nlattr *a, long *ret) {
        uint64_t v;

        if (nla_len(a) == 4)
                v = nla_get_u32((struct nlattr *) a);
        else if (nla_len(a) == 8)
                v = nla_get_u64((struct nlattr *) a);
        else
                return -EBADMSG;
        if (v > LONG_MAX)
                return -EBADMSG;
        *ret = (long) v;
        return 0;
}

int netdev_nl_napi_parse(const struct nlmsghdr *h, NapiInfo *ret) {
        struct nlattr *tb[NETDEV_A_NAPI_MAX_ + 1] = {};
        NapiInfo n = { .params = NAPI_PARAMS_NONE };
        const struct genlmsghdr *g;
        struct nlattr *a;
        uint32_t v;
        int rem;

        if (!genlmsg_valid_hdr((struct nlmsghdr *) h, 0))
                return -EBADMSG;
        g = nlmsg_data(h);
        if (g->cmd != NETDEV_CMD_NAPI_GET_)
                return -EBADMSG;
        /* The attributes are walked by hand, because an nla_parse() policy cannot say "4 or 8 bytes".
         * Later attributes, such as threaded from 6.18, are skipped. An attribute that appears twice is malformed. */
        nla_for_each_attr(a, genlmsg_attrdata(g, 0), genlmsg_attrlen(g, 0), rem) {
                int t = nla_type(a);

                if (t <= 0 || t > NETDEV_A_NAPI_MAX_)
                        continue;
                if (tb[t])
                        return -EBADMSG;
                tb[t] = a;
        }
        if (rem != 0)
                return -EBADMSG;

        if (!tb[NETDEV_A_NAPI_ID_] || attr_u32(tb[NETDEV_A_NAPI_ID_], &v) < 0 || v == 0)
                return -EBADMSG;
        n.id = v;
        if (tb[NETDEV_A_NAPI_IFINDEX_]) {
                if (attr_u32(tb[NETDEV_A_NAPI_IFINDEX_], &v) < 0 || v == 0 || v > INT_MAX)
                        return -EBADMSG;
                n.ifindex = (int) v;
        }
        if (tb[NETDEV_A_NAPI_IRQ_]) {
                if (attr_u32(tb[NETDEV_A_NAPI_IRQ_], &v) < 0)
                        return -EBADMSG;
                n.irq = v;
        }
        if (tb[NETDEV_A_NAPI_PID_]) {
                if (attr_u32(tb[NETDEV_A_NAPI_PID_], &v) < 0 || v > INT_MAX)
                        return -EBADMSG;
                n.pid = (pid_t) v;
        }
        if (tb[NETDEV_A_NAPI_DEFER_HARD_IRQS_]) {
                if (attr_u32(tb[NETDEV_A_NAPI_DEFER_HARD_IRQS_], &v) < 0 || v > INT32_MAX)
                        return -EBADMSG;
                n.params.defer_hard_irqs = (long) v;
        }
        if (tb[NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT_] &&
            attr_uint(tb[NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT_], &n.params.gro_flush_timeout) < 0)
                return -EBADMSG;
        if (tb[NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT_] &&
            attr_uint(tb[NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT_], &n.params.irq_suspend_timeout) < 0)
                return -EBADMSG;
        *ret = n;
        return 0;
}

/* --- The family and its commands, from the controller --- */

typedef struct FamilyInfo {
        int id;
        bool napi_get, napi_set;
} FamilyInfo;

static int on_family(struct nl_msg *msg, void *userdata) {
        static struct nla_policy policy[CTRL_ATTR_MAX + 1] = {
                [CTRL_ATTR_FAMILY_ID] = { .type = NLA_U16 },
                [CTRL_ATTR_OPS] = { .type = NLA_NESTED },
        };
        static struct nla_policy op_policy[CTRL_ATTR_OP_MAX + 1] = {
                [CTRL_ATTR_OP_ID] = { .type = NLA_U32 },
        };
        struct nlattr *tb[CTRL_ATTR_MAX + 1], *op[CTRL_ATTR_OP_MAX + 1], *a;
        FamilyInfo *f = userdata;
        int rem;

        if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, CTRL_ATTR_MAX, policy) < 0 || !tb[CTRL_ATTR_FAMILY_ID])
                return -EBADMSG;
        f->id = nla_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
        if (!tb[CTRL_ATTR_OPS])
                return NL_OK;
        nla_for_each_nested(a, tb[CTRL_ATTR_OPS], rem) {
                uint32_t cmd;

                if (nla_parse_nested(op, CTRL_ATTR_OP_MAX, a, op_policy) < 0 || !op[CTRL_ATTR_OP_ID])
                        continue;
                cmd = nla_get_u32(op[CTRL_ATTR_OP_ID]);
                f->napi_get |= cmd == NETDEV_CMD_NAPI_GET_;
                f->napi_set |= cmd == NETDEV_CMD_NAPI_SET_;
        }
        return NL_OK;
}

/*
 * Asks CTRL_CMD_GETFAMILY by name. The same answer gives the id and the commands that this
 * kernel's family has. libnl's genl_ctrl_resolve() would keep only the id.
 */
static int family_resolve(struct nl_sock *sk, FamilyInfo *ret) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        FamilyInfo f = {};
        int r;

        r = request_new(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, &msg);
        if (r < 0)
                return r;
        if (nla_put_string(msg, CTRL_ATTR_FAMILY_NAME, NETDEV_GENL_NAME) < 0)
                return -EMSGSIZE;
        r = netlink_transact(sk, msg, on_family, &f, NULL);
        /* The controller answers ENOENT for a family that it does not have. */
        if (r == -ENOENT)
                return -EOPNOTSUPP;
        if (r < 0)
                return r;
        if (f.id <= 0)
                return -EBADMSG;
        *ret = f;
        return 0;
}

int netdev_nl_open(NetdevNl **ret) {
        _cleanup_(netdev_nl_freep) NetdevNl *n = NULL;
        FamilyInfo f;
        int r;

        n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        r = netlink_socket_open(NETLINK_GENERIC, &n->sk);
        if (r < 0)
                return r;
        r = family_resolve(n->sk, &f);
        if (r < 0)
                return r;
        n->family = f.id;
        n->have_napi_get = f.napi_get;
        n->have_napi_set = f.napi_set;
        *ret = TAKE_PTR(n);
        return 0;
}

NetdevNl *netdev_nl_free(NetdevNl *n) {
        if (!n)
                return NULL;
        nl_socket_free(n->sk);
        free(n);
        return NULL;
}

bool netdev_nl_has_napi_set(const NetdevNl *n) {
        return n && n->have_napi_set;
}

/* --- napi-get --- */

typedef struct NapiList {
        NapiInfo *napis;
        size_t n, allocated;
        int ifindex;            /* 0 means any */
        unsigned id;            /* 0 means any */
} NapiList;

static int on_napi(struct nl_msg *msg, void *userdata) {
        NapiList *l = userdata;
        NapiInfo n;

        if (netdev_nl_napi_parse(nlmsg_hdr(msg), &n) < 0)
                return -EBADMSG;
        /* The kernel filters the dump, so a NAPI of another device would be a kernel bug. */
        if ((l->ifindex > 0 && n.ifindex != l->ifindex) || (l->id > 0 && n.id != l->id))
                return -EBADMSG;
        if (GREEDY_REALLOC(l->napis, l->allocated, l->n + 1) < 0)
                return -ENOMEM;
        l->napis[l->n++] = n;
        return NL_OK;
}

static int napi_info_cmp(const void *a, const void *b) {
        const NapiInfo *x = a, *y = b;
        return (x->id > y->id) - (x->id < y->id);
}

int netdev_nl_napi_list(NetdevNl *n, int ifindex, NapiInfo **ret, size_t *ret_n, NlError *err) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        NapiList l = { .ifindex = ifindex };
        int r;

        nl_error_clear(err);
        if (ifindex <= 0)
                return -ENODEV;
        if (!n->have_napi_get)
                return -EOPNOTSUPP;
        r = request_new(n->family, NETDEV_CMD_NAPI_GET_, NLM_F_DUMP, &msg);
        if (r < 0)
                return r;
        if (nla_put_u32(msg, NETDEV_A_NAPI_IFINDEX_, (uint32_t) ifindex) < 0)
                return -EMSGSIZE;
        r = netlink_transact(n->sk, msg, on_napi, &l, err);
        if (r < 0) {
                free(l.napis);
                return r;
        }
        /* The kernel walks the device's list newest first, so the list is sorted here. */
        qsort_safe(l.napis, l.n, sizeof(*l.napis), napi_info_cmp);
        for (size_t i = 1; i < l.n; i++)
                if (l.napis[i].id == l.napis[i - 1].id) {
                        free(l.napis);
                        return -EBADMSG;
                }
        *ret = l.napis;
        *ret_n = l.n;
        return 0;
}

/* Gets one NAPI by id. Returns -ENOENT when it is gone. */
static int napi_get(NetdevNl *n, unsigned id, NapiInfo *ret, NlError *err) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        NapiList l = { .id = id };
        int r;

        r = request_new(n->family, NETDEV_CMD_NAPI_GET_, 0, &msg);
        if (r < 0)
                return r;
        if (nla_put_u32(msg, NETDEV_A_NAPI_ID_, id) < 0)
                return -EMSGSIZE;
        r = netlink_transact(n->sk, msg, on_napi, &l, err);
        if (r >= 0 && l.n != 1)
                r = -EBADMSG;
        if (r >= 0)
                *ret = l.napis[0];
        else if (err && err->error == 0)
                err->error = r;
        free(l.napis);
        return r;
}

/* --- napi-set --- */

/* Returns the fields of want that differ from cur.
 * Returns -EOPNOTSUPP for a wanted field that the kernel does not report. */
static int params_diff(const NapiParams *cur, const NapiParams *want, NapiParams *ret, unsigned *ret_n) {
        const long c[] = { cur->defer_hard_irqs, cur->gro_flush_timeout, cur->irq_suspend_timeout };
        const long w[] = { want->defer_hard_irqs, want->gro_flush_timeout, want->irq_suspend_timeout };
        long d[] = { -1, -1, -1 };
        unsigned n = 0;

        for (size_t i = 0; i < ELEMENTSOF(w); i++) {
                if (w[i] < 0)
                        continue;
                /* napi-get reports every field that napi-set takes. A field that it leaves out is one this kernel lacks. */
                if (c[i] < 0)
                        return -EOPNOTSUPP;
                if (c[i] == w[i])
                        continue;
                d[i] = w[i];
                n++;
        }
        *ret = (NapiParams) { d[0], d[1], d[2] };
        *ret_n = n;
        return 0;
}

int netdev_nl_napi_set(NetdevNl *n, unsigned id, const NapiParams *want, NlError *err) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        NapiParams d;
        NapiInfo cur;
        NlError rb;
        unsigned k;
        int r;

        nl_error_clear(err);
        if (id == 0)
                return -EINVAL;
        r = params_validate(want, &k);
        if (r < 0)
                return r;
        if (k == 0)
                return 0;
        if (!n->have_napi_set || !n->have_napi_get)
                return -EOPNOTSUPP;
        r = napi_get(n, id, &cur, err);
        if (r < 0)
                return r;
        r = params_diff(&cur.params, want, &d, &k);
        if (r < 0 || k == 0)
                return r;
        r = netdev_nl_build_napi_set(n->family, id, &d, &msg);
        if (r < 0)
                return r;
        r = netlink_transact(n->sk, msg, NULL, NULL, err);
        if (r < 0)
                return r;

        /* The read-back has its own NlError, so err keeps the set's answer. An ACK may carry a warning. */
        r = napi_get(n, id, &cur, &rb);
        if (r < 0) {
                if (err)
                        *err = rb;
                return r;
        }
        if (params_diff(&cur.params, want, &d, &k) < 0 || k != 0) {
                if (err)
                        err->error = -EIO;
                return -EIO;
        }
        return 1;
}
