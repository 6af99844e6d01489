"""Settings: the seed's environment variables, each also a command-line flag.

Precedence: flag, then environment variable, then default. A value that cannot be used is a
ConfigError naming the variable, never a crash deeper down.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import os
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from ._exceptions import ConfigError
from ._urls import FIELDS, Page, fold_type, page_url, template_for, template_problem
from ._zones import NotIanaName, zone_named

_PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED_VAULT = _PACKAGE_DIR.parent.parent / "vault-grasbot"

#: How the site turns a heading into its anchor (answer/passages.py builds each form).
ANCHOR_FORMS = ("slug", "github", "quartz", "hugo", "mkdocs", "text", "none")
#: Days a visitor's question stays in the question log (store/questionlog.py).
DEFAULT_RETENTION_DAYS = 90
#: The most days a question may be kept, or `grasbot log` look back: a century (a date that far
#: back is one Python can still make; 10**14 days was a crash at start).
MAX_RETENTION_DAYS = 36_500
#: The protocol's own limits (`shared-protocol/openrpc.json`: a question's characters, a
#: history's turns, a turn's characters, a batch's requests). A setting may lower them; above
#: them the daemon would take what the document it serves to clients (`rpc.discover`) refuses.
PROTOCOL_LIMITS = {"max_question": 500, "max_history": 8, "max_turn": 2_000, "max_batch": 20}
#: Characters of a prompt counted as one of the LLM's tokens: few, so that a prompt counted
#: this way never overflows the model's window (French prose takes more a token; code, numbers
#: and rare accented words fewer).
CHARS_PER_TOKEN = 3
#: Tokens kept beside the notes for the rules, the passages' headings and the question.
PROMPT_RESERVE = 1_536


def tokens_for(chars: int) -> int:
    """The most tokens `chars` characters of a prompt may take (CHARS_PER_TOKEN)."""
    return -(-chars // CHARS_PER_TOKEN)


def vault_key(vault: str | os.PathLike[str]) -> str:
    """A vault's own folder name under a cache or state folder: a hash of its real path (a loop
    of links is the vault's to report)."""
    return hashlib.sha256(os.fsencode(os.path.realpath(vault))).hexdigest()[:16]  # a path may hold bytes no UTF-8 has


def default_state_dir(env: Mapping[str, str] | None = None, *, vault: str | os.PathLike[str] | None = BUNDLED_VAULT) -> Path:
    """`$XDG_STATE_HOME/grasbot/<vault_key>`, else `~/.local/state/grasbot/...`: what a vault
    keeps that no cache may forget (its question log, the hidden notes that went).
    `vault=None`: the folder an older GrasBot kept one log in for every vault."""
    env = os.environ if env is None else env
    state = env.get("XDG_STATE_HOME", "").strip()
    base = Path(state).expanduser() if state else Path.home() / ".local" / "state"
    return base / "grasbot" / (vault_key(vault) if vault is not None else "")


def default_log_path(env: Mapping[str, str] | None = None, *, vault: str | os.PathLike[str] | None = BUNDLED_VAULT) -> Path:
    """`default_state_dir`'s `questions.sqlite3`: one log a vault, or the questions asked of one
    would show in another's `grasbot log` and alias suggestions. `vault=None`: the one log an
    older GrasBot kept for every vault."""
    return default_state_dir(env, vault=vault) / "questions.sqlite3"


def parse_log_path(value: str | os.PathLike[str] | None) -> Path | None:
    """A setting's value as a path; `off`, `none` or `false` turn the log off (None)."""
    if value is None:
        return None
    text = os.fspath(value).strip()
    if text.lower() in ("", "off", "none", "false", "0"):
        return None
    return Path(text).expanduser()


DEFAULT_URL_MAP = {
    "projet": "/portfolio/{slug}",
    "project": "/portfolio/{slug}",
    "competence": "/competences/{slug}",
    "skill": "/competences/{slug}",
}
# The seed's site: where the answer sends a visitor when the notes do not know (answer.fallback's
# default too; a site without these pages names its own, or `off`)
DEFAULT_SITE_PAGES = ("/portfolio", "/competences", "/contact")


_VAULTS_OWN_LOG = Path("<the vault's own question log>")  # a marker, compared by identity


@dataclass(frozen=True)
class Settings:
    vault_dir: Path = BUNDLED_VAULT
    exclude: tuple[str, ...] = ()
    default_visibility: str = "private"
    time_zone: str = "UTC"  # where a front matter time without its offset is read (Hugo's `timeZone`)
    llm_model: str = "qwen3:8b"
    ollama_host: str | None = None  # None: the ollama client's own default (OLLAMA_HOST or localhost)
    llm_timeout: float = 60.0
    llm_temperature: float = 0.4
    llm_keep_alive: str = "30m"
    llm_max_tokens: int = 400  # Ollama's num_predict: a 3-6 sentence French answer is 100-250 tokens
    llm_context: int = 8_192  # Ollama's num_ctx: tokens read and written (its own default, 2,048 or 4,096, cuts a prompt silently)
    llm_deadline: float = 90.0  # seconds for a whole answer (llm_timeout bounds each wait alone)
    # --- admission control (answer.admission): what one consumer GPU writes at a time, and the wait
    llm_slots: int = 2  # generations in flight per model host
    llm_queue: int = 32  # questions that may wait for a slot
    llm_max_wait: float = 20.0  # seconds a question may wait; beyond, the notes' extract at once
    answer_cache: int = 256  # finished answers kept for reuse (answer.reuse); 0: off
    peers: tuple[str, ...] = ()  # the other daemons serving the same vault: a reload reaches them
    search_top_k: int = 5
    search_min_score: float = 3.0  # tune sets: 77-98 % of visitor questions grounded, 7-33 % of off-topic ones
    # --- meaning beside words: off, bundled (the encoder inside the package) or ollama (/api/embed)
    semantic: str = "bundled"
    embed_model: str = "bge-m3"  # the Ollama model, with semantic=ollama
    prompt_budget: int = 12_000  # characters of notes in the prompt; about 3,500 tokens of French
    anchors: str = "slug"  # how the site turns a heading into its anchor (ANCHOR_FORMS)
    url_map: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_URL_MAP))
    site_pages: tuple[str, ...] = DEFAULT_SITE_PAGES  # where a visitor is sent when the notes do not know
    host: str = "127.0.0.1"
    port: int = 8765
    # --- the visitors' question log (alias suggestions read it)
    question_log: Path | None = _VAULTS_OWN_LOG  # None: no log; by default the vault's own (__post_init__)
    question_log_named: bool = False  # the owner chose it (flag or variable): if it cannot be used, serve stops
    log_retention_days: int = DEFAULT_RETENTION_DAYS
    # --- the persistent index cache
    index_cache: bool = True
    cache_dir: Path | None = None  # None: $XDG_CACHE_HOME/grasbot/<hash of the vault path>
    # --- the public side: who may do what, and how much
    token: str | None = field(default=None, repr=False)  # the owner's; None: read or create token_file. Never in a repr (a log, an error report's locals)
    token_file: Path | None = None  # None: $XDG_CONFIG_HOME/grasbot/token
    cors_origins: tuple[str, ...] = ("app://obsidian.md",)
    trusted_proxies: tuple[str, ...] = ("127.0.0.0/8", "::1")  # whose X-Forwarded-For is believed: loopback, as local as 127.0.0.1
    allowed_hosts: tuple[str, ...] = ()  # names a Host with a port may give, beside localhost and addresses
    max_question: int = 500
    max_body: int = 64 * 1024
    max_batch: int = 20
    max_history: int = 8  # turns: 4 exchanges
    max_turn: int = 2_000  # characters a turn
    rate_per_minute: float = 20.0  # questions a client may ask (answer, /ask, /ask/stream)
    rate_burst: int = 5
    rate_network_per_minute: float = 100.0  # questions an IPv6 /48 may ask, however many /64 it holds
    rate_network_burst: int = 25
    concurrent_answers: int = 2  # answers one client may wait for at once (/ask, /ask/stream, answer)
    concurrent_network_answers: int = 8  # answers an IPv6 /48 may wait for at once, however many /64 it holds
    header_timeout: float = 10.0  # seconds a client has to send a request's headers
    body_timeout: float = 10.0  # seconds a client has to send a request's body

    # environment variable -> field
    ENV = {
        "VAULT_DIR": "vault_dir",
        "GRASBOT_EXCLUDE": "exclude",
        "GRASBOT_DEFAULT_VISIBILITY": "default_visibility",
        "GRASBOT_TIME_ZONE": "time_zone",
        "LLM_MODEL": "llm_model",
        "OLLAMA_HOST": "ollama_host",
        "LLM_TIMEOUT": "llm_timeout",
        "LLM_TEMPERATURE": "llm_temperature",
        "LLM_KEEP_ALIVE": "llm_keep_alive",
        "LLM_MAX_TOKENS": "llm_max_tokens",
        "LLM_CONTEXT": "llm_context",
        "LLM_DEADLINE": "llm_deadline",
        "LLM_SLOTS": "llm_slots",
        "LLM_QUEUE": "llm_queue",
        "LLM_MAX_WAIT": "llm_max_wait",
        "GRASBOT_ANSWER_CACHE": "answer_cache",
        "GRASBOT_PEERS": "peers",
        "GRASBOT_SITE_PAGES": "site_pages",
        "SEARCH_TOP_K": "search_top_k",
        "SEARCH_MIN_SCORE": "search_min_score",
        "GRASBOT_PROMPT_BUDGET": "prompt_budget",
        "GRASBOT_SEMANTIC": "semantic",
        "GRASBOT_EMBED_MODEL": "embed_model",
        "GRASBOT_ANCHORS": "anchors",
        "GRASBOT_URL_MAP": "url_map",
        "GRASBOT_HOST": "host",
        "GRASBOT_PORT": "port",
        "GRASBOT_QUESTION_LOG": "question_log",
        "GRASBOT_LOG_RETENTION_DAYS": "log_retention_days",
        "GRASBOT_CACHE_DIR": "cache_dir",
        "GRASBOT_INDEX_CACHE": "index_cache",
        "GRASBOT_TOKEN": "token",
        "GRASBOT_TOKEN_FILE": "token_file",
        "GRASBOT_CORS_ORIGINS": "cors_origins",
        "GRASBOT_TRUSTED_PROXIES": "trusted_proxies",
        "GRASBOT_ALLOWED_HOSTS": "allowed_hosts",
        "GRASBOT_MAX_QUESTION": "max_question",
        "GRASBOT_MAX_BODY": "max_body",
        "GRASBOT_MAX_BATCH": "max_batch",
        "GRASBOT_MAX_HISTORY": "max_history",
        "GRASBOT_MAX_TURN": "max_turn",
        "GRASBOT_RATE_PER_MINUTE": "rate_per_minute",
        "GRASBOT_RATE_BURST": "rate_burst",
        "GRASBOT_RATE_NETWORK_PER_MINUTE": "rate_network_per_minute",
        "GRASBOT_RATE_NETWORK_BURST": "rate_network_burst",
        "GRASBOT_CONCURRENT_ANSWERS": "concurrent_answers",
        "GRASBOT_CONCURRENT_NETWORK_ANSWERS": "concurrent_network_answers",
        "GRASBOT_HEADER_TIMEOUT": "header_timeout",
        "GRASBOT_BODY_TIMEOUT": "body_timeout",
    }

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from `env` (default: os.environ), then `overrides` (flags; None means unset)."""
        env = os.environ if env is None else env
        raw: dict[str, Any] = {}
        for var, name in cls.ENV.items():
            if env.get(var, "").strip():
                raw[name] = (env[var].strip(), var)
        for name, value in overrides.items():
            if value is not None:
                raw[name] = (value, "--" + name.replace("_", "-"))
        values = {name: _coerce(name, value, origin) for name, (value, origin) in raw.items()}
        values["question_log_named"] = "question_log" in values
        if not values["question_log_named"]:
            values["question_log"] = default_log_path(env, vault=values.get("vault_dir", BUNDLED_VAULT))
        return cls(**values)._checked()

    def __post_init__(self) -> None:
        # the log follows vault_dir however Settings is built (load computes it with its env)
        if self.question_log is _VAULTS_OWN_LOG:
            object.__setattr__(self, "question_log", default_log_path(vault=self.vault_dir))

    @property
    def prompt_room(self) -> int:
        """Characters the messages sent to the LLM may take, so that they and the answer fit in
        LLM_CONTEXT: what is beyond it, Ollama cuts without a word."""
        return (self.llm_context - self.llm_max_tokens) * CHARS_PER_TOKEN

    def _checked(self) -> Settings:
        for folder in self.exclude:  # `/` named the whole vault as left out (every public note's path was then masked), `..` the folder above it
            steps = re.split(r"[/\\]", folder)
            if ".." in steps or all(step in ("", ".") for step in steps):
                raise ConfigError(
                    f"GRASBOT_EXCLUDE (--exclude) : {folder or '/'!r} n'est pas un dossier du coffre ; nommez un de ses dossiers, Journal ou Archives/2023"
                )
        if self.default_visibility not in ("public", "private"):
            raise ConfigError(f"GRASBOT_DEFAULT_VISIBILITY doit être 'public' ou 'private', pas {self.default_visibility!r}")
        try:
            zone_named(self.time_zone)
        except NotIanaName as exc:
            raise ConfigError(
                f"GRASBOT_TIME_ZONE : {self.time_zone!r} n'est pas un nom IANA mais un fichier de la base des fuseaux de cette machine, "
                "où le module Obsidian (« Tester cette note ») ne lirait aucune date : "
                + (f"écrivez {exc.instead}" if exc.instead else "UTC, local ou un nom IANA comme Europe/Paris")
            ) from None
        except (ValueError, KeyError):  # ZoneInfoNotFoundError is a KeyError
            raise ConfigError(
                f"GRASBOT_TIME_ZONE : {self.time_zone!r} n'est pas un fuseau horaire que connaît cette machine : "
                "UTC (celui de Hugo par défaut), local (celui de la machine) ou un nom IANA comme Europe/Paris (le paquet tzdata les donne)"
            ) from None
        if self.semantic not in ("off", "bundled", "ollama"):
            raise ConfigError(f"GRASBOT_SEMANTIC doit être off, bundled ou ollama, pas {self.semantic!r}")
        if not self.embed_model.strip():
            raise ConfigError("GRASBOT_EMBED_MODEL doit nommer un modèle de plongement (embedding) d'Ollama")
        if not 1 <= self.search_top_k <= 50:
            raise ConfigError(f"SEARCH_TOP_K doit être entre 1 et 50, pas {self.search_top_k}")
        if not _KEEP_ALIVE.fullmatch(self.llm_keep_alive):  # Ollama would refuse every answer's request
            raise ConfigError(
                f"LLM_KEEP_ALIVE doit être une durée comme Ollama la lit (30m, 1h30m, 90s) ou des secondes (-1 garde le modèle chargé), "
                f"pas {self.llm_keep_alive!r}"
            )
        if not 0 <= self.llm_temperature <= 2:
            raise ConfigError(f"LLM_TEMPERATURE doit être entre 0 et 2, pas {self.llm_temperature}")
        if self.llm_timeout <= 0:
            raise ConfigError(f"LLM_TIMEOUT doit être positif, pas {self.llm_timeout}")
        if not 16 <= self.llm_max_tokens <= 32_768:
            raise ConfigError(f"LLM_MAX_TOKENS doit être entre 16 et 32768, pas {self.llm_max_tokens}")
        if not 1_024 <= self.llm_context <= 262_144:
            raise ConfigError(f"LLM_CONTEXT doit être entre 1024 et 262144 tokens, pas {self.llm_context}")
        needed = tokens_for(self.prompt_budget) + PROMPT_RESERVE + self.llm_max_tokens
        if needed > self.llm_context:
            raise ConfigError(
                f"LLM_CONTEXT {self.llm_context} tokens ne peut pas contenir GRASBOT_PROMPT_BUDGET {self.prompt_budget} caractères de notes "
                f"(jusqu'à {tokens_for(self.prompt_budget)} tokens), les règles et la question ({PROMPT_RESERVE}) et LLM_MAX_TOKENS "
                f"{self.llm_max_tokens} : montez LLM_CONTEXT à {needed} ou plus, ou baissez le budget"
            )
        for name, var in (("llm_deadline", "LLM_DEADLINE"), ("header_timeout", "GRASBOT_HEADER_TIMEOUT"), ("body_timeout", "GRASBOT_BODY_TIMEOUT")):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{var} doit être positif, pas {getattr(self, name)}")
        if not 1 <= self.llm_slots <= 64:
            raise ConfigError(f"LLM_SLOTS doit être entre 1 et 64 générations par hôte, pas {self.llm_slots}")
        if not 0 <= self.llm_queue <= 100_000:
            raise ConfigError(f"LLM_QUEUE doit être entre 0 (pas d'attente) et 100000, pas {self.llm_queue}")
        if not 0 <= self.llm_max_wait <= 3600:
            raise ConfigError(f"LLM_MAX_WAIT doit être entre 0 et 3600 secondes, pas {self.llm_max_wait}")
        if self.answer_cache < 0:
            raise ConfigError(f"GRASBOT_ANSWER_CACHE doit être un nombre de réponses, 0 ou off, pas {self.answer_cache}")
        hosts = self.ollama_hosts
        if len(set(hosts)) != len(hosts):
            raise ConfigError(f"OLLAMA_HOST nomme deux fois un même hôte : {self.ollama_host!r}")
        for var, urls in (("OLLAMA_HOST", [h for h in hosts if h is not None]), ("GRASBOT_PEERS", self.peers)):
            for url in urls:  # named by the setting it came from: an owner who set one has no reason to look at the other
                if any(c.isspace() for c in url) or "," in url:
                    raise ConfigError(f"{var} : {url!r} n'est pas une URL")
        for page in self.site_pages:
            if not page.startswith(("/", "http://", "https://")) or any(c.isspace() for c in page):
                raise ConfigError(f"GRASBOT_SITE_PAGES : {page!r} doit être une page du site (/contact) ou une URL http:// ou https://")
        for url in self.peers:
            if not url.startswith(("http://", "https://")):
                raise ConfigError(f"GRASBOT_PEERS : {url!r} doit être l'URL http:// ou https:// d'un démon")
        for var, urls in (("OLLAMA_HOST", [h for h in hosts if h is not None]), ("GRASBOT_PEERS", self.peers)):
            for url in urls:
                scheme, sep, rest = url.partition("://")  # no scheme: Ollama's client reads host:port as http
                if sep and scheme.lower() not in ("http", "https"):
                    raise ConfigError(f"{var} : {url!r} doit être une URL http:// ou https://, ou hôte:port")
                try:
                    _ = urllib.parse.urlsplit("http://" + (rest if sep else url)).port  # a bad [IPv6] or port raises
                except ValueError as exc:
                    raise ConfigError(f"{var} : {url!r} n'est pas une URL ({exc})") from None
        if self.prompt_budget < 500:
            raise ConfigError(f"GRASBOT_PROMPT_BUDGET doit compter au moins 500 caractères, pas {self.prompt_budget}")
        folded: dict[str, str] = {}
        for kind, template in self.url_map.items():
            problem = template_problem(template)
            if problem:
                raise ConfigError(
                    f"GRASBOT_URL_MAP : l'url du type {kind!r} ({template!r}) ne peut pas être construite : {problem} ;"
                    f" une url contient un ou plusieurs de {', '.join('{' + name + '}' for name in FIELDS)}"
                )
            other = folded.setdefault(fold_type(kind), kind)
            if other != kind and self.url_map[other] != template:  # which one a note got would be chance
                raise ConfigError(
                    f"GRASBOT_URL_MAP : les types {other!r} et {kind!r} sont un même type (casse et accents ne les distinguent pas) avec deux urls"
                )
        if self.anchors not in ANCHOR_FORMS:
            raise ConfigError(f"GRASBOT_ANCHORS doit être l'un de {', '.join(ANCHOR_FORMS)}, pas {self.anchors!r}")
        if not 1 <= self.log_retention_days <= MAX_RETENTION_DAYS:
            raise ConfigError(f"GRASBOT_LOG_RETENTION_DAYS doit être entre 1 et {MAX_RETENTION_DAYS} jours, pas {self.log_retention_days}")
        variable = {name: var for var, name in self.ENV.items()}
        counts = ("max_question", "max_body", "max_batch", "max_history", "max_turn", "rate_burst", "rate_network_burst")
        for name in (*counts, "concurrent_answers", "concurrent_network_answers"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{variable[name]} doit valoir au moins 1, pas {getattr(self, name)}")
            if getattr(self, name) > PROTOCOL_LIMITS.get(name, getattr(self, name)):
                raise ConfigError(f"{variable[name]} peut abaisser la limite du protocole, {PROTOCOL_LIMITS[name]}, pas la relever ({getattr(self, name)})")
        for name in ("rate_per_minute", "rate_network_per_minute"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{variable[name]} doit être positif, pas {getattr(self, name)}")
        if "*" in self.cors_origins:
            raise ConfigError("GRASBOT_CORS_ORIGINS : '*' n'est pas permis ; listez l'origine du site et app://obsidian.md")
        if any(origin.lower() == "null" for origin in self.cors_origins):  # what sandboxed frames and file:// pages send
            raise ConfigError(
                "GRASBOT_CORS_ORIGINS : 'null' n'est pas permis (tout cadre isolé ou fichier local l'envoie) ; listez l'origine du site et app://obsidian.md"
            )
        for entry in self.trusted_proxies:  # here, before `serve` makes a token file or loads the vault
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ConfigError(f"GRASBOT_TRUSTED_PROXIES : le proxy de confiance {entry!r} n'est ni une adresse IP ni un réseau") from None
        for name in self.allowed_hosts:  # compared with the Host header's name, without its port
            if not re.fullmatch(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?", name):
                raise ConfigError(f"GRASBOT_ALLOWED_HOSTS : {name!r} n'est pas un nom d'hôte comme un navigateur l'envoie (sans schéma ni port : grasbot.lan)")
        for origin in self.cors_origins:  # compared as browsers send them: one that differs never matches
            parts = urllib.parse.urlsplit(origin)
            sent = f"{parts.scheme.lower()}://{parts.netloc.lower()}" if parts.scheme and parts.netloc else None
            if origin != sent:
                hint = f" : écrivez {sent!r}" if sent and not (parts.path.strip("/") or parts.query or parts.fragment) else ""
                raise ConfigError(
                    f"GRASBOT_CORS_ORIGINS : {origin!r} n'est pas une origine comme un navigateur l'envoie "
                    f"(schéma://hôte[:port], en minuscules, sans chemin){hint}"
                )
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"GRASBOT_PORT doit être entre 0 et 65535, pas {self.port}")
        return self

    @property
    def ollama_hosts(self) -> tuple[str | None, ...]:
        """The model hosts `OLLAMA_HOST` lists, comma-separated (None: the client's default)."""
        if self.ollama_host is None:
            return (None,)
        hosts = tuple(h.strip().rstrip("/") for h in self.ollama_host.split(",") if h.strip())
        return hosts or (None,)

    @property
    def _all_slots_but_one(self) -> int:
        """One fewer than the visitors' slots of every model host, 1 at least: what one asker may
        hold, so that a slot is left to the others."""
        return max(1, self.llm_slots * len(self.ollama_hosts) - 1)

    @property
    def answers_per_visitor(self) -> int:
        """The answers one visitor may wait for at once: GRASBOT_CONCURRENT_ANSWERS, and one fewer
        than the visitors' slots of every model host, 1 at least. With as many as the slots (2 and
        2, the defaults) one visitor's questions asked at once held them all, the others queued."""
        return min(self.concurrent_answers, self._all_slots_but_one)

    @property
    def answers_per_network(self) -> int:
        """The answers one IPv6 /48 may wait for at once: GRASBOT_CONCURRENT_NETWORK_ANSWERS,
        bounded as a visitor's are (`answers_per_visitor`). Unbounded, its default 8 exceeded
        the default 2 slots: a network's /64s asked at once held them all, the others queued."""
        return min(self.concurrent_network_answers, self._all_slots_but_one)

    def with_(self, **changes: Any) -> Settings:
        return replace(self, **changes)._checked()

    @cached_property
    def _url_templates(self) -> dict[str, str]:
        return {fold_type(kind): template for kind, template in self.url_map.items()}

    def url_for(self, note_type: str | None, slug: str, path: str = "", slug_written: str | None = None, url_written: str | None = None) -> str | None:
        """The page of the note at `path` (vault-relative; `slug_written`, `url_written`: its
        front matter's) on the site, from its type's template (`Compétence` finds `competence`),
        else the template of notes without a type (key ``) for a note that has none, else the
        catch-all (`*`); None when none applies."""
        template = self.url_template(note_type)
        return page_url(template, Page(path, slug, slug_written, url_written)) if template else None

    def url_template(self, note_type: str | None) -> str | None:
        """The template `url_for` fills for a note of `note_type`, or None: its notes have no page."""
        return template_for(self._url_templates, note_type)


_TYPES = {f.name: f.type for f in fields(Settings)}
# Go's time.ParseDuration, which Ollama reads `keep_alive` with, or a whole number of seconds
_KEEP_ALIVE = re.compile(r"-?\d+|[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+")


def _vault_folder(given: str) -> str:
    """A folder of --exclude as the vault's walk names it (`Journal/Intime`): given as
    `Journal//Intime`, `./Journal/./Intime/` or `Journal\\Intime`, it matched no note, and the
    folder's notes reached visitors with no warning. Only `/`, `.` and the like stay as given,
    for `Settings` to refuse by name."""
    parts = [part for part in re.split(r"[/\\]", given.strip()) if part not in ("", ".")]
    return "/".join(parts) if parts else given.strip()


def _coerce(name: str, value: Any, origin: str) -> Any:
    kind = _TYPES[name]
    try:
        if name == "question_log":
            return parse_log_path(value)  # "off" disables the log
        if name in ("vault_dir", "cache_dir", "token_file"):
            return Path(value).expanduser()
        if name == "answer_cache" and str(value).strip().lower() == "off":
            return 0
        if name == "site_pages" and str(value).strip().lower() in ("off", "none"):
            return ()
        if name in ("exclude", "cors_origins", "trusted_proxies", "allowed_hosts", "peers", "site_pages"):
            items = value.split(",") if isinstance(value, str) else list(value)
            if name == "exclude":
                return tuple(_vault_folder(i) for i in items if i.strip())
            strip = "/" if name == "peers" else ""
            items = [i.lower() for i in items] if name == "allowed_hosts" else items  # as browsers send a name
            return tuple(i.strip().strip(strip) for i in items if i.strip())
        if name in ("semantic", "anchors", "default_visibility"):  # read as GRASBOT_INDEX_CACHE=OFF is
            return str(value).strip().lower()
        if name == "time_zone":  # IANA's names are written in their case: Europe/Paris
            return str(value).strip()
        if name == "url_map":
            return _parse_url_map(value) if isinstance(value, str) else dict(value)
        if kind in ("bool", bool):
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
                raise ValueError("on ou off attendu")
            return text in ("1", "true", "yes", "on")
        if kind in ("int", int):
            try:
                return int(value)
            except ValueError:  # int()'s own sentence is English: « invalid literal for int() with base 10 »
                raise ValueError("ce n'est pas un nombre entier") from None
        if kind in ("float", float):
            try:
                number = float(value)
            except ValueError:  # « could not convert string to float »
                raise ValueError("ce n'est pas un nombre") from None
            if not math.isfinite(number):  # NaN passes every bound below (a rate of NaN limits nobody)
                raise ValueError("ce n'est pas un nombre fini")
            return number
        return str(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin} : impossible d'utiliser {value!r} ({exc})") from None


def _parse_url_map(text: str) -> dict[str, str]:
    """`projet=/portfolio/{slug},competence=/competences/{slug},*=/notes/{path}` (the fields are
    checked with the whole map, in `Settings._checked`)."""
    mapping: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        kind, sep, template = item.partition("=")
        if not sep:
            raise ValueError(f"type=/chemin/{{slug}} attendu, reçu {item.strip()!r}")
        kind = kind.strip().lower()
        if kind in mapping and mapping[kind] != template.strip():
            raise ValueError(f"le type {kind!r} reçoit deux urls")
        mapping[kind] = template.strip()
    return mapping
