"""Time zones by name: where a note's dates written without their offset are read
(GRASBOT_TIME_ZONE), which the settings check at start and the vault reads with."""

from __future__ import annotations

import functools
import zoneinfo
from datetime import UTC, tzinfo
from zoneinfo import ZoneInfo


class NotIanaName(ValueError):
    """A file of the machine's zone database that is no IANA name (`posix/Europe/Paris`,
    `right/…`, `Factory`, `localtime`): Python reads it, Intl, where the plugin's « Tester cette
    note » reads a note's dates in the zone the owner's /health gives, does not."""

    def __init__(self, name: str, instead: str | None) -> None:
        super().__init__(name)
        self.instead = instead  # the IANA name the same clock has (`Europe/Paris`), if any


@functools.cache
def _iana_names() -> frozenset[str]:
    """The names Intl reads too: zoneinfo's list (no `posix/`, `right/` or `posixrules`) less
    the two files it lists that ICU does not (`Factory`, Debian's `localtime`)."""
    return frozenset(zoneinfo.available_timezones() - {"Factory", "localtime"})


@functools.cache
def zone_named(name: str) -> tzinfo | None:
    """The zone GRASBOT_TIME_ZONE names: None for `local` (Python reads a time without its
    offset where the machine is), UTC without the system's zone database, else the database's
    (`Europe/Paris`). Raises ValueError, or ZoneInfoNotFoundError (a KeyError), for a name
    that is no zone here, NotIanaName for one the plugin cannot read dates in."""
    key = name.strip()
    if key.lower() == "local":
        return None
    if key.upper() in ("UTC", "ETC/UTC", "Z"):
        return UTC
    zone = ZoneInfo(key)
    if key not in _iana_names():
        folder, _, rest = key.partition("/")
        raise NotIanaName(name, rest if folder in ("posix", "right") and rest in _iana_names() else None)
    return zone
