"""A reload that reaches every daemon serving the same vault (`GRASBOT_PEERS`).

Behind a load balancer, several daemons read one vault, each with its own snapshot. The owner
reloads one of them (the plugin's button, `curl`, a hook after a sync): that daemon reloads,
then asks each peer to reload too, with the owner's token and a header that tells the peer not
to pass it on (so peers may list each other). One action, all daemons, and the result says
which peer did or did not reload. Polling the vault instead would stat every note of every
daemon every few seconds, and still leave a window where daemons answer from different versions.
"""

from __future__ import annotations

import asyncio
import logging

import aiohttp

__all__ = ["FROM_PEER", "reload_peers"]

log = logging.getLogger("grasbot.peers")

#: Set on a reload one daemon passes to another: that one reloads itself only.
FROM_PEER = "X-GrasBot-Reload-From-Peer"
TIMEOUT = 60.0  # seconds a peer has to reload (10,000 notes with one changed: well under 1 s)


async def reload_peers(peers: tuple[str, ...], token: str) -> list[dict]:
    """POST /reload-vault to each peer at once; one entry per peer: url, ok, and its
    vault_size or why it failed (`error`, and `status`, the HTTP status it answered). Never raises."""
    if not peers:
        return []
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    headers = {"Authorization": f"Bearer {token}", FROM_PEER: "1"}
    async with aiohttp.ClientSession(timeout=timeout) as http:
        return list(await asyncio.gather(*(_reload_one(http, url, headers) for url in peers)))


async def _reload_one(http: aiohttp.ClientSession, url: str, headers: dict) -> dict:
    status = None
    try:
        async with http.post(f"{url}/reload-vault", headers=headers) as response:
            status = response.status
            body = await response.json(content_type=None)
            if response.status == 200 and isinstance(body, dict) and "vault_size" in body:
                return {"url": url, "ok": True, "vault_size": body["vault_size"]}
            error = body.get("error", {}).get("data") if isinstance(body, dict) else None
            reason = f"HTTP {response.status}" + (f" : {error}" if isinstance(error, str) else "")
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        reason = f"{type(exc).__name__} : {exc}" if str(exc) else type(exc).__name__
    log.warning("le démon pair %s n'a pas rechargé le coffre : %s", url, reason)
    failed: dict = {"url": url, "ok": False, "error": reason}
    if status is not None:  # what a client acts on (401: the peer holds another owner token), never `error`'s words
        failed["status"] = status
    return failed
