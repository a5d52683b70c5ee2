/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netlink.c — sends one request and reads one answer, with the kernel's errno and extack text rather than libnl's codes */

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <string.h>
#include <sys/socket.h>

#include "sriovd/kernel/netlink-monitor.h"
#include "sriovd/kernel/netlink.h"
#include "sriovd/kernel/vf-netlink.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

int netlink_errno_from_nle(int nle) {
        /* libnl folds errnos into fewer codes in nl_syserr2nlerr(). This table maps them back. */
        static const int map[] = {
                [NLE_INTR] = EINTR,             [NLE_BAD_SOCK] = EBADF,
                [NLE_AGAIN] = EAGAIN,           [NLE_NOMEM] = ENOMEM,
                [NLE_EXIST] = EEXIST,           [NLE_INVAL] = EINVAL,
                [NLE_RANGE] = ERANGE,           [NLE_MSGSIZE] = EMSGSIZE,
                [NLE_OPNOTSUPP] = EOPNOTSUPP,   [NLE_AF_NOSUPPORT] = EAFNOSUPPORT,
                [NLE_OBJ_NOTFOUND] = ENOENT,    [NLE_NOATTR] = ENODATA,
                [NLE_MISSING_ATTR] = EBADMSG,   [NLE_SEQ_MISMATCH] = EPROTO,
                [NLE_MSG_OVERFLOW] = ENOBUFS,   [NLE_MSG_TRUNC] = EBADMSG,
                [NLE_NOADDR] = EADDRNOTAVAIL,   [NLE_MSG_TOOSHORT] = EBADMSG,
                [NLE_BUSY] = EBUSY,             [NLE_PROTO_MISMATCH] = EPROTONOSUPPORT,
                [NLE_NOACCESS] = EACCES,        [NLE_PERM] = EPERM,
                [NLE_NODEV] = ENODEV,           [NLE_IMMUTABLE] = EROFS,
                /* The objects changed during the dump, so the caller should read them again. */
                [NLE_DUMP_INTR] = EAGAIN,       [NLE_ATTRSIZE] = EMSGSIZE,
        };
        int i = nle < 0 ? -nle : nle;

        if (nle == 0)
                return 0;
        if ((size_t) i < ELEMENTSOF(map) && map[i] != 0)
                return -map[i];
        return -EIO;
}

int netlink_socket_open(int protocol, struct nl_sock **ret) {
        _cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
        int r, one = 1;

        sk = nl_socket_alloc();
        if (!sk)
                return -ENOMEM;
        r = nl_connect(sk, protocol);
        if (r < 0)
                return netlink_errno_from_nle(r);
        /*
         * Extended ACKs carry the kernel's reason for an error as text. Capping the ACK
         * stops the kernel from echoing the whole request back in every error. Kernels
         * before 4.12 lack both options and answer ENOPROTOOPT. Requests still work
         * there, only without the text.
         */
        if (setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) < 0 &&
            errno != ENOPROTOOPT)
                return -errno;
        if (setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one)) < 0 &&
            errno != ENOPROTOOPT)
                return -errno;

        *ret = TAKE_PTR(sk);
        return 0;
}

/* Parses the TLVs that start offset bytes into h's payload. Only NLMSGERR_ATTR_MSG is kept. */
static void extack_parse(const struct nlmsghdr *h, size_t offset, NlError *ret) {
        struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
        size_t payload = h->nlmsg_len - NLMSG_HDRLEN;

        if (!(h->nlmsg_flags & NLM_F_ACK_TLVS) || offset >= payload)
                return;
        if (nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *) ((uint8_t *) NLMSG_DATA(h) + offset),
                      (int) (payload - offset), NULL) < 0)
                return;
        /* nla_strlcpy() stops at the attribute's end even if the kernel did not terminate the string. */
        if (tb[NLMSGERR_ATTR_MSG])
                nla_strlcpy(ret->message, tb[NLMSGERR_ATTR_MSG], sizeof(ret->message));
}

int netlink_error_parse(const struct nlmsghdr *h, NlError *ret) {
        NlError e = {};
        size_t payload;
        int error;

        if (h->nlmsg_len < NLMSG_HDRLEN)
                return -EBADMSG;
        payload = h->nlmsg_len - NLMSG_HDRLEN;

        if (h->nlmsg_type == NLMSG_ERROR) {
                struct nlmsgerr err;
                size_t offset = sizeof(err);

                if (payload < sizeof(err))
                        return -EBADMSG;
                memcpy(&err, NLMSG_DATA(h), sizeof(err));
                /* In an uncapped ACK, the request comes next and the TLVs come after it. */
                if (!(h->nlmsg_flags & NLM_F_CAPPED) && err.msg.nlmsg_len > NLMSG_HDRLEN)
                        offset += err.msg.nlmsg_len - NLMSG_HDRLEN;
                offset = NLMSG_ALIGN(offset);
                e.error = err.error;
                extack_parse(h, offset, &e);
        } else if (h->nlmsg_type == NLMSG_DONE) {
                /* Old kernels send an empty DONE. Since 4.x, DONE carries the dump's result. */
                if (payload >= sizeof(error)) {
                        memcpy(&error, NLMSG_DATA(h), sizeof(error));
                        e.error = error;
                        extack_parse(h, NLMSG_ALIGN(sizeof(error)), &e);
                }
        } else
                return -EBADMSG;

        /* The kernel sends negative errnos. A positive one is negated so that it never looks like success. */
        if (e.error > 0)
                e.error = -e.error;
        *ret = e;
        return 0;
}

typedef struct Transaction {
        nl_recvmsg_msg_cb_t on_reply;
        void *userdata;
        NlError *err;
        int reply_error;        /* the first negative errno from on_reply */
        bool ignore_replies;    /* on_reply returned NL_STOP */
        bool interrupted;       /* the objects changed during a dump */
        bool done;
} Transaction;

static int on_valid(struct nl_msg *msg, void *arg) {
        Transaction *t = arg;
        int r;

        if (!t->on_reply || t->ignore_replies || t->reply_error < 0)
                return NL_SKIP;
        r = t->on_reply(msg, t->userdata);
        /*
         * This callback never returns NL_STOP to libnl. libnl would then drop the rest of
         * the datagram, with the ACK or DONE in it, and the next request would read a stale answer.
         */
        if (r < 0) {
                t->reply_error = r;
                return NL_SKIP;
        }
        if (r == NL_STOP) {
                t->ignore_replies = true;
                return NL_SKIP;
        }
        return r;
}

static int on_final(struct nl_msg *msg, void *arg) {
        Transaction *t = arg;

        if (netlink_error_parse(nlmsg_hdr(msg), t->err) < 0)
                t->err->error = -EBADMSG;
        t->done = true;
        return NL_STOP;
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg) {
        Transaction *t = arg;
        /* libnl passes only the payload. The header that owns it sits right before it. */
        const struct nlmsghdr *h = (const struct nlmsghdr *) ((const uint8_t *) e - NLMSG_HDRLEN);

        if (netlink_error_parse(h, t->err) < 0 || t->err->error == 0)
                t->err->error = e->error < 0 ? e->error : -EIO;
        t->done = true;
        return NL_STOP;
}

static int on_dump_intr(struct nl_msg *msg, void *arg) {
        Transaction *t = arg;

        t->interrupted = true;
        return NL_OK;
}

int netlink_transact(struct nl_sock *sk, struct nl_msg *msg, nl_recvmsg_msg_cb_t on_reply,
                     void *userdata, NlError *err) {
        _cleanup_(nl_cb_putp) struct nl_cb *sock_cb = NULL, *cb = NULL;
        NlError local;
        Transaction t = {
                .on_reply = on_reply,
                .userdata = userdata,
                .err = err ? err : &local,
        };
        struct nlmsghdr *h = nlmsg_hdr(msg);
        int r;

        nl_error_clear(t.err);

        /* The callbacks are a clone, so the socket's own callbacks stay as they were.
         * nl_socket_get_cb() takes a reference, which the cleanup of sock_cb drops. */
        sock_cb = nl_socket_get_cb(sk);
        cb = nl_cb_clone(sock_cb);
        if (!cb)
                return -ENOMEM;
        if (nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &t) < 0 ||
            nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_final, &t) < 0 ||
            nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_final, &t) < 0 ||
            nl_cb_set(cb, NL_CB_DUMP_INTR, NL_CB_CUSTOM, on_dump_intr, &t) < 0 ||
            nl_cb_err(cb, NL_CB_CUSTOM, on_error, &t) < 0)
                return -EINVAL;

        /* Every request asks for the ACK, because the ACK ends the wait.
         * NL_AUTO_SEQ gives a fresh sequence number when a request is sent again. */
        h->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
        h->nlmsg_seq = NL_AUTO_SEQ;
        r = nl_send_auto(sk, msg);
        if (r < 0)
                return t.err->error = netlink_errno_from_nle(r);

        while (!t.done) {
                r = nl_recvmsgs(sk, cb);
                /* The callbacks stop libnl at the final message. The code that libnl returns then is not an error. */
                if (r < 0 && !t.done)
                        return t.err->error = netlink_errno_from_nle(r);
        }

        if (t.err->error < 0)
                return t.err->error;
        if (t.reply_error < 0)
                return t.err->error = t.reply_error;
        if (t.interrupted)
                return t.err->error = -EAGAIN;
        return 0;
}
