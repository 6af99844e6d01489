"""The owner's token: where it comes from, how it is checked, and what a caller without it gets."""

from __future__ import annotations

import json
import os
import socket
import stat
import urllib.error
import urllib.parse
import urllib.request
from unittest import mock

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from grasbot import Settings
from grasbot._exceptions import ConfigError
from grasbot.server.auth import bearer_matches, default_token_file, resolve_owner_token
from grasbot.server.middleware import HOSTS_ALLOWED, _rebound, hosts_checked
from support.bots import rpc, serve_process, serve_refused

UNAUTHORIZED = {"code": -32001, "message": "Unauthorized", "data": "jeton du propriétaire requis"}
TOKEN = "auth-test-token-0123456789abcdef"


def settings(**overrides) -> Settings:
    return Settings.load(env={}, **overrides)


def test_default_token_file_follows_xdg(tmp_path):
    assert default_token_file({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "grasbot" / "token"
    assert default_token_file({}).parts[-3:] == (".config", "grasbot", "token")


def test_token_from_the_setting_wins(tmp_path):
    token = resolve_owner_token(settings(token=TOKEN, token_file=tmp_path / "t"))
    assert token.value == TOKEN and token.path is None
    assert not (tmp_path / "t").exists()
    assert TOKEN not in repr(token) and TOKEN not in token.describe()
    assert TOKEN not in repr(settings(token=TOKEN))  # what an error report shows of serve()'s locals
    with pytest.raises(ConfigError, match="au moins 16"):
        resolve_owner_token(settings(token="short"))
    with pytest.raises(ConfigError, match="au moins 16"):
        resolve_owner_token(settings(token="k" * 15))
    assert resolve_owner_token(settings(token="k" * 16)).value == "k" * 16
    with pytest.raises(ConfigError, match="ASCII imprimable"):
        resolve_owner_token(settings(token="a token with spaces inside"))


def test_token_file_is_created_once_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "config" / "grasbot" / "token"
    old = os.umask(0)  # the most permissive umask: the file must still be 0600
    try:
        first = resolve_owner_token(settings(token_file=path))
    finally:
        os.umask(old)
    assert first.created and first.path == path and len(first.value) >= 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.read_text().strip() == first.value
    assert str(path) in first.describe() and first.value not in first.describe()
    assert "(lisible par vous seul ; envoyez-le en 'Authorization: Bearer <jeton>')" in first.describe()  # how the owner uses it
    again = resolve_owner_token(settings(token_file=path))
    assert not again.created and again.value == first.value
    # the environment's XDG_CONFIG_HOME is where it goes by default
    by_env = resolve_owner_token(settings(), env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert by_env.path == tmp_path / "xdg" / "grasbot" / "token" and by_env.created


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o644])
def test_token_file_others_can_read_is_refused(tmp_path, mode):
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(mode)
    with pytest.raises(ConfigError) as caught:
        resolve_owner_token(settings(token_file=path))
    message = str(caught.value)
    assert str(path) in message and "peut être lu par d'autres utilisateurs" in message and TOKEN not in message
    # what the owner does about it: a new token, or the file closed if nobody else could read it
    assert f"(mode {mode:04o}) : tenez le jeton pour connu, supprimez le fichier et redémarrez pour en obtenir un nouveau" in message
    assert message.endswith(f"(ou `chmod 600 {path}` si personne d'autre n'a pu le lire)")
    path.chmod(0o600)
    assert resolve_owner_token(settings(token_file=path)).value == TOKEN


def test_bad_token_files_are_refused(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("\n")
    empty.chmod(0o600)
    with pytest.raises(ConfigError, match="au moins 16"):
        resolve_owner_token(settings(token_file=empty))
    real = tmp_path / "real"
    real.write_text(TOKEN)
    real.chmod(0o600)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(ConfigError, match="lien symbolique"):
        resolve_owner_token(settings(token_file=link))
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(ConfigError):
        resolve_owner_token(settings(token_file=dangling))
    assert not (tmp_path / "nowhere").exists()  # never created through a link
    folder = tmp_path / "folder"
    folder.mkdir(mode=0o700)
    with pytest.raises(ConfigError):
        resolve_owner_token(settings(token_file=folder))


def test_a_token_file_whose_folder_cannot_be_made_is_refused_with_its_path(tmp_path, monkeypatch):
    """Its folder a file, or a folder under one the user may not write: `serve` died with a
    FileExistsError or PermissionError traceback instead of saying which file it could not make."""
    (tmp_path / "config").write_text("a file where the folder should be")
    with pytest.raises(ConfigError, match="impossible de créer le fichier du jeton .*config/grasbot/token : un fichier est là où son dossier devrait être"):
        resolve_owner_token(settings(token_file=tmp_path / "config" / "grasbot" / "token"))
    (tmp_path / "a").write_text("a file")
    with pytest.raises(ConfigError, match="impossible de créer le fichier du jeton .*a/b/token : un fichier est là où son dossier devrait être"):
        resolve_owner_token(settings(token_file=tmp_path / "a" / "b" / "token"))

    def refused(self, *args, **kwargs):  # root may write anywhere: refused as another user is
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr("pathlib.Path.mkdir", refused)
    with pytest.raises(ConfigError, match="impossible de créer le fichier du jeton .*etc/grasbot/token : Permission denied"):
        resolve_owner_token(settings(token_file=tmp_path / "etc" / "grasbot" / "token"))


def test_bearer_matches():
    assert bearer_matches(f"Bearer {TOKEN}", TOKEN)
    assert bearer_matches(f"bearer   {TOKEN} ", TOKEN)
    for header in (None, "", TOKEN, f"Basic {TOKEN}", f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", "Bearer ", "Bearer é\udcff"):
        assert not bearer_matches(header, TOKEN), header
    assert not bearer_matches("Bearer ", "") and not bearer_matches("Bearer x", "")


# ---------------------------------------------------------------- over HTTP


async def test_without_any_token_nobody_is_the_owner(start_daemon):
    client = await start_daemon()  # no owner_token, no settings.token
    for headers in ({}, {"Authorization": "Bearer "}, {"Authorization": "Bearer anything-at-all-0123456789"}):
        for method, params in (("reload", {}), ("suggest_aliases", {"slug": "python"}), ("search", {"q": "x", "audience": "owner"})):
            assert (await rpc(client, method, params, headers=headers))["error"] == UNAUTHORIZED
        resp = await client.post("/reload-vault", headers=headers)
        assert resp.status == 401 and await resp.json() == {"error": {"code": -32001, "message": "Unauthorized", "data": "jeton du propriétaire requis"}}


async def test_token_from_settings_guards_every_owner_call(start_daemon):
    client = await start_daemon(token=TOKEN)
    good = {"Authorization": f"Bearer {TOKEN}"}
    owner_calls = [
        ("reload", {}),
        ("suggest_aliases", {"slug": "python"}),
        ("search", {"q": "python", "audience": "owner"}),
        ("answer", {"q": "python", "audience": "owner"}),
    ]
    for method, params in owner_calls:
        assert (await rpc(client, method, params))["error"] == UNAUTHORIZED, method
        assert (await rpc(client, method, params, headers={"Authorization": "Bearer wrong"}))["error"] == UNAUTHORIZED
        assert "result" in await rpc(client, method, params, headers=good), method
    assert (await client.post("/reload-vault")).status == 401
    assert (await client.post("/reload-vault", headers=good)).status == 200
    # visitors' calls need nothing
    for method, params in (("search", {"q": "python"}), ("answer", {"q": "python"}), ("health", None)):
        assert "result" in await rpc(client, method, params)
    assert (await client.get("/ask", params={"q": "python"})).status == 200


async def test_health_says_whose_view_the_caller_got(start_daemon):
    """A wrong token is answered as a visitor, not refused (a proxy may send its own): health
    says so, so that a plugin with a stale token can tell it from none before it asks."""
    client = await start_daemon(token=TOKEN)
    callers = {
        "owner": [{"Authorization": f"Bearer {TOKEN}"}, {"Authorization": f"bearer  {TOKEN} "}],
        "visitor": [{}, {"Authorization": f"Basic {TOKEN}"}, {"Authorization": "Bearer"}],
        "token_refused": [{"Authorization": "Bearer an-old-token-0123456789"}, {"Authorization": f"Bearer {TOKEN}x"}],
    }
    for caller, variants in callers.items():
        for headers in variants:
            health = (await rpc(client, "health", None, headers=headers))["result"]
            assert health["caller"] == caller, headers
            assert ("question_log" in health) is (caller == "owner"), headers  # a refused token reads a visitor's view
            assert all("url" not in host for host in health["generation"]["hosts"]) is (caller != "owner"), headers
            resp = await client.get("/health", headers=headers)
            assert resp.status == 200 and (await resp.json())["caller"] == caller, headers


async def test_cors_allows_exactly_the_configured_origins(start_daemon):
    client = await start_daemon(cors_origins="https://site.example,app://obsidian.md")
    call = json.dumps({"jsonrpc": "2.0", "method": "health", "id": 1})
    for origin in ("https://site.example", "app://obsidian.md"):
        resp = await client.post("/rpc", data=call, headers={"Content-Type": "application/json", "Origin": origin})
        assert resp.headers["Access-Control-Allow-Origin"] == origin
    for origin in ("http://localhost:5173", "http://127.0.0.1:8080", "http://localhost", "https://site.example.evil", "null", "*"):
        resp = await client.post("/rpc", data=call, headers={"Content-Type": "application/json", "Origin": origin})
        assert "Access-Control-Allow-Origin" not in resp.headers, origin
        pre = await client.options("/ask", headers={"Origin": origin, "Access-Control-Request-Method": "GET"})
        assert pre.status == 403, origin
    with pytest.raises(ConfigError, match=r"'\*' n'est pas permis"):
        Settings.load(env={}, cors_origins="*")
    # the origin of every sandboxed frame and local file: listing it opens the daemon to any of them
    with pytest.raises(ConfigError, match="'null' n'est pas permis"):
        Settings.load(env={"GRASBOT_CORS_ORIGINS": "https://site.example,null"})


@pytest.mark.parametrize(
    "listed, hint",
    [
        ("https://mon-site.fr/", " : écrivez 'https://mon-site.fr'"),
        ("https://Autre.FR", " : écrivez 'https://autre.fr'"),
        ("HTTPS://site.example:8443", " : écrivez 'https://site.example:8443'"),
        ("https://site.example/chat", ""),
        ("site.example", ""),
    ],
)
def test_a_cors_origin_no_browser_sends_is_refused_at_start(listed, hint):
    """A browser sends `https://mon-site.fr`, lower case and without a slash: a listed origin
    written otherwise never matched, and the site's widget was refused without a word."""
    with pytest.raises(ConfigError) as refused:
        Settings.load(env={"GRASBOT_CORS_ORIGINS": f"app://obsidian.md,{listed}"})
    assert str(refused.value) == (
        f"GRASBOT_CORS_ORIGINS : {listed!r} n'est pas une origine comme un navigateur l'envoie (schéma://hôte[:port], en minuscules, sans chemin){hint}"
    )
    assert Settings.load(env={"GRASBOT_CORS_ORIGINS": "app://obsidian.md,https://mon-site.fr,http://localhost:5173"}).cors_origins[1] == "https://mon-site.fr"


@pytest.mark.parametrize(
    "host, refused",
    [
        ("evil.example", True),
        ("Evil.Example.", True),
        ("evil.example:80", True),
        ("grasbot.lan", False),
        ("localhost", False),
        ("app.localhost", False),
        ("127.0.0.1", False),
        ("[::1]", False),
        ("", False),  # HTTP/1.0 sends none: no name to rebind
    ],
)
def test_a_daemon_listening_on_port_80_checks_a_host_without_a_port(host, refused):
    """On port 80 a browser writes no port in Host, so `serve --port 80` with no proxy in front
    read every name as a proxy's and answered a rebound page. Behind a proxy (another port), a
    Host without a port is still the site's name, as deploy/nginx sends it."""
    allowed = frozenset({"grasbot.lan"})
    assert _rebound(host, allowed, on_port_80=True) is refused
    assert _rebound(host, allowed) is (refused and host.endswith(":80"))  # behind a proxy: a port-less Host is served


async def test_the_host_check_reads_the_port_the_daemon_listens_on():
    """The middleware learns from the connection's own address that it listens on port 80."""

    async def served(request):
        return web.Response(text="ok")

    app = web.Application()
    app[HOSTS_ALLOWED] = frozenset()
    for port, status in ((80, 421), (8765, 200)):
        transport = mock.Mock()
        transport.get_extra_info.return_value = ("127.0.0.1", port)
        request = make_mocked_request("GET", "/health", headers={"Host": "evil.example"}, transport=transport, app=app)
        assert (await hosts_checked(request, served)).status == status, port


async def test_a_page_whose_name_was_rebound_to_the_daemon_is_refused(start_daemon):
    """DNS rebinding: a page at evil.example:8765, its name pointed at 127.0.0.1 once loaded, is
    same-origin with the daemon and read its answers, with an X-Forwarded-For of its choosing
    (127.0.0.1 is a trusted proxy) a fresh rate-limit bucket each. The browser's Host gives the
    port it reached: a name the daemon does not know there is refused, before anything answers."""
    client = await start_daemon(allowed_hosts="GrasBot.lan")
    for host in ("evil.example:8765", "evil.example.:8765", "Evil.Example:80"):
        for path in ("/health", "/ask?q=python", "/"):
            resp = await client.get(path, headers={"Host": host})
            assert resp.status == 421, (host, path)
            assert await resp.json() == {
                "error": {
                    "code": -32600,
                    "message": "Invalid Request",
                    "data": "ce démon n'est pas servi sous le nom de l'en-tête Host : ajoutez ce nom à GRASBOT_ALLOWED_HOSTS s'il est le vôtre",
                }
            }
        call = json.dumps({"jsonrpc": "2.0", "method": "search", "params": {"q": "python"}, "id": 1})
        assert (await client.post("/rpc", data=call, headers={"Content-Type": "application/json", "Host": host})).status == 421
    # localhost, an address (no name to rebind), a listed name, and a proxy's Host without a
    # port (deploy/nginx sends `Host $host`, the site's name): served
    served = ("localhost:8765", "app.localhost:8765", "127.0.0.1:8765", "[::1]:8765", "192.168.1.5:8765", "grasbot.lan:8765", "grasbot.example.org")
    for host in served:
        resp = await client.get("/health", headers={"Host": host})
        assert resp.status == 200, host
    with pytest.raises(ConfigError, match=r"GRASBOT_ALLOWED_HOSTS : 'grasbot.lan:8765' n'est pas un nom d'hôte"):
        Settings.load(env={"GRASBOT_ALLOWED_HOSTS": "grasbot.lan:8765"})


# ---------------------------------------------------------------- `grasbot serve`


def test_serve_creates_the_token_file_prints_its_path_never_the_token(note_writer, tmp_path):
    note_writer("un.md", "title: Un\nvisibility: public", "Le jardin et les abeilles.")
    config = tmp_path / "xdg"
    proc = serve_process("--port", "0", "--vault", str(note_writer.root), env={"XDG_CONFIG_HOME": str(config)}, token=None)
    try:
        line = proc.stdout.readline()
        assert line.startswith("GrasBot écoute sur "), proc.stderr.read() if not line else line
        url = line.split()[3]
        path = config / "grasbot" / "token"
        token = path.read_text().strip()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        request = urllib.request.Request(f"{url}/reload-vault", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 401
        request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request, timeout=10) as resp:
            assert json.load(resp)["vault_size"] == 1
    finally:
        proc.terminate()
        proc.wait(15)
    out, err = proc.stdout.read(), proc.stderr.read()
    assert f"jeton du propriétaire : créé dans {path}" in err
    assert token not in err and token not in out and token not in line


def test_serve_logs_a_malformed_request_in_one_line_without_its_bytes(note_writer, tmp_path):
    """aiohttp answers 400 to a request it cannot parse and logged an ERROR with a traceback
    quoting the bytes sent: any client could fill the log. Now one warning naming the fault."""
    note_writer("un.md", "title: Un\nvisibility: public", "Le jardin et les abeilles.")
    proc = serve_process("--port", "0", "--vault", str(note_writer.root), "--token-file", str(tmp_path / "token"))
    try:
        line = proc.stdout.readline()
        assert line.startswith("GrasBot écoute sur "), proc.stderr.read() if not line else line
        host, port = urllib.parse.urlsplit(line.split()[3]).netloc.rsplit(":", 1)
        for raw in (
            b"GET /health HTTP/1.1\r\nHost: x\r\nX-Secret: " + b"zq" * 5000 + b"\r\n\r\n",  # a header over 8 KiB
            b"POST /rpc HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzqzq\r\n",  # no chunk size
        ):
            with socket.create_connection((host, int(port)), timeout=10) as conn:
                conn.sendall(raw)
                answer = b"".join(iter(lambda: conn.recv(4096), b""))  # aiohttp closes after a 400
            assert answer.split(b"\r\n", 1)[0] in (b"HTTP/1.0 400 Bad Request", b"HTTP/1.1 400 Bad Request"), answer
        with urllib.request.urlopen(f"http://{host}:{port}/health", timeout=10) as resp:  # still serving
            assert json.load(resp)["status"] == "ok"
    finally:
        proc.terminate()
        proc.wait(15)
    err = proc.stderr.read()
    warnings = [line for line in err.splitlines() if "refused by aiohttp" in line]
    assert len(warnings) == 2 and all(" WARNING aiohttp.server: " in w for w in warnings), err
    assert "(400 LineTooLong)" in warnings[0] and "(400 BadHttpMessage)" in warnings[1], warnings
    assert "Traceback" not in err and "zq" not in err and " ERROR " not in err, err


def test_serve_refuses_a_token_file_others_can_read(note_writer, tmp_path):
    note_writer("un.md", "title: Un\nvisibility: public", "Le jardin.")
    path = tmp_path / "token"
    path.write_text(TOKEN)
    path.chmod(0o644)
    out, err = serve_refused("--port", "0", "--vault", str(note_writer.root), "--token-file", str(path), token=None)
    assert "peut être lu par d'autres utilisateurs" in err and TOKEN not in err and "Traceback" not in err
    assert out == ""


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("default_visibility", "private"),
        ("default_visibility", "public"),
        ("time_zone", "UTC"),
        ("time_zone", "Europe/Paris"),
        ("time_zone", "local"),
    ],
)
async def test_the_owners_health_says_how_notes_are_read_a_visitors_does_not(start_daemon, setting, value):
    """The plugin's « Tester cette note » says whether visitors see a note with no `visibility`
    (the daemon's --default-visibility), and reads a note's publish and expiry dates in the zone
    the daemon reads them in (GRASBOT_TIME_ZONE), from the owner's health. A visitor is not told
    how the owner's notes are kept."""
    client = await start_daemon(token=TOKEN, **{setting: value})
    owner = (await rpc(client, "health", None, headers={"Authorization": f"Bearer {TOKEN}"}))["result"]
    assert owner[setting] == value
    assert (await (await client.get("/health", headers={"Authorization": f"Bearer {TOKEN}"})).json())[setting] == value
    for headers in ({}, {"Authorization": "Bearer an-old-token-0123456789"}):
        assert setting not in (await rpc(client, "health", None, headers=headers))["result"], headers
        assert setting not in await (await client.get("/health", headers=headers)).json(), headers  # the site's GET /health
