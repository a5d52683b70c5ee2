/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netlink.h — netlink requests that keep the kernel's own errno and extack text, and VF config over rtnetlink */
#pragma once

#include <linux/if_link.h> /* IFLA_VF_LINK_STATE_AUTO/ENABLE/DISABLE */
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <stdbool.h>
#include <stdint.h>

#include "sriovd/core/inventory.h"
#include "sriovd/shared/macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_msg *, nlmsg_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_sock *, nl_socket_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_cb *, nl_cb_put);

/*
 * netlink.c holds the plumbing that the rtnetlink, ethtool and netdev genl modules share.
 *
 * An NlError is what the kernel said about a request: its errno and the extended-ack text, if
 * it gave one. A successful ACK may carry a warning text too, so message can be non-empty with
 * an error of 0.
 */
typedef struct NlError {
        int error;              /* negative errno, or 0 */
        char message[256];      /* NLMSGERR_ATTR_MSG, truncated, or "" if none */
} NlError;

static inline void nl_error_clear(NlError *e) {
        if (e)
                *e = (NlError) {};
}

/*
 * Opens a connected, blocking socket of the given protocol, such as NETLINK_ROUTE or
 * NETLINK_GENERIC, with extended ACKs enabled. The caller frees it with nl_socket_free().
 * Returns 0 or a negative errno. *ret is untouched on failure.
 */
int netlink_socket_open(int protocol, struct nl_sock **ret);

/*
 * Sends msg on sk and reads until the kernel's ACK, error or NLMSG_DONE for it. The sequence
 * number and port are completed here, and NLM_F_ACK is added. Each reply message goes to
 * on_reply, which may be NULL. on_reply returns NL_OK or NL_SKIP, or a negative errno to fail
 * the transaction. The remaining replies are still drained then, so the socket stays usable. err
 * may be NULL. It is always reset, and then filled with the kernel's errno and extack text.
 *
 * Returns 0, the kernel's negative errno, on_reply's negative errno, or a negative errno for a
 * socket failure. It never returns a libnl -NLE_* code. msg stays owned by the caller. The call
 * blocks until the answer, and netlink requests to the local kernel answer at once.
 */
int netlink_transact(struct nl_sock *sk, struct nl_msg *msg, nl_recvmsg_msg_cb_t on_reply,
                     void *userdata, NlError *err);

/*
 * Parses the kernel's answer, and it does no I/O. The answer is an NLMSG_ERROR or an NLMSG_DONE.
 * An NLMSG_ERROR is an error or an ACK, with the request echoed or capped. The payload of an
 * NLMSG_DONE may carry a dump's error. It fills ret with the errno and extack text. Returns
 * -EBADMSG when h is neither or is truncated. The extack TLVs are optional, and they are ignored
 * when malformed.
 */
int netlink_error_parse(const struct nlmsghdr *h, NlError *ret);

/*
 * Returns the nearest negative errno for a libnl -NLE_* code, or for the positive code. Returns 0
 * for 0, and -EIO for a code that has no errno, such as NLE_FAILURE, or that libnl does not know.
 * This is the one translation from libnl's codes. An errno given here is read as an -NLE_* code.
 */
int netlink_errno_from_nle(int nle);
