"""SSRF guard for URL documents: only public addresses are fetched, unless the user allows more.

`resolve_allowed(host, port, allow_private)` resolves a host name the way the connection will
(getaddrinfo: so `127.1`, `0x7f000001`, `2130706433`, `localhost`, `[::1]` and
`::ffff:127.0.0.1` all resolve to loopback) and refuses when ANY address it resolves to is
loopback, private, link-local, multicast, unspecified, reserved or otherwise not global
(IPv4-mapped and 6to4 IPv6 addresses are judged by the IPv4 address inside).

`GuardedBackend` is the httpcore network backend the fetcher connects through: it runs that
check at connect time and connects to the very address it approved, so a DNS answer that
changes between the check and the connection (DNS rebinding) cannot reach a refused address,
and every redirect hop is checked again because each hop opens its connection here.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

import httpcore

from kenning.core.errors import InvalidInput

FLAG = "pipeline.documents.allow_private_urls"
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UrlRefused(InvalidInput):
    """The URL's host is (or resolves to) an address documents may not fetch."""


def _refusal(ip: IPAddress) -> str | None:
    """Why `ip` may not be fetched, or None when it is a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour
        if inner is not None:
            return _refusal(inner)
    for reason, flag in (("loopback", ip.is_loopback), ("unspecified", ip.is_unspecified),
                         ("link-local", ip.is_link_local), ("multicast", ip.is_multicast),
                         ("private", ip.is_private), ("reserved", ip.is_reserved)):
        if flag:
            return reason
    return None if ip.is_global else "non-public"


def _addresses(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, ValueError, OSError) as exc:
        raise UrlRefused(f"cannot resolve host {host!r}: {exc}") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def resolve_allowed(host: str, port: int, allow_private: bool) -> str:
    """The address to connect to for `host`; raises UrlRefused for a non-public target."""
    addresses = _addresses(host, port)
    if not addresses:
        raise UrlRefused(f"host {host!r} resolves to no address")
    if allow_private:
        return addresses[0]
    for address in addresses:
        reason = _refusal(ipaddress.ip_address(address.split("%")[0]))
        if reason:
            raise UrlRefused(
                f"refusing to fetch {host!r}: it resolves to {address}, a {reason} address "
                f"(set {FLAG}: true to allow private and loopback targets)"
            )
    return addresses[0]


def check_url(url: str, allow_private: bool) -> None:
    """Refuse a URL whose host is not public (used when a document is submitted)."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UrlRefused(f"not a valid URL: {exc}") from exc
    if not parts.hostname:
        raise UrlRefused(f"URL has no host: {url[:200]!r}")
    resolve_allowed(parts.hostname, port, allow_private)


class GuardedBackend(httpcore.SyncBackend):
    """Connect only to an approved address, pinned: the check and the connection use one answer."""

    def __init__(self, allow_private: bool) -> None:
        self.allow_private = allow_private

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable | None = None) -> httpcore.NetworkStream:
        address = resolve_allowed(host, port, self.allow_private)
        return super().connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                   socket_options=socket_options)
