"""The client's address behind a reverse proxy, believed only from proxies the site trusts.

A proxy (nginx, Caddy, a load balancer) connects to daphne itself, so without help every person
would be the proxy's address: one address against the new-participant limit. Proxies tell the
client's address in ``X-Forwarded-For``, each appending the address it received the request from;
anything to the left of the entry the trusted proxy wrote is whatever the client sent, and can be
forged. So the address is read from the right: starting with the connection's own peer, while
that address is a trusted proxy (``TRUSTED_PROXIES``: addresses or networks, loopback by
default), step to the entry it appended; the first address that is not a trusted proxy is the
client. A connection from anywhere else keeps its own address, whatever headers it sends.

This is what daphne's ``--proxy-headers`` would do, except that daphne believes the header from
anyone and takes its leftmost (client-written) entry; the site starts daphne without it and
wraps its ASGI application in :class:`ForwardedFor` instead, the same in every way it starts.

A trusted proxy's ``X-Forwarded-Proto`` is believed too: a request it received over HTTPS is
``https`` to Django (``request.is_secure()``, the session and CSRF cookies marked Secure by
``studyapp.middleware.SecureCookiesOverHTTPS``, CSRF's origin check), without ``HTTPS=true`` or
``SECURE_PROXY_SSL_HEADER``.

``X-Forwarded-For`` from a peer that is not trusted is most often a proxy left out of
``TRUSTED_PROXIES``: every person behind it is then one address, and the new-participant limit
caps a launch at ``PARTICIPANT_RATE_PER_MINUTE`` people a minute with nothing to say why. The
first such request of a process is logged once (:class:`Untrusted`), and staff see it on
``/healthz`` (the record is kept in the cache a day, so any process's answer shows it).
"""

from __future__ import annotations

import ipaddress
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from typing import Any

log = logging.getLogger(__name__)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(spec: str) -> tuple[Network, ...]:
    """``"127.0.0.1, ::1, 10.0.0.0/8"`` -> networks; ValueError naming a bad entry."""
    networks: list[Network] = []
    for item in spec.replace(";", ",").split(","):
        item = item.strip()
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError as err:
            raise ValueError(f"TRUSTED_PROXIES: {item!r} is not an address or network") from err
    return tuple(networks)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip().strip('"')
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def client_address(peer: str, forwarded_for: Iterable[str], trusted: tuple[Network, ...]) -> str:
    """The client's address: ``peer`` unless it is a trusted proxy, then the rightmost
    ``X-Forwarded-For`` entry that is not one (a malformed entry ends the walk there: the proxy
    before it is then taken as the client)."""
    current = _address(peer)
    if current is None:
        return peer
    hops = [h for value in forwarded_for for h in value.split(",") if h.strip()]
    while hops and any(current in net for net in trusted):
        nxt = _address(hops.pop())
        if nxt is None:
            break
        current = nxt
    return str(current)


def is_trusted(peer: str, trusted: tuple[Network, ...]) -> bool:
    address = _address(peer)
    return address is not None and any(address in net for net in trusted)


CACHE_KEY = "proxy:untrusted-forwarded-for"


class Untrusted:
    """``X-Forwarded-For`` seen from peers that are not trusted proxies, in this process: logged
    once (the first peer), counted, and kept in the cache for ``/healthz``."""

    def __init__(self) -> None:
        self.peers: dict[str, int] = {}
        self.first: float | None = None

    MOST_PEERS = 50  # a client sending the header to the site directly, from many addresses

    def note(self, peer: str) -> None:
        first_of_peer = peer not in self.peers
        if first_of_peer and len(self.peers) >= self.MOST_PEERS:
            return
        self.peers[peer] = self.peers.get(peer, 0) + 1
        if not first_of_peer:
            return
        if self.first is None:
            self.first = time.time()
            log.warning(
                "X-Forwarded-For received from %s, which is not in TRUSTED_PROXIES: the header "
                "is ignored, so everyone behind it counts as that one address (the new-participant "
                "limit: PARTICIPANT_RATE_PER_MINUTE a minute for all of them). If %s is your "
                "reverse proxy or load balancer, add it to TRUSTED_PROXIES (docs/production.md); "
                "this process says so once",
                peer,
                peer,
            )
        # the cache is a blocking call: out of the event loop, once per peer and process
        threading.Thread(target=self.remember, args=(peer,), daemon=True).start()

    def remember(self, peer: str) -> None:
        try:
            from django.core.cache import cache

            seen = cache.get(CACHE_KEY) or {}
            seen.setdefault(peer, datetime.now(UTC).isoformat(timespec="seconds"))
            cache.set(CACHE_KEY, dict(list(seen.items())[-10:]), timeout=86_400)
        except Exception as err:  # the cache away: this process's own record still answers
            log.info("untrusted proxy %s not recorded in the cache: %s", peer, err)

    def report(self) -> dict[str, str]:
        """Each peer seen (by any process, as far as the cache knows): since when (UTC)."""
        seen: dict[str, str] = {}
        try:
            from django.core.cache import cache

            seen.update(cache.get(CACHE_KEY) or {})
        except Exception:
            pass
        for peer in self.peers:
            when = datetime.fromtimestamp(self.first or time.time(), UTC)
            seen.setdefault(peer, when.isoformat(timespec="seconds"))
        return seen


UNTRUSTED = Untrusted()


class ForwardedFor:
    """ASGI middleware: ``scope["client"]`` becomes the client's address (:func:`client_address`)
    for HTTP requests and WebSockets; the port is kept. From a trusted proxy, ``X-Forwarded-Proto:
    https`` makes the scope's scheme ``https`` (``wss`` for a socket). ``X-Forwarded-For`` from
    anyone else is ignored and noted (:data:`UNTRUSTED`)."""

    def __init__(self, app: Callable[..., Awaitable[None]], trusted: tuple[Network, ...]) -> None:
        self.app = app
        self.trusted = trusted

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        client = scope.get("client")
        if scope.get("type") in ("http", "websocket") and client:
            headers = scope.get("headers", [])
            values = [v.decode("latin-1") for k, v in headers if k == b"x-forwarded-for"]
            if not is_trusted(str(client[0]), self.trusted):
                if values:
                    UNTRUSTED.note(str(client[0]))
            else:
                changes: dict[str, Any] = {}
                if values:
                    address = client_address(str(client[0]), values, self.trusted)
                    if address != client[0]:
                        changes = {"client": [address, client[1]], "proxy_peer": client[0]}
                protos = [v.decode("latin-1") for k, v in headers if k == b"x-forwarded-proto"]
                if protos and protos[-1].split(",")[-1].strip().lower() in ("https", "wss"):
                    changes["scheme"] = "https" if scope["type"] == "http" else "wss"
                if changes:
                    scope = {**scope, **changes}
        await self.app(scope, receive, send)
