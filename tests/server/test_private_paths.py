"""A private note's name, where a public note holds it in a way earlier tests did not try: a
path that straddles two passage windows of a long paragraph, a path typed with two spaces
and without `.md`; and a note another tool's frontmatter hides (`private: true`, Hexo's
`hidden: true`, Digital Garden's `dg-publish: false`) under `--default-visibility public`;
a public note's frontmatter field whose value is a private note's path or wikilink; the
address a private note's own `slug:`, `url:`, `permalink:` or `dg-permalink:` publishes it
at, and still once the note went or changed it (a reload, a restart); a Hugo heading's own
id that names one. What a visitor receives (search, answer, /ask, its stream, the prompt the
stand-in Ollama records) never holds the private note's name."""

from __future__ import annotations

import json
import unicodedata

import pytest

from grasbot.retrieval.sections import WINDOW, cut_note
from support.bots import OWNER, OWNER_TOKEN, rpc_result, sse_events, write_note

SECRET = ("rachat", "acme", "zorglub")


def leaks(value) -> list[str]:
    text = (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)).lower()
    return [word for word in SECRET if word in text]


async def visitor_sees(client, standin_ollama, q: str) -> list[tuple[str, object]]:
    """Everything a visitor gets for `q`, with where it came from."""
    got: list[tuple[str, object]] = []
    for method in ("search", "answer"):
        resp = await client.post("/rpc", json={"jsonrpc": "2.0", "method": method, "id": 1, "params": {"q": q}})
        got.append((method, await resp.json()))
    got.append(("/ask", await (await client.get("/ask", params={"q": q})).text()))
    got += [(f"stream {name}", data) async for name, data in sse_events(await client.get("/ask/stream", params={"q": q}))]
    for body in standin_ollama.requests:
        got += [(f"prompt {m['role']}", m["content"].removesuffix(f"Question : {q}")) for m in body["messages"]]
    return got


async def typed_beside(start_daemon, standin_ollama, tmp_path, typed: str, *private: str, fields: str = "", **settings):
    """A public note that types `typed` in a sentence, beside the private notes at the paths
    `private` (each titled by its file name, with the frontmatter `fields`): the daemon
    started (with `settings`), what a visitor gets for a question on the public note, and the
    prompt the model received."""
    vault = tmp_path / "vault"
    for path in private:
        write_note(vault, path, f"title: {path.rsplit('/', 1)[-1].removesuffix('.md')}\nvisibility: private\n{fields}", "Le prix du rachat d'Acme.\n")
    body = f"Les abeilles butinent la lavande, voir {typed} pour le reste.\n"
    write_note(vault, "jardin/rucher.md", "title: Le rucher\nslug: rucher\nvisibility: public", body)
    standin_ollama.script("Les abeilles [rucher].")
    client = await start_daemon(vault, standin_ollama.url, rate_per_minute=100_000, rate_burst=100_000, **settings)
    got = await visitor_sees(client, standin_ollama, "Que butinent les abeilles ?")
    return client, got, standin_ollama.requests[0]["messages"][-1]["content"]


#: A private note that its site publishes at /labo/zorglub/, an address no path of the vault's says.
PLAN_AT_LABO = "title: Le plan\nvisibility: private\npermalink: /labo/zorglub/"


async def field_beside(start_daemon, standin_ollama, tmp_path, field: str, private: str, private_fields: str) -> list[tuple[str, object]]:
    """A public note with the frontmatter `field`, beside a private note at `private` (with
    `private_fields`) about Acme's purchase at the same garden: what a visitor gets for a
    question on the public note (`visitor_sees`), the public note checked to reach the model."""
    vault = tmp_path / "vault"
    write_note(vault, private, private_fields, "Le rachat d'Acme, au rucher du jardin partagé.\n")
    write_note(vault, "jardin/rucher.md", f"title: Le rucher\nvisibility: public\n{field}", "Les abeilles du jardin partagé butinent la lavande.\n")
    standin_ollama.script("Le jardin.")
    client = await start_daemon(vault, standin_ollama.url, url_map="*=/{hugo}/", rate_per_minute=100_000, rate_burst=100_000)
    got = await visitor_sees(client, standin_ollama, "Que butinent les abeilles du rucher du jardin partagé ?")
    assert "Les abeilles du jardin partagé" in standin_ollama.requests[0]["messages"][-1]["content"]  # the guard
    return got


WORDS = "les abeilles butinent la lavande du jardin partagé "


def straddling(path: str) -> str:
    """A long public note whose first paragraph, longer than a passage window, types `path` so
    that the window's cut falls at the space inside it (`sections._split_plain` cuts at a space)."""
    first, second = path.rsplit(" ", 1)
    head = (WORDS * 40)[: WINDOW - 60]
    head = head[: head.rfind(" ") + 1]
    head += "y" * (WINDOW - 4 - len(head) - len(first)) + " "
    paragraph = f"{head}{first} {second},suite {WORDS * 20}"
    return "# Le rucher\n\n" + paragraph + "\n\n" + "\n\n".join(f"## Saison {i}\n\n{WORDS * 12}" for i in range(20)) + "\n"


async def test_a_private_path_that_straddles_two_passage_windows_is_masked_in_both(start_daemon, standin_ollama, tmp_path):
    """`prive/Rachat Acme.md` typed in a paragraph longer than a window, the cut at its space:
    the first passage ends with « prive/Rachat », the second starts with « Acme.md »; neither
    half may reach a visitor, in the passages of search and answer or in the prompt."""
    vault = tmp_path / "vault"
    write_note(vault, "prive/Rachat Acme.md", "title: Rachat\nvisibility: private", "Le prix du rachat d'Acme.\n")
    body = straddling("prive/Rachat Acme.md")
    write_note(vault, "jardin/rucher.md", "title: Le rucher\nslug: rucher\nvisibility: public", body)
    cuts = cut_note(body)[1]
    assert body[cuts[0][0] : cuts[0][1]].endswith(" prive/Rachat") and body[cuts[1][0] : cuts[1][1]].startswith("Acme.md,")  # the guard
    standin_ollama.script("Les abeilles [rucher].")
    client = await start_daemon(vault, standin_ollama.url, rate_per_minute=100_000, rate_burst=100_000)
    q = "Que butinent les abeilles du jardin partagé ?"
    got = await visitor_sees(client, standin_ollama, q)
    prompt = standin_ollama.requests[0]["messages"][-1]["content"]
    assert "### [rucher] Le rucher\nles abeilles butinent" in prompt  # the guard: the paragraph was sent
    assert [(where, leaks(value)) for where, value in got if leaks(value)] == []


@pytest.mark.parametrize("typed", ["prive/Rachat  Acme", "prive/Rachat  Acme.md", "prive/Rachat \u00a0Acme"])
async def test_a_private_path_typed_with_two_spaces_and_without_md_is_masked(start_daemon, standin_ollama, tmp_path, typed):
    """`prive/Rachat  Acme` (two spaces, no `.md`), as a page shows `prive/Rachat Acme`, typed in
    a public note: masked in the sources, the passages, the prompt, and no search by its words
    finds the note."""
    client, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "prive/Rachat Acme.md")
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []
    for q in ("rachat acme", "Acme"):
        found = await rpc_result(client, "search", {"q": q})
        assert found["results"] == [], found


@pytest.mark.parametrize("form", ["NFC", "NFD"])
async def test_a_private_path_typed_with_its_accents_apart_is_masked(start_daemon, standin_ollama, tmp_path, form):
    """`prive/Rachat Acmé.md` typed in a public note as a Mac's Finder or terminal copies it
    (NFD: « e » then its accent) beside the note its author saved as one character (NFC): the
    two forms are one name to a reader, and neither reaches a visitor."""
    typed = unicodedata.normalize(form, "prive/Rachat Acmé.md")
    client, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, unicodedata.normalize("NFC", "prive/Rachat Acmé.md"))
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []
    found = await rpc_result(client, "search", {"q": "rachat acme"})
    assert found["results"] == [], found


@pytest.mark.parametrize("typed", ["prive/Rachat  Acme", "prive/Rachat \u00a0Acme"])
async def test_a_path_typed_with_two_spaces_is_masked_whole_beside_a_private_note_named_as_its_start(start_daemon, standin_ollama, tmp_path, typed):
    """`prive/Rachat  Acme` when `prive/Rachat.md` is private too: the written text's reading
    masked « prive/Rachat » first, and the rendered reading no longer saw the longer path, so
    « Acme » reached visitors."""
    _, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "prive/Rachat Acme.md", "prive/Rachat.md")
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []


@pytest.mark.parametrize("field", ["private: true", "Private: oui", "hidden: true", "hidden: peut-être", "dg-publish: false", "DG-Publish: non"])
async def test_a_note_another_tool_hides_never_reaches_a_visitor_by_default_public(start_daemon, standin_ollama, tmp_path, field):
    """With `--default-visibility public`, a note whose frontmatter hides it from the tools
    that publish it (`private: true`, Hexo's `hidden: true`, Digital Garden's `dg-publish:
    false`) was served: its words found it, its text reached the prompt."""
    vault = tmp_path / "vault"
    write_note(vault, "notes/Zorglub.md", f"title: Le projet Zorglub\n{field}", "Le rachat d'Acme par Zorglub, au jardin partagé.\n")
    write_note(vault, "notes/rucher.md", "title: Le rucher\nslug: rucher", "Les abeilles du jardin partagé butinent la lavande.\n")
    standin_ollama.script("Le jardin [rucher].")
    client = await start_daemon(vault, standin_ollama.url, default_visibility="public", rate_per_minute=100_000, rate_burst=100_000)
    got = await visitor_sees(client, standin_ollama, "Que butinent les abeilles du jardin partagé ?")
    assert "Les abeilles du jardin partagé" in standin_ollama.requests[0]["messages"][-1]["content"]  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []
    assert (await rpc_result(client, "search", {"q": "Zorglub rachat Acme"}))["results"] == []


@pytest.mark.parametrize(
    "field",
    [
        'slug: "[[prive/Zorglub]]"',
        "slug: prive/Zorglub.md",
        "slug: prive/zorglub",
        "slug: '{{< ref \"Zorglub\" >}}'",  # Hugo's link to a page by its file name
        "slug: '{% post_url 2024-05-01-zorglub %}'",  # Jekyll's, to a post by its file name
        "slug: '{%- link zorglub -%}'",
        'url: "[[Zorglub]]"',
        "url: /prive/Zorglub.md",
        "permalink: /prive/Zorglub/",
        'related: "[[Zorglub]]"',
        "related: prive/Zorglub.md",
        "linked: [prive/Zorglub.md]",
        "source: prive/Zorglub.md",
        'voir: "[[prive/Zorglub]]"',
        # its page address, with the `/` a pretty URL ends with: the source's url held « zorglub »
        "url: /prive/Zorglub/",
        "url: https://monsite.fr/prive/zorglub/",
        "url: /prive/zorglub/#plan",
    ],
)
async def test_a_public_notes_field_that_points_at_a_private_note_gives_a_visitor_nothing_of_it(start_daemon, standin_ollama, tmp_path, field):
    """A public note's frontmatter field whose value is a private note's path, wikilink or page
    address: the sources (slug, title, url, reasons), passages, prompt and the notes walked by
    its links hold nothing of the private note, and the source's url is the note's own page."""
    got = await field_beside(start_daemon, standin_ollama, tmp_path, field, "prive/Zorglub.md", "title: Le projet Zorglub\nvisibility: private")
    assert [(where, value) for where, value in got if leaks(value)] == []
    search = dict(got)["search"]
    assert search["result"]["results"][0]["url"] == "/jardin/rucher/", search


@pytest.mark.parametrize(
    ("private", "typed"),
    [
        ("prive/Zorglub.md", "https://monsite.fr/prive/Zorglub/"),
        ("prive/Zorglub.md", "/prive/Zorglub/"),
        ("prive/Zorglub.md", "(https://monsite.fr/prive/zorglub/#le-plan)"),
        ("prive/Zorglub.md", "/prive/zorglub/."),
        ("prive/Rachat Acme.md", "https://monsite.fr/prive/rachat-acme/"),
        ("prive/Rachat Acme.md", "/prive/rachat-acme"),
        ("Mes notes/Rachat Acme.md", "/mes-notes/rachat-acme/"),
    ],
)
async def test_a_private_notes_page_address_typed_in_a_public_note_is_masked(start_daemon, standin_ollama, tmp_path, private, typed):
    """A private note's page as a static site publishes it, typed in a public note's body: with
    the `/` after it that pretty URLs end with (`/prive/Zorglub/`), and as a site slugs it
    (`prive/rachat-acme/`, lower case, spaces as hyphens). « Zorglub » reached visitors."""
    _, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, private)
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []


@pytest.mark.parametrize("typed", ["https://monsite.fr/zorglub/", "/zorglub/", "le zorglub/ et", "prive/zorglub/annexe"])
async def test_a_name_without_its_folder_or_inside_a_folder_path_is_not_masked(start_daemon, standin_ollama, tmp_path, typed):
    """What is not a private note's page stays as written: its name without the folder (an
    ordinary word, as today), or a folder of that name with another page in it."""
    _, _, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "prive/Zorglub.md")
    assert f"voir {typed} pour le reste" in prompt


@pytest.mark.parametrize(
    ("fields", "typed"),
    [
        ("slug: projets-secrets/zorglub-outil", "https://monsite.fr/projets-secrets/zorglub-outil/"),
        ("slug: projets-secrets/zorglub-outil", "projets-secrets/zorglub-outil"),
        ("slug: zorglub-outil", "/prive/zorglub-outil/"),  # Hugo: the slug names the page in the note's folder
        ("slug: Zorglub -- Outil", "https://monsite.fr/prive/zorglub-outil/"),  # as Hugo writes the slug
        ("url: /labo/zorglub/", "/labo/zorglub/"),
        ("url: /labo/zorglub/", "(https://monsite.fr/labo/zorglub/#le-plan)"),
        ("url: /Labo/Zorglub Secret/", "/labo/zorglub-secret/"),
        ("permalink: /labo/zorglub/", "labo/zorglub"),
        ("permalink: /labo/zorglub.html", "https://monsite.fr/labo/zorglub.html"),
        ("permalink: /labo/zorglub/?ref=https://monsite.fr/", "/labo/zorglub/"),  # a `://` in its query: still this site's page
        ("url: /labo/zorglub/#voir-https://monsite.fr", "https://monsite.fr/labo/zorglub/"),
        ("dg-permalink: labo/zorglub", "https://monsite.fr/labo/zorglub/"),  # the Digital Garden plugin's own permalink
        ("dg-permalink: /labo/zorglub/", "labo/zorglub"),
        ("permalink: /ailleurs/autre/\ndg-permalink: labo/zorglub", "/labo/zorglub/"),  # one for each site
        ("aliases: [Le plan, /labo/ancien-zorglub/]", "https://monsite.fr/labo/ancien-zorglub/"),  # Hugo's: an old address that redirects
    ],
)
async def test_a_private_notes_own_address_typed_in_a_public_note_is_masked(start_daemon, standin_ollama, tmp_path, fields, typed):
    """A private note's `slug:`, `url:` or `permalink:`, the address its site publishes it at
    and no path of the vault's, typed in a public note's body: the masking knew the note's
    path alone, so « zorglub » reached visitors, and a search by it found the public note."""
    client, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "prive/Plan.md", fields=fields)
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []
    assert (await rpc_result(client, "search", {"q": "zorglub"}))["results"] == []


@pytest.mark.parametrize(
    ("front", "typed"),
    [
        ('+++\ntitle = "Le plan"\nurl = "/labo/zorglub/"\n+++\n', "/labo/zorglub/"),
        ('+++\ndraft = true\nslug = "zorglub-outil"\n+++\n', "https://monsite.fr/prive/zorglub-outil/"),
        ('{"draft": true, "url": "/labo/zorglub/"}\n', "(https://monsite.fr/labo/zorglub/#le-plan)"),
        ("#+title: Le plan\n#+url: /labo/zorglub/\n", "labo/zorglub"),
    ],
)
async def test_a_private_notes_address_in_its_hugo_front_matter_typed_in_a_public_note_is_masked(start_daemon, standin_ollama, tmp_path, front, typed):
    """A private note's Hugo front matter (TOML between `+++`, JSON, Org `#+` lines) whose
    `url` or `slug` gives the address its site publishes it at, typed in a public note's body:
    the masking read those fields in YAML properties only, so « zorglub » reached visitors,
    and a search by it found the public note."""
    (tmp_path / "vault" / "prive").mkdir(parents=True)
    (tmp_path / "vault" / "prive" / "Plan.md").write_text(f"{front}Le prix du rachat d'Acme.\n", encoding="utf-8")
    client, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed)
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []
    assert (await rpc_result(client, "search", {"q": "zorglub"}))["results"] == []


@pytest.mark.parametrize(
    ("private", "fields", "typed"),
    [
        # the default GRASBOT_URL_MAP: projet=/portfolio/{slug}, competence=/competences/{slug}
        ("prive/Plan.md", "type: projet\nslug: zorglub-outil", "/portfolio/zorglub-outil"),
        ("prive/Plan.md", "type: projet\nslug: zorglub-outil", "https://monsite.fr/portfolio/zorglub-outil/"),
        ("prive/Plan.md", "type: Projet\nslug: Zorglub Outil", "(https://monsite.fr/portfolio/zorglub-outil#budget)"),
        ("prive/Zorglub Secret.md", "type: compétence", "/competences/zorglub-secret"),
    ],
)
async def test_a_private_notes_page_by_the_url_map_typed_in_a_public_note_is_masked(start_daemon, standin_ollama, tmp_path, private, fields, typed):
    """The page GRASBOT_URL_MAP gives a private note (`/portfolio/{slug}` for a `type:
    projet`), the address the site published it at, typed in a public note's body (a project
    page linked before the project was made private): the masking knew the pages its path and
    front matter give, not the map's, so « zorglub » reached visitors, and a search by it found
    the public note."""
    client, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, private, fields=fields)
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []
    assert (await rpc_result(client, "search", {"q": "zorglub"}))["results"] == []


@pytest.mark.parametrize(
    "field",
    [
        "url: https://monsite.fr/labo/zorglub/",
        "slug: labo/zorglub",  # Hugo's page for it is /jardin/labo/zorglub/, not the private note's
        "related: labo/zorglub",
        "source: https://monsite.fr/labo/zorglub/",
        "aliases: [labo/zorglub]",
    ],
)
async def test_a_public_notes_field_that_holds_a_private_notes_own_address_gives_a_visitor_nothing_of_it(start_daemon, standin_ollama, tmp_path, field):
    """A public note's field whose value is the address a private note's `permalink:` gives it:
    the sources, passages and prompt hold nothing of it, and the source's url is the note's own page."""
    got = await field_beside(start_daemon, standin_ollama, tmp_path, field, "prive/Plan.md", PLAN_AT_LABO)
    assert [(where, value) for where, value in got if leaks(value)] == []
    search = dict(got)["search"]
    assert search["result"]["results"][0]["url"] == "/jardin/rucher/", search


@pytest.mark.parametrize(
    ("field", "url"),
    [
        ("url: /labo/zorglub/", "/labo/zorglub/"),
        ("permalink: /labo/zorglub/", "/jardin/rucher/"),  # Hugo does not read it
    ],
)
async def test_a_public_note_published_at_a_private_notes_own_address_keeps_its_url(start_daemon, standin_ollama, tmp_path, field, url):
    """A public note whose own `url:` or `permalink:` is the address a private note's
    `permalink:` gives it too (a private draft that keeps its public copy's address): the page is
    the public note's, which visitors are given as its url, and what they get is what they got
    without the private note. Masked as the private note's, the public note's url became its
    path's, a page the site does not have; the private note's text reaches no visitor."""
    got = await field_beside(start_daemon, standin_ollama, tmp_path, field, "prive/Plan.md", PLAN_AT_LABO)
    assert [(where, value) for where, value in got if {"rachat", "acme"} & set(leaks(value))] == []
    search = dict(got)["search"]
    assert search["result"]["results"][0]["url"] == url, search


@pytest.mark.parametrize(
    ("fields", "typed"),
    [
        ("permalink: /labo/zorglub/", "/zorglub/"),  # its name without its folder: a word
        ("permalink: /labo/zorglub/", "labo/zorglub/annexe"),  # a folder of that name, another page in it
        ("permalink: /labo/zorglub/", "labo/zorglub-bis"),
        ("slug: zorglub-outil", "https://monsite.fr/zorglub-outil/"),  # a slug alone: no folder
        ("permalink: /zorglub/", "https://monsite.fr/zorglub/"),  # an address without a folder: a word
        ("url: https://zorglub.example/", "https://zorglub.example/"),  # another site's, where no page of this one is
        ("url: https://lemonde.fr/labo/zorglub/", "https://lemonde.fr/labo/zorglub/"),  # a bookmark: an article a public note cites too
        ("url: //lemonde.fr/labo/zorglub/", "https://lemonde.fr/labo/zorglub/"),  # the same without its scheme, as a page's links write it
        ("url: www.lemonde.fr/labo/zorglub/", "www.lemonde.fr/labo/zorglub/"),
    ],
)
async def test_a_private_notes_own_address_without_its_folder_is_not_masked(start_daemon, standin_ollama, tmp_path, fields, typed):
    """What is not a private note's own address stays as written, as a path's name alone does."""
    _, _, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "prive/Plan.md", fields=fields)
    assert f"voir {typed} pour le reste" in prompt


@pytest.mark.parametrize(
    ("private", "typed"),
    [
        ("prive/Zorglub été.md", "/prive/zorglub-ete/"),  # Hugo's removePathAccents
        ("prive/Zorglub été.md", "https://monsite.fr/prive/zorglub-ete/"),
        ("Été/Zorglub.md", "/ete/zorglub/"),
        ("prive/L'offre (v2) Zorglub.md", "/prive/l-offre-v2-zorglub/"),  # Jekyll's `:slug`: each run of what is no letter or digit a hyphen
        ("prive/Zorglub -- Outil.md", "/prive/zorglub-outil/"),  # Hugo's run of spaces and hyphens
    ],
)
async def test_a_private_notes_page_as_a_site_strips_accents_or_hyphens_it_is_masked(start_daemon, standin_ollama, tmp_path, private, typed):
    """A private note's page as a site writes it with other rules than the path's: accents
    stripped (`été` → `ete`), each run of what is no letter or digit one hyphen."""
    _, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, private)
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []


@pytest.mark.parametrize("typed", ["zorglub-ete", "Zorglub ete", "/zorglub-ete/", "prive/zorglub-etendu"])
async def test_a_private_names_unaccented_form_without_its_folder_is_not_masked(start_daemon, standin_ollama, tmp_path, typed):
    """The accent-stripped name of a private note without its folder, or that goes on, is words."""
    _, _, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "prive/Zorglub été.md")
    assert f"voir {typed} pour le reste" in prompt


@pytest.mark.parametrize("edit", ["deleted", "permalink changed"])
async def test_a_private_notes_old_address_stays_masked_after_a_reload_and_a_restart(start_daemon, standin_ollama, tmp_path, edit):
    """A private note's own address typed in a public note, then the note deleted or given
    another `permalink:` while the daemon runs: its old path stayed masked, its old address
    reached visitors after the reload, and after a restart with or without the index cache."""
    vault = tmp_path / "vault"
    write_note(vault, "prive/Plan.md", "title: Le plan\nvisibility: private\npermalink: /labo/zorglub/", "Le prix du rachat d'Acme.\n")
    write_note(
        vault,
        "jardin/rucher.md",
        "title: Le rucher\nvisibility: public",
        "Les abeilles butinent la lavande, voir https://monsite.fr/labo/zorglub/ pour le reste.\n",
    )
    standin_ollama.script("Les abeilles [rucher].")
    cached = {"index_cache": True, "cache_dir": str(tmp_path / "cache"), "rate_per_minute": 100_000, "rate_burst": 100_000}
    client = await start_daemon(vault, standin_ollama.url, owner_token=OWNER_TOKEN, **cached)
    if edit == "deleted":
        (vault / "prive/Plan.md").unlink()
    else:
        write_note(vault, "prive/Plan.md", "title: Le plan\nvisibility: private\npermalink: /labo/autre/", "Le prix du rachat d'Acme.\n")
    await rpc_result(client, "reload", {}, headers=OWNER)
    for restarted in (None, cached, {**cached, "index_cache": False}):
        if restarted is not None:
            client = await start_daemon(vault, standin_ollama.url, **restarted)
        standin_ollama.requests.clear()
        got = await visitor_sees(client, standin_ollama, "Que butinent les abeilles ?")
        assert "Les abeilles butinent la lavande, voir" in standin_ollama.requests[0]["messages"][-1]["content"]  # the guard
        assert [(where, value) for where, value in got if leaks(value)] == []
        assert (await rpc_result(client, "search", {"q": "zorglub"}))["results"] == []


@pytest.mark.parametrize(
    ("attribute", "written"),
    [
        ('{id="prive/Zorglub.md"}', "prive/Zorglub.md"),
        ("{id='prive/Zorglub'}", "prive/Zorglub"),
        ("{id=prive/Zorglub.md}", "prive/Zorglub.md"),
        ('{#rucher id="/labo/zorglub/"}', "/labo/zorglub/"),  # the last id wins; the private note's own page
    ],
)
async def test_a_hugo_headings_own_id_that_names_a_private_note_gives_a_visitor_no_anchor(start_daemon, standin_ollama, tmp_path, attribute, written):
    """A public note's heading whose Hugo attribute list gives it a private note's path or page
    as its id (`## Les chèvres {id="prive/Zorglub.md"}`): the passage's anchor and url held it
    as written (`/jardin/rucher/#prive/Zorglub.md`), where its text and the prompt mask it. The
    visitor's passage links the page itself; the owner's keeps the id the site gives it."""
    vault = tmp_path / "vault"
    write_note(vault, "prive/Zorglub.md", "title: Le plan\nvisibility: private\npermalink: /labo/zorglub/", "Le prix du rachat d'Acme.\n")
    sections = "\n\n".join(f"## Saison {i}\n\n{WORDS * 12}" for i in range(20))
    body = f"# Le rucher\n\n{sections}\n\n## Les chèvres broutent le foin {attribute}\n\nLes chèvres broutent le foin du pré en hiver.\n"
    write_note(vault, "jardin/rucher.md", "title: Le rucher\nslug: rucher\nvisibility: public", body)
    standin_ollama.script("Les chèvres [rucher].")
    served = {"owner_token": OWNER_TOKEN, "anchors": "hugo", "url_map": "*=/{hugo}/", "rate_per_minute": 100_000, "rate_burst": 100_000}
    client = await start_daemon(vault, standin_ollama.url, **served)
    q = "Que broutent les chèvres en hiver ?"
    got = await visitor_sees(client, standin_ollama, q)
    assert "Les chèvres broutent le foin du pré en hiver." in standin_ollama.requests[0]["messages"][-1]["content"]  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []

    def goats(found: dict) -> list[tuple[str | None, str | None]]:
        return [(p["anchor"], p["url"]) for s in found["results"] for p in s["passages"] if p["heading"] and p["heading"][-1].startswith("Les chèvres")]

    assert goats(await rpc_result(client, "search", {"q": q})) == [(None, "/jardin/rucher/")]
    assert goats(await rpc_result(client, "search", {"q": q, "audience": "owner"}, headers=OWNER)) == [(written, f"/jardin/rucher/#{written}")]


@pytest.mark.parametrize(
    "typed",
    [
        '{{< ref "rachat-acme" >}}',
        '{{< relref "rachat-acme#prix" >}}',
        "{{% ref `rachat-acme.md` %}}",
        '{{< ref path="rachat-acme" lang="fr" >}}',
        "{{<ref rachat-acme>}}",
        '[le lien]({{< ref "rachat-acme" >}})',
        '`{{< ref "rachat-acme" >}}`',  # Hugo renders a shortcode in code too
        # over several lines, as Hugo reads a shortcode's parameters
        '{{< ref "rachat-acme"\n>}}',
        '{{<\n  ref\n  lang="fr"\n  path="rachat-acme"\n>}}',
        '[le lien]({{< ref "rachat-acme"\n>}})',
    ],
)
async def test_a_hugo_ref_to_a_private_note_by_its_name_gives_a_visitor_nothing_of_it(start_daemon, standin_ollama, tmp_path, typed):
    """Hugo's `ref` and `relref` shortcodes link to a page by its file name alone, as a wikilink
    does: the site renders them as the private note's address. « rachat-acme » reached visitors."""
    _, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "prive/rachat-acme.md")
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []


async def test_a_hugo_ref_to_a_public_note_keeps_its_name(start_daemon, standin_ollama, tmp_path):
    """A `ref` to a note the visitor may read shows its name, as a wikilink to it does."""
    write_note(tmp_path / "vault", "jardin/ruches.md", "title: Les ruches\nvisibility: public", "Les ruches du rucher.\n")
    _, _, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, '{{< ref "ruches" >}}', "prive/rachat-acme.md")
    assert "voir ruches pour le reste" in prompt


@pytest.mark.parametrize(
    "typed",
    [
        "{% post_url 2024-05-01-rachat-acme %}",
        "{%- post_url 2024-05-01-rachat-acme -%}",
        "[le lien]({% post_url 2024-05-01-rachat-acme %})",
        "`{% post_url 2024-05-01-rachat-acme %}`",  # Jekyll renders a tag in code too
        "{% link _posts/2024-05-01-rachat-acme.md %}",
        "{% post_url\n  2024-05-01-rachat-acme\n%}",  # over several lines, as Liquid reads a tag
    ],
)
async def test_a_jekyll_post_url_to_a_private_note_gives_a_visitor_nothing_of_it(start_daemon, standin_ollama, tmp_path, typed):
    """Jekyll's `post_url` tag links to a post by its file name alone, as Hugo's `ref` does: the
    site renders it as the private post's address. « rachat-acme » reached visitors."""
    _, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "_posts/2024-05-01-rachat-acme.md")
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []


@pytest.mark.parametrize(
    "typed",
    [
        'ici.\n\n```dataviewjs\ndv.paragraph(dv.page("rachat-acme").prix)\n```\n\nEt',
        "`$= dv.page('rachat-acme').prix`",
        "``$= dv.fileLink(`rachat-acme#prix`)``",
        'ici.\n\n```dataviewjs\ndv.span(dv.sectionLink("rachat-acme", "Prix"))\n```\n\nEt',
        '`= link("rachat-acme", "le plan")`',
        'ici.\n\n```dataview\nTABLE prix FROM "jardin" WHERE file.link = link("rachat-acme")\n```\n\nEt',
        'dv.page("rachat-acme")',  # as prose too: the site may render it
    ],
)
async def test_a_dataview_call_to_a_private_note_by_its_name_gives_a_visitor_nothing_of_it(start_daemon, standin_ollama, tmp_path, typed):
    """Dataview's `dv.page`, `dv.fileLink`, `dv.sectionLink` and `link` name a note as a wikilink
    does, by its file name alone: « rachat-acme » reached visitors from a public note's query."""
    _, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "prive/rachat-acme.md")
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []


async def test_a_dataview_call_to_a_public_note_stays_as_written(start_daemon, standin_ollama, tmp_path):
    """A query on a note the visitor may read is kept whole, code as its author wrote it."""
    write_note(tmp_path / "vault", "jardin/ruches.md", "title: Les ruches\nvisibility: public", "Les ruches du rucher.\n")
    typed = '`$= dv.page("ruches").nombre`, `$= dv.page("rachat-acme").prix`'
    _, _, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "prive/rachat-acme.md")
    assert 'voir `$= dv.page("ruches").nombre`, `$= dv.page("").prix` pour le reste' in prompt


@pytest.mark.parametrize(
    "typed",
    [
        'ici.\n\n```dataview\nLIST WHERE file.name = "rachat-acme"\n```\n\nEt',
        'ici.\n\n```dataview\nTABLE prix FROM "jardin" WHERE file.name != "rachat-acme"\n```\n\nEt',
        'ici.\n\n```dataview\nLIST FROM "jardin" or "rachat-acme"\n```\n\nEt',
        'ici.\n\n```dataview\nlist from #prix and ("rachat-acme" or -"jardin")\n```\n\nEt',
        "`$= dv.pages().where(p => p.file.name === 'rachat-acme').length`",
        "`$= dv.pages('\"rachat-acme\"').length`",
        'ici.\n\n```dataviewjs\ndv.table(["prix"], dv.pages("\\"rachat-acme\\" or #prix").map(p => [p.prix]))\n```\n\nEt',
    ],
)
async def test_a_dataview_query_naming_a_private_note_by_a_string_gives_a_visitor_nothing_of_it(start_daemon, standin_ollama, tmp_path, typed):
    """Dataview reads a query's source (`FROM "rachat-acme"`, `dv.pages('"rachat-acme"')`) and a
    file's name compared (`WHERE file.name = "rachat-acme"`) as the note itself: its name reached
    visitors from a public note's query, where `link("rachat-acme")` is masked."""
    _, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "prive/rachat-acme.md")
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []


async def test_a_dataview_query_naming_a_public_note_or_folder_stays_as_written(start_daemon, standin_ollama, tmp_path):
    """A query's strings that name what the visitor may read are code as its author wrote it."""
    typed = """``$= dv.pages('"jardin"').where(p => p.file.name == "rucher" || p.file.name == "rachat-acme")``"""
    _, _, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "prive/rachat-acme.md")
    assert """dv.pages('"jardin"').where(p => p.file.name == "rucher" || p.file.name == "")""" in prompt


@pytest.mark.parametrize(
    ("typed", "private"),
    [
        ("{{ '/prive/rachat-acme/' | url }}", "prive/rachat-acme.md"),
        ('[le plan]({{ "/prive/rachat-acme/" | url }})', "prive/rachat-acme.md"),
        ("{{ '/rachat-acme/' | url }}", "rachat-acme.md"),
        ("{{ 'rachat-acme' | url }}", "rachat-acme.md"),
        ("{{\n  'rachat-acme'\n  | url\n}}", "rachat-acme.md"),  # over several lines, as Nunjucks and Liquid read it
        ("{% link 'prive/Rachat Acme.md' %}", "prive/Rachat Acme.md"),
        ('{% link "Rachat Acme.md" %}', "prive/Rachat Acme.md"),
        ("{% link prive/Rachat Acme.md %}", "prive/Rachat Acme.md"),
        ("`{{- 'rachat-acme/index.html' | url | safe -}}`", "rachat-acme.md"),
    ],
)
async def test_an_eleventy_url_or_a_quoted_jekyll_link_to_a_private_note_gives_a_visitor_nothing_of_it(start_daemon, standin_ollama, tmp_path, typed, private):
    """Eleventy's `url` filter names a private note's page as the site publishes it, a note at
    the vault's root by its name alone: « rachat-acme » reached visitors. (Jekyll's `link` takes
    a path with its `.md`, masked as typed whatever its quotes and blanks.)"""
    _, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, private)
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []


async def test_an_eleventy_url_to_a_public_note_shows_its_name_and_one_to_a_file_stays(start_daemon, standin_ollama, tmp_path):
    """A `url` to a page the visitor may read shows its name, as a wikilink to it does; one to a
    file of the site (a style sheet, an image) names no note and stays as written."""
    write_note(tmp_path / "vault", "jardin/ruches.md", "title: Les ruches\nvisibility: public", "Les ruches du rucher.\n")
    typed = "{{ '/jardin/ruches/' | url }} et `{{ '/css/site.css' | url }}`"
    _, _, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "prive/rachat-acme.md")
    assert "voir ruches et `{{ '/css/site.css' | url }}` pour le reste" in prompt


@pytest.mark.parametrize(
    "typed",
    [
        '`$= dv.page("rachat-acme").prix`',
        '`= link("rachat-acme")`',
        'ici.\n\n```dataview\nLIST WHERE file.name = "rachat-acme"\n```\n\nEt',
        "{{< ref rachat-acme >}}",
        "{{ '/rachat-acme/' | url }}",
    ],
)
async def test_a_public_note_is_not_found_by_the_private_name_its_site_or_dataview_link_holds(start_daemon, standin_ollama, tmp_path, typed):
    """What a visitor reads of a public note no longer holds the private name; neither may the
    words search finds it by: « rachat acme » found the public note through it."""
    client, _, _ = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "prive/rachat-acme.md")
    found = await rpc_result(client, "search", {"q": "rachat acme"})
    assert found["results"] == []


#: A folder of private notes, one in a folder of its own: its name, « rachat-acme », is theirs.
PRIVATE_FOLDER = ("rachat-acme/offre.md", "rachat-acme/zorglub/contrat.md")


@pytest.mark.parametrize(
    "typed",
    [
        'ici.\n\n```dataview\nLIST FROM "rachat-acme"\n```\n\nEt',
        'ici.\n\n```dataview\nTABLE prix FROM "rachat-acme/zorglub"\n```\n\nEt',
        'ici.\n\n```dataview\nLIST FROM "jardin" or "rachat-acme/"\n```\n\nEt',
        'ici.\n\n```dataview\nLIST WHERE file.folder = "rachat-acme"\n```\n\nEt',
        "`$= dv.pages('\"rachat-acme\"').length`",
        "`$= dv.pages().where(p => p.file.folder === 'rachat-acme/zorglub').length`",
    ],
)
async def test_a_dataview_query_naming_a_folder_of_private_notes_gives_a_visitor_nothing_of_it(start_daemon, standin_ollama, tmp_path, typed):
    """Dataview reads a folder as a source (`FROM "rachat-acme"`, `dv.pages('"rachat-acme"')`) or
    compares a note's (`file.folder = "rachat-acme"`): a folder whose every note is private
    kept its name, which a path typed with one of its notes masks, in what visitors read."""
    _, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, *PRIVATE_FOLDER)
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []


async def test_a_dataview_query_naming_an_excluded_folder_gives_a_visitor_nothing_of_it(start_daemon, standin_ollama, tmp_path):
    """A folder --exclude leaves out is masked as a folder of private notes is."""
    for path in PRIVATE_FOLDER:
        write_note(tmp_path / "vault", path.replace("offre", "note"), "title: Note", "Le prix du rachat d'Acme.\n")
    typed = 'ici.\n\n```dataview\nLIST FROM "rachat-acme/zorglub" or "rachat-acme"\n```\n\nEt'
    _, got, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, exclude="rachat-acme")
    assert "Les abeilles butinent la lavande, voir" in prompt  # the guard
    assert [(where, value) for where, value in got if leaks(value)] == []


async def test_a_dataview_query_naming_a_folder_that_holds_a_public_note_stays_as_written(start_daemon, standin_ollama, tmp_path):
    """A folder that holds a note the visitor may read (`jardin`, beside a private note of its
    own) is the visitor's to read of; one that holds none is masked, its parent's name kept."""
    typed = """``$= dv.pages('"jardin" or "prive/rachat-acme" or "prive"').where(p => p.file.folder != "jardin/potager")``"""
    _, _, prompt = await typed_beside(start_daemon, standin_ollama, tmp_path, typed, "jardin/potager/zorglub.md", "prive/rachat-acme/offre.md", "prive/note.md")
    assert """dv.pages('"jardin" or "" or ""').where(p => p.file.folder != "")""" in prompt


async def test_a_dataview_folder_whose_last_public_note_went_is_masked_after_a_reload_and_a_restart(start_daemon, standin_ollama, tmp_path):
    """`FROM "rachat-acme"` names a folder that held a public note beside a private one: the
    public note deleted, no hidden path came or went, yet the folder's name is now the private
    note's alone; a reload, and a start from the index cache, mask it."""
    vault = tmp_path / "vault"
    write_note(vault, "rachat-acme/offre.md", "title: Offre\nvisibility: private", "Le prix du rachat d'Acme.\n")
    write_note(vault, "rachat-acme/annonce.md", "title: Annonce\nvisibility: public", "Une annonce.\n")
    body = 'Les abeilles butinent la lavande, voir ici.\n\n```dataview\nLIST FROM "rachat-acme"\n```\n\nEt pour le reste.\n'
    write_note(vault, "jardin/rucher.md", "title: Le rucher\nslug: rucher\nvisibility: public", body)
    standin_ollama.script("Les abeilles [rucher].")
    cached = {"index_cache": True, "cache_dir": str(tmp_path / "cache"), "rate_per_minute": 100_000, "rate_burst": 100_000}
    client = await start_daemon(vault, standin_ollama.url, owner_token=OWNER_TOKEN, **cached)
    await visitor_sees(client, standin_ollama, "Que butinent les abeilles ?")
    assert 'LIST FROM "rachat-acme"' in standin_ollama.requests[0]["messages"][-1]["content"]  # the guard: a public note's folder
    (vault / "rachat-acme/annonce.md").unlink()
    await rpc_result(client, "reload", {}, headers=OWNER)
    for restarted in (None, cached):
        if restarted is not None:
            client = await start_daemon(vault, standin_ollama.url, **restarted)
        standin_ollama.requests.clear()
        got = await visitor_sees(client, standin_ollama, "Que butinent les abeilles ?")
        assert 'LIST FROM ""' in standin_ollama.requests[0]["messages"][-1]["content"]
        assert [(where, value) for where, value in got if leaks(value)] == []
        assert (await rpc_result(client, "search", {"q": "rachat acme"}))["results"] == []
