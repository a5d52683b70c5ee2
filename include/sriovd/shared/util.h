/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* util.h — leaf utilities every layer may use: the clock, UTF-8, PCI address and UUID syntax */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in microseconds, the clock sd-event's timers take. */
uint64_t now_usec(void);

/*
 * Returns the length, 1 to 4, of the valid strict UTF-8 sequence at s within avail bytes. Returns 0
 * if it is invalid.
 */
size_t utf8_sequence_len(const unsigned char *s, size_t avail);

#define PCI_ADDR_MAX 16   /* "0000:41:00.0" and its NUL, with room to spare */

/*
 * Whether s is an address like "0000:41:00.0": 4:2:2.1 lowercase hex digits, a device of 00-1f and
 * a function of 0-7.
 */
bool pci_addr_valid(const char *s);
/*
 * Returns the domain and the routing ID of a valid address. The routing ID is
 * bus << 8 | device << 3 | function. Returns -EINVAL for an address that is not valid.
 */
int pci_addr_rid(const char *s, unsigned *ret_domain, unsigned *ret_rid);
#define UUID_STR_MAX 37  /* "1b4e28ba-2fa1-11d2-883f-0016d3cca427" and its NUL */

/* Whether s is a UUID in the canonical form: 8-4-4-4-12 lowercase hex digits, as libvirt prints it. */
bool uuid_valid(const char *s);

/* Whether addr is one of list's n addresses. */
bool pci_addr_in(const char (*list)[PCI_ADDR_MAX], size_t n, const char *addr);
