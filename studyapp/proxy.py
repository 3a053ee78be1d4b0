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
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

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


class ForwardedFor:
    """ASGI middleware: ``scope["client"]`` becomes the client's address (:func:`client_address`)
    for HTTP requests and WebSockets; the port is kept."""

    def __init__(self, app: Callable[..., Awaitable[None]], trusted: tuple[Network, ...]) -> None:
        self.app = app
        self.trusted = trusted

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        client = scope.get("client")
        if scope.get("type") in ("http", "websocket") and client and self.trusted:
            values = [
                v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"x-forwarded-for"
            ]
            if values:
                address = client_address(str(client[0]), values, self.trusted)
                if address != client[0]:
                    scope = {**scope, "client": [address, client[1]], "proxy_peer": client[0]}
        await self.app(scope, receive, send)
