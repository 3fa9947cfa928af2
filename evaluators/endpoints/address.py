"""Which network addresses the platform may call on a team's behalf.

An endpoint URL comes from a stranger, and the workers that call it sit inside the operator's
network: without a policy, a submission could make them talk to a database, an admin port or a
cloud metadata service and report back what answered. The policy is checked twice: when a URL is
submitted (its notation, its host name, and the addresses the name has then), and by the client
each time it connects, on the addresses it resolved and is about to use, since a name can point
somewhere else by then.

Some addresses are never called whatever the settings say: cloud metadata services, link-local,
unspecified, multicast and broadcast addresses. Loopback, private and other non-public addresses
are called only when the policy allows private addresses (development and tests), when they are
on the operator's allow-list, or when the host name itself is.
"""
from __future__ import annotations

import ipaddress
import re
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
#: One ``socket.getaddrinfo`` result: family, type, proto, canonical name, socket address.
AddrInfo = tuple[Any, Any, int, str, Any]

#: Metadata services of the common clouds. Most are link-local (never called anyway); the others
#: sit in ranges an operator might allow-list, or even in public space (Azure's wire server).
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "169.254.169.253", "169.254.0.23", "fd00:ec2::254", "fd00:ec2::253",
    "100.100.100.200", "168.63.129.16", "192.0.0.192",
))
METADATA_HOSTS = frozenset({
    "metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal",
    "metadata.tencentyun.com",
})
#: Names that only ever mean this machine or a local network; refused unless private addresses are.
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa", ".lan")

_SHARED = ipaddress.ip_network("100.64.0.0/10")
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
_BROADCAST = ipaddress.ip_address("255.255.255.255")
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_SIIT = ipaddress.ip_network("::ffff:0:0:0/96")
_COMPATIBLE = ipaddress.ip_network("::/96")

_HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")
# A last label like these makes resolvers (and browsers) read the whole name as an IPv4 address.
_NUMERIC_LABEL = re.compile(r"(0x[0-9a-f]*|[0-9]+)")


class AddressRefused(ValueError):
    """The endpoint's address is one this site does not call; the message says why, for the submitter."""


@dataclass(frozen=True)
class AddressPolicy:
    """``allow_private``: loopback, private and other non-public addresses may be called.

    ``allowed_networks`` and ``allowed_hosts`` let chosen ones through when it is False.
    """

    allow_private: bool
    allowed_networks: tuple[IPNetwork, ...] = ()
    allowed_hosts: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, *, allow_private: bool, allowed: Iterable[str] = ()) -> AddressPolicy:
        """A policy from an allow-list of networks (``10.0.0.0/8``), addresses and host names."""
        networks: list[IPNetwork] = []
        hosts: set[str] = set()
        for raw in allowed:
            entry = raw.strip()
            if not entry:
                continue
            bare = entry[1:-1] if entry.startswith("[") and entry.endswith("]") else entry
            try:
                networks.append(ipaddress.ip_network(bare, strict=False))
                continue
            except ValueError:
                pass
            name = _canonical(bare)
            if not _HOST_NAME.fullmatch(name) or _looks_numeric(name):
                raise ValueError(f"allowed endpoint entry {entry!r} is not a network (10.0.0.0/8), "
                                 "an IP address or a host name")
            hosts.add(name)
        return cls(allow_private=allow_private, allowed_networks=tuple(networks), allowed_hosts=frozenset(hosts))

    def host_allowed(self, host: str | None) -> bool:
        return host is not None and _canonical(host) in self.allowed_hosts

    def network_allowed(self, address: IPAddress) -> bool:
        return any(address.version == net.version and address in net for net in self.allowed_networks)


def check_address(address: IPAddress, policy: AddressPolicy, *, host: str | None = None) -> None:
    """Raise :class:`AddressRefused` unless ``policy`` lets the platform connect to ``address``.

    ``host`` is the name the address was resolved from, for allow-listed host names and messages.
    """
    destinations = _destinations(address)
    where = f"{host} resolves to" if host else f"{address} is"
    for destination in destinations:
        reason = _never_called(destination)
        if reason:
            raise AddressRefused(f"the endpoint address is not allowed: {where} {reason}")
    if policy.allow_private or policy.host_allowed(host) or any(policy.network_allowed(d) for d in destinations):
        return
    for destination in destinations:
        reason = _non_public(destination)
        if reason:
            raise AddressRefused(f"the endpoint address is not allowed: {where} {reason}; this site only "
                                 "calls endpoints on public addresses")


def check_host_name(host: str, policy: AddressPolicy, *, local_names: bool = True) -> IPAddress | None:
    """Check what the host part of a URL says by itself; return it as an address when it is one.

    Refuses IPv4 addresses written in anything but ``a.b.c.d`` (resolvers read ``2130706433``,
    ``0x7f000001`` and ``0177.0.0.1`` as 127.0.0.1), metadata service names, and names that only
    ever mean a local machine unless private addresses are allowed (``local_names``: where the
    addresses the name resolves to are checked anyway, the list adds nothing).
    """
    name = _canonical(host)
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        address = None
    if address is not None:
        check_address(address, policy)
        return address
    if _looks_numeric(name):
        raise AddressRefused(f"the endpoint address is not allowed: {_shown(host)} is an IP address in an "
                             "unusual notation; write it as four decimal numbers a.b.c.d")
    if not _HOST_NAME.fullmatch(name) or len(name) > 253:
        raise AddressRefused(f"the endpoint address is not allowed: {_shown(host)} is not a valid host name "
                             "(write an internationalised name in its ASCII xn-- form)")
    if name in METADATA_HOSTS:
        raise AddressRefused(f"the endpoint address is not allowed: {name} is a cloud metadata service")
    local = name in _LOCAL_NAMES or name.endswith(_LOCAL_SUFFIXES)
    if local_names and local and not (policy.allow_private or policy.host_allowed(name)):
        raise AddressRefused(f"the endpoint address is not allowed: {name} names a local or internal machine; "
                             "this site only calls endpoints on public addresses")
    return None


def check_url(url: str, policy: AddressPolicy, *, resolve_timeout: float = 2.0) -> None:
    """Check an endpoint URL at submission: its host, and the addresses its name has now.

    A name that does not resolve within ``resolve_timeout`` seconds is let through: the client
    checks again when it connects, and a slow resolver must not hold the submitter's request.
    """
    parts = urlsplit(url.strip())
    host = parts.hostname
    if not host:
        raise AddressRefused("the endpoint URL has no host")
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    if check_host_name(host, policy) is not None or resolve_timeout <= 0:
        return
    try:
        infos = resolve(_canonical(host), port, resolve_timeout)
    except (OSError, TimeoutError):
        return
    for info in infos:
        check_address(_address_of(info), policy, host=_canonical(host))


def resolve(host: str, port: int, timeout: float) -> list[AddrInfo]:
    """``socket.getaddrinfo`` for TCP, giving up after ``timeout`` seconds (raises TimeoutError).

    getaddrinfo cannot be interrupted; on a timeout its thread finishes on its own later.
    """
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def lookup() -> None:
        try:
            outcome["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except BaseException as exc:  # handed to the caller below
            outcome["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=lookup, name=f"resolve {host}", daemon=True).start()
    if not finished.wait(max(timeout, 0.0)):
        raise TimeoutError(f"resolving the endpoint's host name took longer than {timeout:g}s")
    if "error" in outcome:
        raise outcome["error"]
    return list(outcome["infos"])


def resolve_checked(host: str, port: int, policy: AddressPolicy, timeout: float) -> list[AddrInfo]:
    """The addresses to connect to for ``host``, every one of them checked against ``policy``.

    The whole name is refused when any of its addresses is: a name answering with one public and
    one private address would otherwise reach the private one on a later connection.
    """
    name = _canonical(host)
    literal = check_host_name(name, policy, local_names=False)
    infos = resolve(str(literal) if literal is not None else name, port, timeout)
    for info in infos:
        check_address(_address_of(info), policy, host=None if literal is not None else name)
    return infos


# --------------------------------------------------------------------------------------------


def _canonical(host: str) -> str:
    host = host.strip().lower().rstrip(".")
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def _looks_numeric(name: str) -> bool:
    return ":" not in name and bool(_NUMERIC_LABEL.fullmatch(name.rsplit(".", 1)[-1]))


def _shown(host: str) -> str:
    cleaned = "".join(c for c in host if c.isprintable())
    return cleaned if len(cleaned) <= 60 else cleaned[:60] + "…"


def _address_of(info: AddrInfo) -> IPAddress:
    # An IPv6 socket address may carry a scope ("fe80::1%eth0"); the address is what is checked.
    return ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])


def _destinations(address: IPAddress) -> list[IPAddress]:
    """The address and every IPv4 address it stands for (mapped, translated or tunnelled)."""
    if address.version == 4:
        return [address]
    assert isinstance(address, ipaddress.IPv6Address)
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    if address in _SIIT or (address in _COMPATIBLE and int(address) > 1):
        # The kernel sends these to the IPv4 address; the IPv6 form means nothing of its own.
        return [low32]
    found: list[IPAddress] = [address]
    if any(address in net for net in _NAT64):
        found.append(low32)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return found


def _never_called(address: IPAddress) -> str | None:
    if address in METADATA_ADDRESSES:
        return "a cloud metadata service"
    if address.is_unspecified or (address.version == 4 and address in _THIS_NETWORK):
        return "an unspecified address"
    if address.is_multicast:
        return "a multicast address"
    if address == _BROADCAST:
        return "a broadcast address"
    if address.is_link_local:
        return "a link-local address, where cloud metadata services live"
    return None


def _non_public(address: IPAddress) -> str | None:
    if address.is_loopback:
        return "a loopback address"
    if address.version == 4 and address in _SHARED:
        return "a shared (carrier-grade NAT) address"
    if address.is_private or (address.version == 6 and address.is_site_local):
        return "a private network address"
    if address.is_reserved or not address.is_global:
        return "a reserved address"
    return None
