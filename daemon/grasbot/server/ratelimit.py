"""How many questions a client may ask: a token bucket per client, in bounded memory.

Each question that reaches the LLM costs the machine seconds of work, so a visitor gets
`burst` questions at once and then `per_minute` a minute. A bucket that has had time to
fill up again is the same as no bucket, so it is forgotten; beyond `max_clients` the least
recently seen client is forgotten too (it gets a full bucket back, which errs on the side
of answering). Behind a reverse proxy every peer is the proxy, so the client is the last
X-Forwarded-For (or RFC 7239 `Forwarded: for=`) address that is not a trusted proxy, believed
only when the peer is one.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence

__all__ = ["NETWORK_PREFIX", "InFlight", "RateLimiter", "TrustedProxies", "client_key", "network_key"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

log = logging.getLogger("grasbot.ratelimit")
_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")  # IPv4 addresses as an IPv6 socket writes them
#: The IPv6 network one site or home may be routed (RFC 6177: a /48 to a site, /56 to a home).
NETWORK_PREFIX = 48


class _Buckets:
    """Token buckets of one size, keyed, in bounded memory (the least recently seen go first)."""

    def __init__(self, per_minute: float, burst: int, max_keys: int) -> None:
        self.rate = per_minute / 60.0  # tokens a second
        self.burst = float(burst)
        self.max_keys = max_keys
        self._full_after = self.burst / self.rate  # an idle bucket is full again after this
        # key -> (tokens, time of last update); oldest update first
        self._held: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._held)

    def level(self, key: str, now: float) -> float:
        """The tokens `key` has now (taken out: `keep` puts them back)."""
        # Ordered by last update: stop at the first bucket still refilling.
        while self._held:
            oldest, (_, last) = next(iter(self._held.items()))
            if now - last < self._full_after:
                break
            del self._held[oldest]
        tokens, last = self._held.pop(key, (self.burst, now))
        return min(self.burst, tokens + max(0.0, now - last) * self.rate)

    def keep(self, key: str, tokens: float, now: float) -> None:
        self._held[key] = (tokens, now)
        while len(self._held) > self.max_keys:
            self._held.popitem(last=False)

    def wait(self, tokens: float) -> float:
        """Seconds until `tokens` make one."""
        return max(0.0, (1.0 - tokens) / self.rate)


class RateLimiter:
    """Token buckets keyed by client; `take(key)` spends one token or says how long to wait.

    An IPv6 client is its /64, and one host may be routed a whole /48 (65,536 of them): its
    /48 has a bucket too (`network_per_minute`, `network_burst`), which a question must also
    find a token in, or a visitor so routed had a fresh bucket for each question. IPv4 has no
    such bucket: a /24 is as often a university's or a mobile carrier's many visitors as one."""

    def __init__(
        self,
        per_minute: float,
        burst: int,
        *,
        network_per_minute: float | None = None,
        network_burst: int | None = None,
        max_clients: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_minute <= 0 or burst < 1 or max_clients < 1:
            raise ValueError("per_minute must be positive, burst and max_clients at least 1")
        self._clients = _Buckets(per_minute, burst, max_clients)
        self._networks: _Buckets | None = None  # no network bucket: each /64 on its own
        if network_per_minute is not None or network_burst is not None:
            if network_per_minute is None or network_burst is None or network_per_minute <= 0 or network_burst < 1:
                raise ValueError("network_per_minute must be positive and network_burst at least 1")
            self._networks = _Buckets(network_per_minute, network_burst, max_clients)
        self._clock = clock

    def __len__(self) -> int:
        return len(self._clients)

    def take(self, key: str) -> float:
        """0.0 if `key` may go on (one token spent, of its network's too), else the seconds
        until it may; a refused question spends nothing."""
        now = self._clock()
        tokens = self._clients.level(key, now)
        wait = self._clients.wait(tokens)
        networks, network = self._networks, network_key(key)
        if networks is not None and network is not None:
            shared = networks.level(network, now)
            wait = max(wait, networks.wait(shared))
            networks.keep(network, shared - (0.0 if wait else 1.0), now)
        self._clients.keep(key, tokens - (0.0 if wait else 1.0), now)
        return wait

    @staticmethod
    def retry_after(wait: float) -> int:
        """Whole seconds for Retry-After: rounded up, at least 1."""
        return max(1, math.ceil(wait))


class InFlight:
    """How many answers each client is waiting for at once, `most` at most: within its rate
    limit one visitor could ask five questions at once and hold every model slot and the
    queue's head, every other visitor waiting behind them (or answered `busy`).

    An IPv6 client's /48 waits for `network_most` at most too, as the rate limit counts it: a
    host routed a /48 asked from as many /64s as its network bucket allowed (25), each /64
    holding `most`."""

    def __init__(self, most: int, network_most: int | None = None) -> None:
        if most < 1 or (network_most is not None and network_most < 1):
            raise ValueError("most and network_most must be at least 1")
        self.most = most
        self.network_most = network_most
        self._held: dict[str, int] = {}  # clients' keys and their networks' (`network_key`)

    def __len__(self) -> int:
        return len(self._held)

    def enter(self, key: str) -> str | None:
        """One more answer for `key` (None), or the key that waits for as many as allowed
        already: `key` itself, or its /48 (`network_key`)."""
        if self._held.get(key, 0) >= self.most:
            return key
        network = network_key(key) if self.network_most is not None else None
        if network is not None and self._held.get(network, 0) >= (self.network_most or 0):
            return network
        for held in (key, network):
            if held is not None:
                self._held[held] = self._held.get(held, 0) + 1
        return None

    def leave(self, key: str) -> None:
        for held in (key, network_key(key) if self.network_most is not None else None):
            if held is None:
                continue
            left = self._held.get(held, 0) - 1
            if left > 0:
                self._held[held] = left
            else:
                self._held.pop(held, None)


class TrustedProxies:
    """The peers whose X-Forwarded-For is believed: addresses or networks (`10.0.0.0/8`)."""

    def __init__(self, entries: Iterable[str]) -> None:
        self._entries = tuple(entry.strip() for entry in entries)
        networks = []
        for entry in self._entries:
            try:
                network = ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(f"trusted proxy {entry!r} is not an IP address or network") from None
            if isinstance(network, ipaddress.IPv6Network) and network.subnet_of(_MAPPED) and network.prefixlen >= 96:
                # "::ffff:172.17.0.1", as a dual-stack socket shows a peer: the peer is read as IPv4
                mapped = network.network_address.ipv4_mapped
                network = ipaddress.ip_network(f"{mapped}/{network.prefixlen - 96}")
            networks.append(network)
        self._networks = tuple(networks)
        self._said: set[str] = set()  # the peers already said to send X-Forwarded-For untrusted

    def ignored(self, peer: IPAddress, header: str = "X-Forwarded-For") -> None:
        """Say once a peer that is no trusted proxy sent X-Forwarded-For (or Forwarded). A reverse proxy left
        out of the list (nginx in a container: 172.17.0.1) makes every visitor one client, all
        refused once one asks too much, and only the owner's log can tell why. A global address
        is no proxy of the owner's but a visitor's: not named, as no log names a visitor."""
        said = "d'une adresse publique" if peer.is_global else f"de {peer}"
        if said in self._said or len(self._said) >= 16:
            return
        self._said.add(said)
        listed = ",".join(self._entries) or "aucun"
        log.warning(
            "%s venu %s est ignoré, car ce n'est pas un proxy de confiance (GRASBOT_TRUSTED_PROXIES : %s) : la limite de débit "
            "compte tous ceux qu'il relaie comme un seul client ; si c'est votre proxy inverse, ajoutez-le à cette liste",
            header,
            said,
            listed,
        )

    def __contains__(self, address: IPAddress | None) -> bool:
        return address is not None and any(address in net for net in self._networks if net.version == address.version)


def _address(text: str | None) -> IPAddress | None:
    if not text:
        return None
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[2001:db8::1]:443"
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # "203.0.113.9:51234": Azure's Application Gateway adds the port
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _key(address: IPAddress) -> str:
    # One IPv6 host usually holds a whole /64: counting addresses would count nothing.
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def network_key(key: str) -> str | None:
    """The /48 an IPv6 client's key (its /64) is in; None for any other client."""
    if ":" not in key or key.startswith("peer:"):
        return None
    try:
        network = ipaddress.ip_network(key)
    except ValueError:
        return None
    if network.version != 6 or network.prefixlen < NETWORK_PREFIX:
        return None
    return str(network.supernet(new_prefix=NETWORK_PREFIX))


def _last_untrusted(hops: Sequence[str | None], trusted: TrustedProxies) -> IPAddress | None:
    """The last hop that is no trusted proxy, or the first of them all; None when a hop on the
    way back is unreadable: nothing left of what a trusted proxy wrote can be believed."""
    claimed = None
    for hop in reversed(hops):
        claimed = _address(hop)
        if claimed is None or claimed not in trusted:
            break
    return claimed


def client_key(
    peer: str | None,
    forwarded_for: str | None,
    trusted: TrustedProxies,
    forwarded: Sequence[str | None] = (),
) -> str:
    """Who is asking: the peer, or, when the peer is a trusted proxy, the last X-Forwarded-For
    address that is not one (the hop that reached the first trusted proxy).

    deploy/nginx/grasbot.conf writes one address (`$remote_addr`); a proxy that appends
    (`$proxy_add_x_forwarded_for`, Debian's `proxy_params`) puts the visitor's address after
    whatever the visitor sent, so the first one is the visitor's to choose: a new one a question
    was a new bucket each time. An unusable address from a trusted proxy falls back to the peer.
    The header from another peer is ignored, and the log says so once for that peer.

    `forwarded` is the `for=` of each RFC 7239 `Forwarded` element (None where it has none), read
    the same way: HAProxy's `option forwarded` sends only it. When both headers name a client
    and the clients differ, one of them is the visitor's own (nginx overwrites X-Forwarded-For
    but passes Forwarded on unless told not to, as deploy/nginx/grasbot.conf does; a proxy that
    writes only Forwarded passes X-Forwarded-For on), so neither is believed: the peer's
    bucket, which a visitor cannot renew at will.
    """
    address = _address(peer)
    hops = forwarded_for.split(",") if forwarded_for else []
    forwarded = list(forwarded) if any(forwarded) else []
    if address in trusted and (hops or forwarded):
        claims = {_key(claimed) for claimed in (_last_untrusted(h, trusted) for h in (hops, forwarded) if h) if claimed is not None}
        if len(claims) == 1:
            return claims.pop()
    elif (hops or forwarded) and address is not None:
        trusted.ignored(address, " and ".join(name for name, h in (("X-Forwarded-For", hops), ("Forwarded", forwarded)) if h))
    if address is None:
        return f"peer:{(peer or '?')[:64]}"  # a Unix socket or an unparsable peer: one shared bucket
    return _key(address)
