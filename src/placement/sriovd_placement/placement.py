# SPDX-License-Identifier: LGPL-2.1-or-later
# placement.py — the Placement requests the connector makes, over a keystoneauth1 adapter.
from keystoneauth1 import exceptions as ks_exc

# 1.14: in_tree; 1.26: reserved may equal total, so a PF with no VF to offer keeps its inventory.
MICROVERSION = "1.26"
# 1.38: a consumer's type, which tells nova's migrations from its instances.
CONSUMER_TYPE_VERSION = "1.38"


class Down(Exception):
    """Placement did not answer, or answered with a server error: back off and try again."""


class Conflict(Exception):
    """409: a provider's generation moved under us (or another conflict Placement names)."""

    def __init__(self, what, code):
        super().__init__(what)
        self.code = code


class Failed(Exception):
    """Placement refused a request for a reason that retrying will not fix."""


class Placement:
    def __init__(self, adapter):
        self.adapter = adapter
        self.requests = 0
        self._known_rcs = set()
        self._known_traits = set()
        self.consumer_types = True   # False once Placement refused microversion 1.38

    def _do(self, method, url, body=None, ok=(200,), microversion=MICROVERSION, reply=True):
        """The reply's JSON body, or None when reply is False."""
        self.requests += 1
        kw = {"microversion": microversion, "raise_exc": False, "headers": {"Accept": "application/json"}}
        if body is not None:
            kw["json"] = body
        try:
            r = self.adapter.request(url, method, **kw)
        except (ks_exc.ConnectFailure, ks_exc.ConnectTimeout, ks_exc.DiscoveryFailure,
                ks_exc.EndpointNotFound, ks_exc.RequestTimeout, ks_exc.UnknownConnectionError) as e:
            raise Down(f"{method} {url}: {e}") from None
        except ks_exc.ClientException as e:
            # Authentication failures land here: they may pass (a Keystone restart), so back off.
            raise Down(f"{method} {url}: {e}") from None
        if r.status_code in ok:
            if not reply:
                return None
            try:
                return r.json()
            except ValueError:
                # urllib3 1.x does not check Content-Length, so a reply cut short by a Placement
                # that stopped while it answered arrives as a success with a short body.
                raise Down(f"{method} {url}: {r.status_code} with {len(r.content)} bytes that are no JSON "
                           "document") from None
        what = f"{method} {url}: {r.status_code} {_error(r)}"
        if r.status_code == 409:
            raise Conflict(what, _code(r))
        if r.status_code >= 500 or r.status_code in (401, 403):
            raise Down(what)
        raise Failed(what)

    def provider(self, uuid):
        """A provider by UUID, or None."""
        try:
            return self._do("GET", f"/resource_providers/{uuid}")
        except Failed as e:
            if " 404 " in str(e):
                return None
            raise

    def provider_by_name(self, name):
        rps = self._do("GET", f"/resource_providers?name={_q(name)}")["resource_providers"]
        return rps[0] if rps else None

    def tree(self, root_uuid):
        """Every provider of the compute node's tree, in one request."""
        return self._do("GET", f"/resource_providers?in_tree={root_uuid}")["resource_providers"]

    def create_provider(self, uuid, name, parent):
        self._do("POST", "/resource_providers", {"uuid": uuid, "name": name, "parent_provider_uuid": parent},
                 ok=(200, 201), reply=False)

    def delete_provider(self, uuid):
        self._do("DELETE", f"/resource_providers/{uuid}", ok=(204, 404), reply=False)

    def inventories(self, uuid):
        """(generation, {rc: inventory})."""
        r = self._do("GET", f"/resource_providers/{uuid}/inventories")
        return r["resource_provider_generation"], r["inventories"]

    def set_inventories(self, uuid, generation, inventories):
        """The provider's new generation."""
        r = self._do("PUT", f"/resource_providers/{uuid}/inventories",
                     {"resource_provider_generation": generation, "inventories": inventories})
        return r["resource_provider_generation"]

    def traits(self, uuid):
        r = self._do("GET", f"/resource_providers/{uuid}/traits")
        return r["resource_provider_generation"], set(r["traits"])

    def set_traits(self, uuid, generation, traits):
        r = self._do("PUT", f"/resource_providers/{uuid}/traits",
                     {"resource_provider_generation": generation, "traits": sorted(traits)})
        return r["resource_provider_generation"]

    def allocations(self, uuid):
        """(generation, {consumer: {rc: amount}}) of a provider."""
        r = self._do("GET", f"/resource_providers/{uuid}/allocations")
        return (r["resource_provider_generation"],
                {c: dict(a["resources"]) for c, a in r["allocations"].items()})

    def consumer_type(self, consumer):
        """A consumer's type, such as INSTANCE or MIGRATION; None from a Placement older than 1.38,
        "" when the consumer has no allocations now."""
        if not self.consumer_types:
            return None
        try:
            r = self._do("GET", f"/allocations/{consumer}", microversion=CONSUMER_TYPE_VERSION)
        except Failed as e:
            if " 406 " not in str(e):
                raise
            self.consumer_types = False
            return None
        if not r.get("allocations"):
            return ""
        return r.get("consumer_type", "")

    def ensure_resource_class(self, name):
        if name not in self._known_rcs:
            self._do("PUT", f"/resource_classes/{name}", ok=(201, 204), reply=False)
            self._known_rcs.add(name)

    def ensure_trait(self, name):
        if name not in self._known_traits:
            self._do("PUT", f"/traits/{name}", ok=(201, 204), reply=False)
            self._known_traits.add(name)


def _q(s):
    from urllib.parse import quote
    return quote(s, safe="")


def _error(r):
    try:
        errs = r.json().get("errors", [])
        return "; ".join(e.get("detail", "").strip().replace("\n", " ") for e in errs) or r.text[:200]
    except ValueError:
        return r.text[:200]


def _code(r):
    try:
        return r.json()["errors"][0].get("code", "")
    except (ValueError, KeyError, IndexError):
        return ""
