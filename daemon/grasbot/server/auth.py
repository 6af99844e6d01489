"""The owner's token: where it comes from, and how a request proves it holds it.

The token is the only thing separating the owner (private notes, reload, alias suggestions)
from a visitor, because behind a reverse proxy every request comes from 127.0.0.1. It comes
from `--token`/GRASBOT_TOKEN, else from the token file, which is created on first start with
a fresh random token, readable by its owner only. A token file that group or others may read
is refused rather than silently fixed: somebody may already have read it, and the owner must
know that the token has to be rotated.
"""

from __future__ import annotations

import errno
import hmac
import os
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .._config import Settings
from .._exceptions import ConfigError

__all__ = ["MIN_TOKEN_LENGTH", "OwnerToken", "bearer_given", "bearer_matches", "default_token_file", "resolve_owner_token"]

#: Shorter tokens are refused: the token is all that guards the private notes.
MIN_TOKEN_LENGTH = 16
_TOKEN_BYTES = 32  # secrets.token_urlsafe(32): 43 characters, 256 bits


@dataclass(frozen=True, repr=False)
class OwnerToken:
    """The token and where it came from (`path` None when given by flag or environment).

    Its repr never shows the token: it could end up in a log by accident.
    """

    value: str
    path: Path | None = None
    created: bool = False

    def __repr__(self) -> str:
        return f"OwnerToken(path={self.path!r}, created={self.created})"

    def describe(self) -> str:
        """What `serve` prints: where the token is, never the token."""
        if self.path is None:
            return "jeton du propriétaire : donné par --token/GRASBOT_TOKEN"
        if self.created:
            return f"jeton du propriétaire : créé dans {self.path} (lisible par vous seul ; envoyez-le en 'Authorization: Bearer <jeton>')"
        return f"jeton du propriétaire : lu dans {self.path}"


def default_token_file(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/grasbot/token`, else `~/.config/grasbot/token`."""
    env = os.environ if env is None else env
    config = env.get("XDG_CONFIG_HOME", "").strip()
    base = Path(config).expanduser() if config else Path.home() / ".config"
    return base / "grasbot" / "token"


def _checked(token: str, origin: str) -> str:
    token = token.strip()
    if len(token) < MIN_TOKEN_LENGTH:
        raise ConfigError(f"{origin} : le jeton du propriétaire doit compter au moins {MIN_TOKEN_LENGTH} caractères")
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        raise ConfigError(f"{origin} : le jeton du propriétaire doit être en ASCII imprimable, sans espace (il voyage dans un en-tête HTTP)")
    return token


def _read(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"le fichier du jeton {path} est un lien symbolique : donnez à --token-file le fichier lui-même") from None
        raise ConfigError(f"impossible de lire le fichier du jeton {path} : {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ConfigError(f"le fichier du jeton {path} n'est pas un fichier ordinaire")
    with os.fdopen(fd, "r", encoding="utf-8", errors="strict") as handle:
        if info.st_mode & 0o077:
            raise ConfigError(
                f"le fichier du jeton {path} peut être lu par d'autres utilisateurs (mode {stat.S_IMODE(info.st_mode):04o}) : "
                f"tenez le jeton pour connu, supprimez le fichier et redémarrez pour en obtenir un nouveau "
                f"(ou `chmod 600 {path}` si personne d'autre n'a pu le lire)"
            )
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise ConfigError(f"le fichier du jeton {path} appartient à un autre utilisateur")
        try:
            text = handle.read(4096)
        except UnicodeDecodeError:
            raise ConfigError(f"le fichier du jeton {path} n'est pas du texte") from None
    return _checked(text, f"le fichier du jeton {path}")


def _create(path: Path) -> str | None:
    """Write a new token; None if the file appeared meanwhile (another daemon won the race)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:  # its folder is a file, or under one this user may not write
        why = "un fichier est là où son dossier devrait être" if isinstance(exc, FileExistsError | NotADirectoryError) else exc.strerror or str(exc)
        raise ConfigError(f"impossible de créer le fichier du jeton {path} : {why} ({exc.filename or path.parent})") from None
    token = secrets.token_urlsafe(_TOKEN_BYTES)
    try:
        # O_EXCL: never write through a file (or symlink) someone else put there. Mode 0600
        # at creation: the umask can only take bits away, and fchmod makes sure of the rest.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return None
    except OSError as exc:
        raise ConfigError(f"impossible de créer le fichier du jeton {path} : {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (token + "\n").encode("ascii"))
        os.fsync(fd)
    except OSError as exc:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise ConfigError(f"impossible d'écrire le fichier du jeton {path} : {exc.strerror or exc}") from None
    os.close(fd)
    return token


def resolve_owner_token(settings: Settings, env: Mapping[str, str] | None = None) -> OwnerToken:
    """The token `serve` runs with: the setting, else the token file, created if missing."""
    if settings.token is not None and settings.token.strip():
        return OwnerToken(_checked(settings.token, "--token/GRASBOT_TOKEN"))
    path = settings.token_file or default_token_file(env)
    if not path.exists() and not path.is_symlink():
        token = _create(path)
        if token is not None:
            return OwnerToken(token, path, created=True)
    return OwnerToken(_read(path), path)


def _bearer(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (maybe empty), None for another scheme or none."""
    if not authorization:
        return None
    scheme, _, given = authorization.strip().partition(" ")
    return given.strip() if scheme.lower() == "bearer" else None


def bearer_matches(authorization: str | None, token: str) -> bool:
    """True when an `Authorization: Bearer <token>` header carries `token`, in constant time.

    An empty `token` matches nothing: a daemon without a token has no owner over HTTP.
    """
    given = _bearer(authorization)
    if not token or given is None:
        return False
    # bytes: compare_digest refuses non-ASCII str, and a visitor chooses what they send
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode("utf-8"))


def bearer_given(authorization: str | None) -> bool:
    """True when an `Authorization` header is `Bearer <something>`: a token was presented,
    the owner's or not (a plugin's stale one, or a proxy's own), to tell apart from none."""
    return bool(_bearer(authorization))
