"""Time zones by name: where a note's dates written without their offset are read
(GRASBOT_TIME_ZONE), which the settings check at start and the vault reads with."""

from __future__ import annotations

import functools
from datetime import UTC, tzinfo
from zoneinfo import ZoneInfo


@functools.cache
def zone_named(name: str) -> tzinfo | None:
    """The zone GRASBOT_TIME_ZONE names: None for `local` (Python reads a time without its
    offset where the machine is), UTC without the system's zone database, else the database's
    (`Europe/Paris`). Raises ValueError, or ZoneInfoNotFoundError (a KeyError), for a name
    that is no zone here."""
    if name.strip().lower() == "local":
        return None
    if name.strip().upper() in ("UTC", "ETC/UTC", "Z"):
        return UTC
    return ZoneInfo(name.strip())
