# SPDX-License-Identifier: LGPL-2.1-or-later
"""What sriovd saved in its state directory, read independently of sriovd's own reader.

allocations.json is the file written whole; allocations.journal holds one checksummed line per
acknowledged change since (src/daemon/state/state.h). saved(state_dir) gives the tenants both
together say, after checking every checksum, the way a restarted sriovd must see them.
"""

import json
import os


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def _check(raw, what):
    """raw: one document's bytes ending in '"checksum": "crc32c:XXXXXXXX"' + close + newline."""
    key = raw.rindex(b'"checksum"')
    doc = json.loads(raw)
    want = "crc32c:%08x" % crc32c(raw[:key])
    if doc["checksum"] != want:
        raise ValueError("%s: checksum %s, content has %s" % (what, doc["checksum"], want))
    return doc


def saved(state_dir):
    """{"generation": G, "tenants": [...], "journal_lines": N}; tenants in id order."""
    path = os.path.join(state_dir, "allocations.json")
    doc = {"generation": 0, "tenants": []}
    if os.path.exists(path):
        with open(path, "rb") as f:
            doc = _check(f.read(), path)
    tenants = {t["tenant"]: t for t in doc["tenants"]}
    lines = 0
    jpath = os.path.join(state_dir, "allocations.journal")
    if os.path.exists(jpath):
        with open(jpath, "rb") as f:
            data = f.read()
        parts = data.split(b"\n")
        # The last part is "" after a final newline, or a torn append (never acknowledged).
        for raw in parts[:-1]:
            line = _check(raw + b"\n", jpath)
            if line["base"] < doc["generation"]:
                continue
            if line["base"] != doc["generation"]:
                raise ValueError("%s: a line of base %d for a file of generation %d" %
                                 (jpath, line["base"], doc["generation"]))
            for t in line["set"]:
                tenants[t["tenant"]] = t
            for tid in line["released"]:
                tenants.pop(tid, None)
            lines += 1
    # What the file promises of itself holds for file and journal together too.
    for key in ("vf", "seq"):
        values = [t[key] for t in tenants.values() if t[key] is not None]
        if len(values) != len(set(values)):
            dup = sorted(v for v in set(values) if values.count(v) > 1)
            raise ValueError("%s: %s %s held by two tenants" % (state_dir, key, dup))
    return {"generation": doc["generation"], "tenants": [tenants[k] for k in sorted(tenants)],
            "journal_lines": lines}


def mac_derive(key):
    """src/core/inventory.c mac_derive(), written again: the MAC sriovd gives a tenant (or a VF)
    that was given none."""
    m = (1 << 64) - 1
    h = 0xcbf29ce484222325
    for c in b"sriovd:" + key.encode():
        h = ((h ^ c) * 0x100000001b3) & m
    h ^= h >> 33
    h = (h * 0xff51afd7ed558ccd) & m
    h ^= h >> 33
    h = (h * 0xc4ceb9fe1a85ec53) & m
    h ^= h >> 33
    b = [(h >> (8 * i)) & 0xff for i in range(6)]
    b[0] = (b[0] & 0xfc) | 0x02
    return ":".join("%02x" % x for x in b)
