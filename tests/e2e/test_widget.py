"""The widget on a site's own page, under a strict Content-Security-Policy, in a real browser.

A page of "the owner's site" is served from another origin than GrasBot's, with a CSP that
allows no inline script or style and nothing but GrasBot's origin; it carries the one tag
deploy/README.md gives. The widget (`/widget.js`, through nginx) must mount, converse with
the daemon across origins (GRASBOT_CORS_ORIGINS lists the site), show hostile content as
text, pass axe, and raise no CSP violation.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from aiohttp import web

from support.browser import ARTIFACTS, FOLLOWUP, HOSTILE_REPLY, ask, drive, history_sent
from support.nginx import QUESTION, SCRIPT_TITLE, grasbot_behind_nginx

PANEL = ".grasbot-panel .grasbot"


async def opened(url: str, origins: tuple[str, ...], **options) -> dict:
    """The widget's snapshot once its launcher is clicked on the page at `url`."""
    steps = [{"do": "click", "selector": ".grasbot-launcher"}, {"do": "snapshot", "name": "open", "chat": PANEL}]
    report = await drive(url, steps, origins=origins, **options)
    return report["snapshots"]["open"]


def strict_csp(bot: str) -> str:
    """The policy deploy/README.md tells the owner to send, for a GrasBot at `bot`."""
    return (
        f"default-src 'none'; script-src 'self' {bot}; style-src 'self' {bot}; connect-src {bot}; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"
    )


def host_page(bot: str, body: str = "", lang: str = "fr", head: str = "", *, widget: bool = True) -> str:
    """A page of the owner's site with deploy/README.md's tag, as is (or, `widget` false, without it)."""
    tag = f'<script src="{bot}/widget.js" data-grasbot-origin="{bot}" defer></script>' if widget else ""
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Le site du propriétaire</title>'
        f"{head}{tag}</head>"
        '<body><main><h1>Mon portfolio</h1><p>Des projets, des notes. <a href="/contact">Contact</a></p>'
        f"{body}</main></body></html>"
    )


@contextlib.asynccontextmanager
async def owner_site(pages: dict[str, str]) -> AsyncIterator[str]:
    """A site on its own origin: `pages[path]` is HTML (CSS for a path in .css), served with
    `pages['csp']` as its CSP."""

    async def page(request: web.Request) -> web.Response:
        text = pages.get(request.path)
        if text is None:
            raise web.HTTPNotFound()
        kind = "text/css" if request.path.endswith(".css") else "text/html"
        return web.Response(text=text, content_type=kind, headers={"Content-Security-Policy": pages["csp"]})

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


async def test_the_widget_works_on_a_page_under_a_strict_csp(tmp_path):
    pages: dict[str, str] = {}
    async with owner_site(pages) as site:
        async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CORS_ORIGINS": site, "GRASBOT_ANSWER_CACHE": "off"}) as stack:
            pages["csp"] = strict_csp(stack.url)
            pages["/"] = host_page(stack.url)
            # control: the same policy does report what it forbids (here, an inline style)
            pages["/control"] = host_page(stack.url, '<p style="color: red">interdit</p>')
            # an English site that embeds a French GrasBot, with a form of its own
            pages["/en"] = host_page(stack.url, '<label>Your name <input id="name"></label>', lang="en")
            stack.ollama.script_next(HOSTILE_REPLY + " Le potager [potager].", chunks=4)
            stack.ollama.script_next("Sur un Raspberry Pi [potager].", chunks=2)
            stack.ollama.script_next("Le potager arrose tout seul [potager]. " * 6, chunks=12, chunk_delay=0.2)
            stack.ollama.script_next("Le potager arrose tout seul, grâce à un script Python [potager]. " * 8, chunks=4)
            report = await drive(
                f"{site}/",
                [
                    {"do": "waitFor", "selector": ".grasbot-launcher"},
                    {"do": "snapshot", "name": "closed"},
                    {"do": "press", "key": "Tab"},  # the page's own link
                    {"do": "press", "key": "Tab"},  # the launcher
                    {"do": "press", "key": "Enter"},
                    {"do": "snapshot", "name": "opened", "chat": PANEL},
                    *[{**step, "chat": PANEL} for step in ask(QUESTION, 1)],
                    *[{**step, "chat": PANEL} for step in ask(FOLLOWUP, 2)],
                    {"do": "snapshot", "name": "answered", "chat": PANEL},
                    {"do": "screenshot", "name": "widget-open.png", "fullPage": False},
                    {"do": "press", "key": "Escape"},
                    {"do": "snapshot", "name": "closed-again", "chat": PANEL},
                    {"do": "click", "selector": ".grasbot-launcher"},
                    {"do": "axe", "name": "widget"},  # last: axe leaves style attributes behind
                ],
                origins=(site, stack.url),
            )
            narrow = await drive(
                f"{site}/en",
                [
                    {"do": "click", "selector": ".grasbot-launcher"},
                    {"do": "ask", "q": QUESTION, "chat": PANEL},
                    # while the answer is written, the visitor goes on to the site's own form
                    {"do": "waitText", "text": "potager", "chat": PANEL},
                    {"do": "focusOn", "selector": "#name"},
                    {"do": "type", "text": "Ada"},
                    {"do": "wait", "states": ["done"], "turns": 1, "chat": PANEL},
                    {"do": "snapshot", "name": "narrow", "chat": PANEL},
                    {"do": "screenshot", "name": "widget-360px.png", "fullPage": False},
                    # Escape from the panel's close button, then from the launcher of an open panel
                    {"do": "focusOn", "selector": ".grasbot-close"},
                    {"do": "press", "key": "Escape"},
                    {"do": "snapshot", "name": "closed-from-close", "chat": PANEL},
                    {"do": "press", "key": "Enter"},
                    {"do": "focusOn", "selector": ".grasbot-launcher"},
                    {"do": "press", "key": "Escape"},
                    {"do": "snapshot", "name": "closed-from-launcher", "chat": PANEL},
                ],
                origins=(site, stack.url),
                viewport={"width": 360, "height": 740},
            )
            # Windows' high contrast mode, the panel open: every button still outlined
            contrast = await drive(
                f"{site}/",
                [
                    {"do": "focusOn", "selector": ".grasbot-launcher"},
                    {"do": "press", "key": "Enter"},  # by the keyboard: the pointer's hover recolours the launcher
                    {"do": "snapshot", "name": "forced", "chat": PANEL},
                ],
                origins=(site, stack.url),
                forcedColors="active",
            )
            # 400% zoom of a 1280×1024 screen: a window of 320×256 CSS pixels (WCAG 1.4.10)
            zoomed = await drive(
                f"{site}/",
                [
                    {"do": "click", "selector": ".grasbot-launcher"},
                    *[{**step, "chat": PANEL} for step in ask(QUESTION, 1)],
                    {"do": "scrollIntoView", "selector": ".grasbot-panel .grasbot-turn"},
                    {"do": "snapshot", "name": "zoomed", "chat": PANEL},
                    {"do": "screenshot", "name": "widget-400-percent.png", "fullPage": False},
                ],
                origins=(site, stack.url),
                viewport={"width": 320, "height": 256},
            )
            # a visitor whose browser's default font size is 24px (WCAG 1.4.4)
            larger = await drive(
                f"{site}/",
                [{"do": "click", "selector": ".grasbot-launcher"}, {"do": "snapshot", "name": "larger", "chat": PANEL}],
                origins=(site, stack.url),
                fontSize=24,
            )
            # a site GRASBOT_CORS_ORIGINS does not list: the browser refuses it the answers
            elsewhere: dict[str, str] = {"csp": pages["csp"], "/": pages["/"]}
            async with owner_site(elsewhere) as served:
                # by another name than GrasBot's: behind nginx, whose Host carries no port, a page on
                # GrasBot's own host name is GrasBot's own origin
                other = served.replace("127.0.0.1", "localhost")
                unlisted = await drive(
                    f"{other}/",
                    [
                        {"do": "click", "selector": ".grasbot-launcher"},
                        *[{**step, "chat": PANEL} for step in ask(QUESTION, 1)],
                        {"do": "snapshot", "name": "unlisted", "chat": PANEL},
                    ],
                    origins=(other, stack.url),
                )
            # a site template that includes the tag twice (its layout and a page): one widget
            pages["/twice"] = host_page(stack.url).replace(
                "</head>", f'<script src="{stack.url}/widget.js" data-grasbot-origin="{stack.url}" defer></script></head>'
            )
            twice = await drive(
                f"{site}/twice",
                [{"do": "waitFor", "selector": ".grasbot-launcher"}, {"do": "sleep", "ms": 500}, {"do": "snapshot", "name": "twice"}],
                origins=(site, stack.url),
            )
            control = await drive(
                f"{site}/control",
                [{"do": "waitFor", "selector": ".grasbot-launcher"}, {"do": "snapshot", "name": "control"}],
                origins=(site, stack.url),
                csp_violations=True,
            )
    assert report["snapshots"]["closed"]["scripts"] == [f"{stack.url}/widget.js", f"{stack.url}/static/chat.js"]
    assert not report["snapshots"]["closed"]["panelOpen"]
    opened = report["snapshots"]["opened"]
    assert opened["panelOpen"] and opened["focused"].startswith("textarea.grasbot-input")
    assert opened["fontSizes"] == {"chat": "16px", "hint": "13.6px", "launcher": "16px"}
    # the visitor's default size, not a fixed 16px: the chat, its smaller text in scale, the launcher
    assert larger["snapshots"]["larger"]["fontSizes"] == {"chat": "24px", "hint": "20.4px", "launcher": "24px"}
    answered = report["snapshots"]["answered"]
    first, second = answered["turns"]
    assert first["status"] == second["status"] == "done"
    assert HOSTILE_REPLY in first["answer"]  # the model's markup, as text
    assert SCRIPT_TITLE in [s["text"] for s in first["sources"]]  # the note's title, as text
    assert first["cites"] == [{"text": "Potager connecté", "href": f"{site}/portfolio/potager"}]  # the site's own page
    assert history_sent(stack.ollama.requests[1])[0]["content"] == QUESTION  # a conversation across origins
    assert answered["storage"] == [f"grasbot-widget:{stack.url}/"]  # in the site's sessionStorage
    closed = report["snapshots"]["closed-again"]
    assert not closed["panelOpen"] and closed["focused"] == "button.grasbot-launcher:Une question ?"
    # its focus ring: the ink 2 to 5px out, on the card's white from 0 to 8px, a band of white on
    # each side of the ink; the ink alone was lost on a dark site (#1f2328 on #1f2328)
    assert closed["focusRing"] == {
        "outline": "3px solid rgb(31, 35, 40)",
        "offset": "2px",
        "boxShadow": "rgb(255, 255, 255) 0px 0px 0px 8px, rgba(0, 0, 0, 0.25) 0px 2px 10px 0px",
    }, closed["focusRing"]
    assert (ARTIFACTS / "widget-open.png").stat().st_size > 10_000
    assert [v["directive"] for v in control["snapshots"]["control"]["cspViolations"]] == ["style-src-attr"]
    small = narrow["snapshots"]["narrow"]
    assert small["panelOpen"] and small["turns"][0]["status"] == "done"
    assert small["clientWidth"] == 360 and small["scrollWidth"] <= small["clientWidth"], small
    assert small["focused"] == "input:"  # the answer done, the focus stays on the site's field the visitor went to
    assert small["langs"] == ["fr", "fr"]  # its French read as French on an English page, the chat and the launcher
    for name in ("closed-from-close", "closed-from-launcher"):
        closed = narrow["snapshots"][name]
        assert not closed["panelOpen"] and closed["focused"] == "button.grasbot-launcher:Une question ?", (name, closed)
    zoom = zoomed["snapshots"]["zoomed"]
    assert zoom["turns"][0]["status"] == "done" and zoom["scrollWidth"] <= zoom["clientWidth"] == 320
    # the panel takes most of the 256px (it had 160, 69 for the chat), its title on two lines
    # (it took three), and shows five lines and more of the conversation at once (it showed under three)
    panel = zoom["panel"]
    assert panel["height"] >= 190 and panel["titleLines"] <= 2, panel
    assert panel["threadShown"] >= 5 * panel["lineHeight"], panel
    refused = unlisted["snapshots"]["unlisted"]["turns"][0]
    assert refused["status"] == "error"
    assert refused["error"] == "Impossible de joindre GrasBot : vérifiez votre connexion, puis réessayez."
    # the browser names the page's origin, and the daemon, which does not list it, asks nothing:
    # CORS alone kept the answer from the page, not the question from the model (answer reuse is
    # off here, so each question the daemon asks reaches the model)
    assert len(stack.ollama.requests) == 4
    buttons = contrast["snapshots"]["forced"]["buttons"]
    assert {b["name"] for b in buttons} == {"Fermer", "Nouvelle conversation", "Envoyer", "Une question ?"}
    # a system colour, drawn: "Envoyer" and the launcher, borderless, were words floating on the page
    assert all(b["border"] == "1px solid rgb(0, 0, 0)" for b in buttons), buttons
    included = twice["snapshots"]["twice"]
    assert included["launchers"] == 1 and included["scripts"].count(f"{stack.url}/static/chat.js") == 1, included["scripts"]


async def test_a_rate_limited_widget_says_when_to_retry(tmp_path):
    """Across origins the browser hides every response header CORS does not expose: the widget
    must still read the daemon's Retry-After, not fall back to a minute."""
    pages: dict[str, str] = {}
    limits = {"GRASBOT_RATE_BURST": "1", "GRASBOT_RATE_PER_MINUTE": "30"}  # one question every 2 s
    async with owner_site(pages) as site:
        async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CORS_ORIGINS": site, **limits}) as stack:
            pages["csp"] = strict_csp(stack.url)
            pages["/"] = host_page(stack.url)
            stack.ollama.script("Le potager arrose tout seul [potager].", chunks=2)
            report = await drive(
                f"{site}/",
                [
                    {"do": "click", "selector": ".grasbot-launcher"},
                    *[{**step, "chat": PANEL} for step in ask(QUESTION, 1)],
                    *[{**step, "chat": PANEL} for step in ask(FOLLOWUP, 2)],
                    {"do": "snapshot", "name": "limited", "chat": PANEL},
                ],
                origins=(site, stack.url),
            )
    first, second = report["snapshots"]["limited"]["turns"]
    assert first["status"] == "done"
    assert second["status"] == "error"
    prefix = "Trop de questions à la suite : réessayez dans "
    assert second["error"].startswith(prefix), second["error"]
    # the daemon said at most 2 s (its bucket refills one question every 2 s), not the chat's 60
    assert 1 <= int(second["error"].removeprefix(prefix).split()[0]) <= 2, second["error"]


async def test_the_widget_keeps_its_size_whatever_the_root_font_size_of_the_site(tmp_path):
    """Many sites set `html { font-size: 62.5% }` (1rem = 10px) or a root of their own: the widget's
    text was in the visitor's default size, its boxes in the site's rem. On a 62.5% site the panel
    was 260×380, not 416×608, its paddings 62.5% of theirs, its title on three lines."""
    pages: dict[str, str] = {}
    roots = {"default": "", "62.5%": "html { font-size: 62.5% }", "20px": "html { font-size: 20px }"}
    async with owner_site(pages) as site:
        async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CORS_ORIGINS": site}) as stack:
            pages["csp"] = strict_csp(stack.url)
            sizes = {}
            for n, (name, css) in enumerate(roots.items()):
                pages[f"/{n}.css"] = css
                pages[f"/{n}"] = host_page(stack.url, head=f'<link rel="stylesheet" href="/{n}.css">')
                for font_size in (16, 24):  # the visitor's default size, 16 unless they chose another
                    sizes[name, font_size] = (await opened(f"{site}/{n}", (site, stack.url), fontSize=font_size))["sizes"]
    # on a site that leaves the root alone, the sizes the widget had before it was sized in em
    default = sizes["default", 16]
    assert default["panel"]["width"] == 416 and default["panel"]["height"] == 608, default["panel"]
    assert default["widget"] == {"right": "16px", "bottom": "16px", "gap": "8px"}
    assert default["head"]["padding"] == "8px 12px" and default["title"]["height"] == 24, default
    assert default["close"]["padding"] == "5.6px 12.8px" and default["close"]["radius"] == "9.6px"
    assert default["body"]["padding"] == "12px 12px 0px"
    assert default["launcher"]["padding"] == "10.2px 16.6px" and default["launcher"]["height"] == 46.38
    assert default["input"]["padding"] == "8.8px 12px" and default["send"]["padding"] == "7px 16.6px"
    assert default["hint"]["margin"] == "6.4px 0px 0px"  # 0.4 of 16px, under the hint's own 13.6px
    assert sizes["default", 24]["panel"]["width"] == 624  # in scale with the visitor's larger text
    for (name, font_size), drawn in sizes.items():
        assert drawn == sizes["default", font_size], (name, font_size)


async def test_a_sites_own_styles_for_its_elements_do_not_reach_the_widget(tmp_path):
    """A theme styles h2, button, label, p and body for its own pages; the widget's elements are
    the same elements. Its title took the site's serif at 2rem on one line-height, its buttons
    the site's uppercase and letter spacing, its question box's label the site's small capitals."""
    theme = (
        "* { box-sizing: content-box } body { letter-spacing: .05em; text-align: center }"
        " h2 { font: 700 2rem/1 Georgia, serif; text-transform: uppercase; color: #c00 }"
        " button { all: revert; font-size: 12px; text-transform: uppercase; letter-spacing: .1em; line-height: 1 }"
        " label { font-size: .8rem; text-transform: uppercase } p { line-height: 1.8; margin: 0 0 2rem } div { line-height: 1.2 }"
    )
    pages: dict[str, str] = {}
    async with owner_site(pages) as site:
        async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CORS_ORIGINS": site}) as stack:
            pages["csp"] = strict_csp(stack.url)
            pages["/theme.css"] = theme
            pages["/bare"] = host_page(stack.url)
            pages["/themed"] = host_page(stack.url, head='<link rel="stylesheet" href="/theme.css">')
            drawn = {}
            for name in ("bare", "themed"):
                drawn[name] = await opened(f"{site}/{name}", (site, stack.url))
    assert drawn["bare"]["sizes"]["title"]["height"] == 24  # one line of the widget's text
    assert drawn["themed"]["sizes"] == drawn["bare"]["sizes"]
    assert drawn["themed"]["text"] == drawn["bare"]["text"]
    title = drawn["bare"]["text"]["title"]
    assert title["font"].startswith("700 16px / 24px system-ui") and title["transform"] == "none", title


#: A theme that styles every element it can reach, with classes, ids, attributes, pseudo-classes
#: and !important: what a site's stylesheet (or a CSS framework's reset) does to its own pages.
HOSTILE_THEME = """
html { font-size: 62.5% }
body { font: italic 300 24px/2 Georgia, serif; color: #eee; background: #111; letter-spacing: .1em;
  word-spacing: .3em; text-align: right; text-transform: lowercase; text-indent: 2em; cursor: crosshair }
* { box-sizing: content-box !important }
body > *, body > :last-child { opacity: .4 !important; filter: blur(2px) !important; transform: scale(.5) !important }
:not(:defined) { display: none !important }
div { display: flex !important; line-height: 3 !important; padding: 7px }
.site p, body p, p { color: white !important; margin: 3em !important; font-size: 30px !important }
button { text-transform: uppercase !important; border-radius: 0 !important; letter-spacing: .3em !important;
  padding: 20px !important; background: navy; box-shadow: none !important }
button:hover, button:focus, button:focus-visible { background: red !important; color: yellow !important; outline: none !important }
#main button, [type=button], [type=submit] { width: 300px !important }
[role=list] li, ol li, ul li, li { list-style: square !important; padding: 2em !important; margin: 1em !important }
[lang], [class] { font-family: "Comic Sans MS", cursive !important }
section { position: static !important; width: 100px !important; height: auto !important }
h2 { font-size: 40px !important; color: red !important }
textarea { width: 50px !important; height: 300px !important; font-size: 8px !important }
a { color: lime !important; text-decoration: none !important }
label { display: none !important }
"""

#: The site's own elements, the same kinds as the widget's, each named for the snapshot.
SITE_ELEMENTS = (
    '<button type="button" data-site="button">S\'abonner</button><h2 data-site="h2">Projets</h2>'
    '<section data-site="section"><p data-site="p">Un projet.</p></section><label data-site="label">Nom <input></label>'
)


async def test_a_hostile_sites_stylesheet_neither_reaches_the_widget_nor_is_reached_by_it(tmp_path):
    """A site's rules with a class, an id, an attribute, a pseudo-class or !important beat the
    widget's own (`button:hover { background: red !important }`, `[lang] { font-family }`,
    `div { display: flex !important }`): on such a site the panel was unreadable. Drawn on a
    hostile site and on a bare one, after the same conversation, every part of the widget must
    look the same; and the site's own button, heading and paragraph look as they do without it."""
    pages: dict[str, str] = {}
    async with owner_site(pages) as site:
        async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CORS_ORIGINS": site, "GRASBOT_ANSWER_CACHE": "off"}) as stack:
            pages["csp"] = strict_csp(stack.url)
            pages["/hostile.css"] = HOSTILE_THEME
            pages["/bare"] = host_page(stack.url, SITE_ELEMENTS)
            pages["/hostile"] = host_page(stack.url, SITE_ELEMENTS, head='<link rel="stylesheet" href="/hostile.css">')
            pages["/without"] = host_page(stack.url, SITE_ELEMENTS, widget=False)
            drawn = {}
            for name in ("bare", "hostile"):
                stack.ollama.script_next("Le potager arrose tout seul [potager].\n\n- un script Python\n- une sonde", chunks=2)
                report = await drive(
                    f"{site}/{name}",
                    [
                        {"do": "click", "selector": ".grasbot-launcher"},  # the pointer stays on the launcher (:hover)
                        *[{**step, "chat": PANEL} for step in ask(QUESTION, 1)],
                        {"do": "liveRegions", "name": "answered"},
                        {"do": "snapshot", "name": "answered", "chat": PANEL},
                    ],
                    origins=(site, stack.url),
                )
                drawn[name] = report["snapshots"]["answered"]
                drawn[name]["liveRegions"] = report["live"]["answered"]
            without = await drive(f"{site}/without", [{"do": "snapshot", "name": "page"}], origins=(site, stack.url))
    bare, hostile = drawn["bare"], drawn["hostile"]
    assert bare["turns"][0]["status"] == hostile["turns"][0]["status"] == "done"
    parts = bare["look"]["parts"]
    assert all(parts[selector] for selector in parts), [selector for selector in parts if not parts[selector]]
    for selector, looks in parts.items():
        assert hostile["look"]["parts"][selector] == looks, selector
    assert hostile["look"]["outer"] == bare["look"]["outer"]
    assert hostile["sizes"] == bare["sizes"] and hostile["text"] == bare["text"]
    # the widget's stylesheet leaves the site's own elements as the site draws them
    assert bare["site"] == without["snapshots"]["page"]["site"] and set(bare["site"]) == {"button", "h2", "section", "p", "label"}
    assert bare["site"]["button"]["cursor"] == "default" and bare["site"]["section"]["display"] == "block"
    # the announcement of the answer and the status line are live regions of the accessibility tree
    for name in ("bare", "hostile"):
        regions = drawn[name]["liveRegions"]
        assert any(r["live"] == "polite" and r["atomic"] and "Réponse de GrasBot : Le potager arrose tout seul" in r["text"] for r in regions), regions
        assert any(r["role"] == "status" and r["text"] == "Réponse terminée." for r in regions), regions


async def test_the_widgets_keyboard_in_its_shadow_root(tmp_path):
    """Focus inside the widget is its shadow root's, not the page's (document.activeElement is the
    host there): Envoyer clicked must still hand the focus to Arrêter, and Arrêter back to the
    question box, and Tab go through the panel in its order."""
    pages: dict[str, str] = {}
    async with owner_site(pages) as site:
        async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CORS_ORIGINS": site}) as stack:
            pages["csp"] = strict_csp(stack.url)
            pages["/"] = host_page(stack.url)
            stack.ollama.script("Le potager arrose tout seul. " * 40, chunks=60, chunk_delay=0.25)  # 15 s
            report = await drive(
                f"{site}/",
                [
                    {"do": "click", "selector": ".grasbot-launcher"},
                    {"do": "focus", "name": "forward", "count": 2},
                    {"do": "click", "selector": ".grasbot-input"},
                    {"do": "focus", "name": "back", "count": 2, "shift": True},
                    {"do": "ask", "q": QUESTION, "click": True, "chat": PANEL},
                    {"do": "waitText", "text": "potager", "chat": PANEL},
                    {"do": "snapshot", "name": "streaming", "chat": PANEL},
                    {"do": "press", "key": "Enter"},  # on Arrêter
                    {"do": "wait", "states": ["stopped", "done"], "turns": 1, "chat": PANEL},
                    {"do": "snapshot", "name": "stopped", "chat": PANEL},
                ],
                origins=(site, stack.url),
            )
    assert report["focus"]["forward"] == ["button.grasbot-send:Envoyer", "button.grasbot-launcher:Une question ?"]
    assert report["focus"]["back"] == ["button.grasbot-new:Nouvelle conversation", "button.grasbot-close:Fermer"]
    streaming, stopped = report["snapshots"]["streaming"], report["snapshots"]["stopped"]
    assert streaming["state"] == "streaming" and streaming["focused"] == "button.grasbot-stop:Arrêter", streaming["focused"]
    assert stopped["turns"][0]["status"] == "stopped" and stopped["focused"].startswith("textarea.grasbot-input"), stopped["focused"]


async def test_the_widget_reads_left_to_right_on_a_right_to_left_site(tmp_path):
    """An Arabic or Hebrew site (`<html dir="rtl">`) passed its direction down to the French
    widget, which no `all` resets: « Une question ? » was drawn « ? Une question », the panel's
    header reversed (Fermer on the left), its hint's full stop at the start of the line."""
    pages: dict[str, str] = {}
    async with owner_site(pages) as site:
        async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CORS_ORIGINS": site}) as stack:
            pages["csp"] = strict_csp(stack.url)
            pages["/ltr"] = host_page(stack.url)
            pages["/rtl"] = host_page(stack.url, lang="ar").replace('<html lang="ar">', '<html lang="ar" dir="rtl">')
            drawn = {}
            for name in ("ltr", "rtl"):
                drawn[name] = await opened(f"{site}/{name}", (site, stack.url))
    assert {part[0]["direction"] for part in drawn["rtl"]["look"]["parts"].values() if part} == {"ltr"}
    assert drawn["rtl"]["look"] == drawn["ltr"]["look"]
    assert drawn["rtl"]["langs"] == ["fr", "fr"]


#: A site that navigates without loading a page (Turbo's body swap, htmx's hx-boost): #swap puts
#: a new body in place of the old, #fill the next page's markup in the same body.
NAVIGATION = """
document.addEventListener("click", (event) => {
  const link = event.target.closest("#swap, #fill");
  if (!link) return;
  event.preventDefault();
  const next = '<main><h1>Page suivante</h1><a id="swap" href="/a">a</a> <a id="fill" href="/b">b</a></main>';
  if (link.id === "swap") {
    const body = document.createElement("body");
    body.innerHTML = next;
    document.body.replaceWith(body);
  } else {
    document.body.innerHTML = next;
  }
});
"""


async def test_the_widget_stays_on_a_site_that_swaps_its_body_to_navigate(tmp_path):
    """Turbo, htmx's hx-boost or Astro's view transitions replace the body (or its markup) on each
    link followed: the widget went with the old body, and its tag, already run, did not bring it
    back; the visitor's launcher and conversation vanished at the first link."""
    pages: dict[str, str] = {}
    async with owner_site(pages) as site:
        async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CORS_ORIGINS": site}) as stack:
            pages["csp"] = strict_csp(stack.url)
            pages["/nav.js"] = NAVIGATION
            links = '<a id="swap" href="/a">a</a> <a id="fill" href="/b">b</a>'
            pages["/"] = host_page(stack.url, links, head='<script src="/nav.js" defer></script>')
            stack.ollama.script("Le potager arrose tout seul [potager].", chunks=2)
            report = await drive(
                f"{site}/",
                [
                    {"do": "click", "selector": ".grasbot-launcher"},
                    *[{**step, "chat": PANEL} for step in ask(QUESTION, 1)],
                    {"do": "click", "selector": "#swap"},
                    {"do": "waitFor", "selector": ".grasbot-launcher"},
                    {"do": "snapshot", "name": "swapped", "chat": PANEL},
                    {"do": "click", "selector": "#fill"},
                    {"do": "waitFor", "selector": ".grasbot-launcher"},
                    {"do": "snapshot", "name": "filled", "chat": PANEL},
                ],
                origins=(site, stack.url),
            )
    for name in ("swapped", "filled"):
        after = report["snapshots"][name]
        assert after["launchers"] == 1 and after["panelOpen"], name
        assert [t["status"] for t in after["turns"]] == ["done"], name  # the conversation as it was


def cdn_base_page(stack_url: str, cdn: str, origin: str) -> str:
    """A page whose <base> names a CDN's host, as some themes set it for their assets."""
    tag = f'<script src="{stack_url}/widget.js" data-grasbot-origin="{origin}" defer></script>'
    return host_page(stack_url, head=f'<base href="{cdn}/assets/">', widget=False).replace("</head>", f"{tag}</head>")


def base_csp(bot: str, cdn: str) -> str:
    """The strict policy, with the <base> the page sets allowed (its `base-uri 'none'` drops it)."""
    return strict_csp(bot).replace("base-uri 'none'", f"base-uri {cdn}")


async def test_a_relative_origin_is_read_from_the_widgets_src_not_the_pages_base(tmp_path):
    """`data-grasbot-origin="/"` (or "/grasbot") on a page whose <base> is a CDN's: the widget's
    stylesheet, chat.js and the visitors' questions went to the CDN's host, and it never mounted."""
    pages: dict[str, str] = {}
    cdn_pages: dict[str, str] = {"csp": "default-src 'none'"}
    async with owner_site(pages) as site, owner_site(cdn_pages) as cdn:
        async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CORS_ORIGINS": site}) as stack:
            pages["csp"] = base_csp(stack.url, cdn)
            pages["/"] = cdn_base_page(stack.url, cdn, "/")
            stack.ollama.script("Le potager arrose tout seul [potager].", chunks=2)
            report = await drive(
                f"{site}/",
                [
                    {"do": "click", "selector": ".grasbot-launcher"},
                    *[{**step, "chat": PANEL} for step in ask(QUESTION, 1)],
                    {"do": "snapshot", "name": "answered", "chat": PANEL},
                ],
                origins=(site, stack.url),  # none to the CDN's host
            )
    answered = report["snapshots"]["answered"]
    assert answered["scripts"] == [f"{stack.url}/widget.js", f"{stack.url}/static/chat.js"]
    assert [t["status"] for t in answered["turns"]] == ["done"]
    assert answered["storage"] == [f"grasbot-widget:{stack.url}/"]


async def test_the_sources_links_lead_to_the_sites_pages_whatever_host_its_base_names(tmp_path):
    """A source's `/portfolio/potager` on a page whose <base> is a CDN's host led visitors to the
    CDN (a 404 there); a <base> on the site's own host still reads a path-relative link."""
    pages: dict[str, str] = {}
    cdn_pages: dict[str, str] = {"csp": "default-src 'none'"}
    async with owner_site(pages) as site, owner_site(cdn_pages) as cdn:
        map_env = {"GRASBOT_URL_MAP": "projet=/portfolio/{slug},competence=competences/{slug}"}
        async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CORS_ORIGINS": site, **map_env}) as stack:
            pages["csp"] = base_csp(stack.url, f"{cdn} {site}")
            pages["/"] = cdn_base_page(stack.url, cdn, stack.url)
            pages["/blog/post"] = host_page(stack.url, head='<base href="/fr/">')
            stack.ollama.script("Le potager arrose tout seul en Python [potager] [python].", chunks=2)
            steps = [
                {"do": "click", "selector": ".grasbot-launcher"},
                *[{**step, "chat": PANEL} for step in ask(QUESTION, 1)],
                {"do": "snapshot", "name": "answered", "chat": PANEL},
            ]
            foreign = await drive(f"{site}/", steps, origins=(site, stack.url))
            own = await drive(f"{site}/blog/post", steps, origins=(site, stack.url))
    turn = foreign["snapshots"]["answered"]["turns"][0]
    assert turn["cites"][0] == {"text": "Potager connecté", "href": f"{site}/portfolio/potager"}
    hrefs = {s["text"]: s["href"] for s in turn["sources"]}
    assert hrefs["Potager connecté"] == f"{site}/portfolio/potager"
    assert hrefs["Python"] == f"{site}/competences/python"  # against the page itself
    mine = {s["text"]: s["href"] for s in own["snapshots"]["answered"]["turns"][0]["sources"]}
    assert mine["Python"] == f"{site}/fr/competences/python"  # the site's own <base>, as its links


#: A site's own script that takes the widget off its page, as deploy/README.md says.
DESTROY = """
document.addEventListener("click", (event) => {
  if (!event.target.closest("#off")) return;
  window.GrasBotWidget.destroy();
  document.getElementById("off").textContent = typeof window.GrasBotWidget;
});
"""


async def test_a_site_takes_the_widget_off_its_page_with_destroy(tmp_path):
    """The widget is put back in the body whenever it leaves it (for sites that swap their body), so
    `GrasBotWidget.remove()` no longer took it off: a site had no way to."""
    pages: dict[str, str] = {}
    async with owner_site(pages) as site:
        async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CORS_ORIGINS": site}) as stack:
            pages["csp"] = strict_csp(stack.url)
            pages["/nav.js"] = NAVIGATION
            pages["/off.js"] = DESTROY
            scripts = '<script src="/nav.js" defer></script><script src="/off.js" defer></script>'
            pages["/"] = host_page(stack.url, '<button id="off">off</button> <a id="swap" href="/a">a</a>', head=scripts)
            report = await drive(
                f"{site}/",
                [
                    {"do": "click", "selector": ".grasbot-launcher"},
                    {"do": "click", "selector": "#off"},
                    {"do": "waitFor", "selector": "grasbot-widget", "state": "detached"},
                    {"do": "snapshot", "name": "off"},
                    {"do": "click", "selector": "#swap"},  # a body swap after it: not brought back
                    {"do": "waitFor", "selector": "h1"},
                    {"do": "sleep", "ms": 300},
                    {"do": "snapshot", "name": "swapped"},
                ],
                origins=(site, stack.url),
            )
    for name in ("off", "swapped"):
        assert report["snapshots"][name]["launchers"] == 0, name
    # the global gone with it: the tag, run again, would mount a new one
    assert [b["name"] for b in report["snapshots"]["off"]["buttons"]] == ["undefined"]


async def test_an_element_with_the_widgets_name_as_its_id_does_not_stop_it(tmp_path):
    """A browser names every element with an id as a global: a site's `<div id="GrasBotWidget">`
    was `window.GrasBotWidget`, which the widget read as itself mounted already, and the page had
    no widget. Only the widget's own element counts: it mounts, once though the tag is there twice."""
    pages: dict[str, str] = {}
    async with owner_site(pages) as site:
        async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CORS_ORIGINS": site}) as stack:
            pages["csp"] = strict_csp(stack.url)
            named = '<div id="GrasBotWidget">un bloc du site</div> <a id="GrasBotChat" href="/contact">contact</a>'
            pages["/"] = host_page(stack.url, named)
            tag = f'<script src="{stack.url}/widget.js" data-grasbot-origin="{stack.url}" defer></script>'
            pages["/twice"] = host_page(stack.url, named).replace("</main>", f"</main>{tag}")
            steps = [{"do": "waitFor", "selector": ".grasbot-launcher"}, {"do": "sleep", "ms": 300}, {"do": "snapshot", "name": "page"}]
            seen = {path: await drive(f"{site}{path}", steps, origins=(site, stack.url)) for path in ("/", "/twice")}
    for path, report in seen.items():
        assert report["snapshots"]["page"]["launchers"] == 1, path


async def test_a_malformed_origin_is_said_in_the_widgets_corner(tmp_path):
    """`data-grasbot-origin` without its scheme (« grasbot.example », read as a path under
    widget.js), unparsable (« http://[bad », which threw) or with a port and no scheme (read as
    the scheme « bot.example.org: »): the owner saw an empty corner, the reason in the console
    alone. An origin that names no GrasBot says where chat.js could not be loaded from."""
    pages: dict[str, str] = {}
    origins = {"/no-scheme": "grasbot.example", "/bad": "http://[bad", "/port": "bot.example.org:8080"}
    async with owner_site(pages) as site:
        async with grasbot_behind_nginx(tmp_path, {"GRASBOT_CORS_ORIGINS": site}) as stack:
            pages["csp"] = strict_csp(stack.url)
            tag = '<script src="{bot}/widget.js" data-grasbot-origin="{origin}" defer></script>'
            for path, origin in {**origins, "/elsewhere": f"{stack.url}/nothing"}.items():
                page = tag.format(bot=stack.url, origin=origin)
                pages[path] = host_page(stack.url, widget=False).replace("</head>", f"{page}</head>")
            steps = [{"do": "waitFor", "selector": ".grasbot-widget > .grasbot-error"}, {"do": "snapshot", "name": "page"}]
            seen = {path: await drive(f"{site}{path}", steps, origins=(site, stack.url)) for path in pages if path != "csp"}
    for path, origin in origins.items():
        snap = seen[path]["snapshots"]["page"]
        assert snap["launchers"] == 0, path
        assert snap["widgetErrors"] == [
            {
                "text": f"GrasBot ne peut pas s'afficher : data-grasbot-origin=\"{origin}\" n'est pas une adresse de "
                "GrasBot. Écrivez son adresse complète (https://…) ou un chemin qui commence par /.",
                "role": "alert",
                "visible": True,
                "position": "fixed",  # styled as the widget, in its corner: chat.css beside widget.js
            }
        ], path
        assert snap["scripts"] == [f"{stack.url}/widget.js"], path  # nothing loaded from the value
    [elsewhere] = seen["/elsewhere"]["snapshots"]["page"]["widgetErrors"]
    assert elsewhere["text"] == (
        f"GrasBot ne peut pas s'afficher : son script n'a pas pu être chargé depuis {stack.url}/nothing/static/chat.js (vérifiez data-grasbot-origin)."
    )
    assert elsewhere["visible"] and elsewhere["role"] == "alert"
