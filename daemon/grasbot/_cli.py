"""The `grasbot` command: search, ask, check, eval, and serve (the daemon)."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import itertools
import json
import math
import os
import sys
import urllib.parse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._argparse_fr import FrenchParser
from ._config import ANCHOR_FORMS, Settings
from ._engine import GrasBot, vault_wide_warnings
from ._exceptions import ConfigError, GrasbotError
from ._terminal import counted, printable
from .answer.fallback import extractive_answer
from .retrieval.boilerplate import MIN_SHARE
from .retrieval.vault import walk_markdown
from .store.questionlog import add_log_parser, cmd_log

if TYPE_CHECKING:  # `grasbot eval`'s own module, imported by it alone: `grasbot serve` waits for no line of it
    from ._evaluate import Case


def _number(text: str) -> float:
    """A flag's number of seconds, score or temperature: float() also takes nan and inf, which
    no setting can use (Settings refuses them too, naming the variable rather than the flag)."""
    try:
        number = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"pas un nombre : {text!r}") from None
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"pas un nombre fini : {text!r}")
    return number


def _given(text: str) -> str:
    """A flag's value that names something: empty, `--host ""` bound every interface and
    `--vault ""` read the current folder (an empty variable is read as unset instead)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("ne doit pas être vide (omettez l'option pour la valeur par défaut)")
    return text


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache-dir",
        dest="cache_dir",
        type=_given,
        metavar="DOSSIER",
        help="le cache de l'index (GRASBOT_CACHE_DIR ; par défaut ~/.cache/grasbot/<empreinte du chemin du coffre>)",
    )
    parser.add_argument(
        "--no-cache", dest="index_cache", action="store_const", const=False, help="ne lit ni n'écrit le cache de l'index (GRASBOT_INDEX_CACHE=off)"
    )
    parser.add_argument(
        "--vault", dest="vault_dir", type=_given, metavar="DOSSIER", help="le dossier du coffre (VAULT_DIR ; par défaut : le coffre fourni, vault-grasbot/)"
    )
    parser.add_argument("--exclude", metavar="DOSSIER,DOSSIER", help="les dossiers du coffre à laisser de côté (GRASBOT_EXCLUDE)")
    parser.add_argument(
        "--default-visibility",
        choices=("private", "public"),
        help="la visibilité d'une note sans champ `visibility` (GRASBOT_DEFAULT_VISIBILITY ; par défaut private)",
    )
    parser.add_argument(
        "--time-zone",
        type=_given,
        metavar="FUSEAU",
        help="où lire une heure sans décalage des dates de publication et d'expiration (GRASBOT_TIME_ZONE ; par défaut UTC, comme Hugo ; local, Europe/Paris…)",
    )
    parser.add_argument("--top-k", dest="search_top_k", type=int, metavar="N", help="les sources à renvoyer (SEARCH_TOP_K ; par défaut 5)")
    parser.add_argument(
        "--min-score", dest="search_min_score", type=_number, metavar="X", help="le score qui fonde une réponse sur les notes (SEARCH_MIN_SCORE ; par défaut 3)"
    )
    parser.add_argument("--model", dest="llm_model", type=_given, metavar="MODÈLE", help="le modèle Ollama (LLM_MODEL ; par défaut qwen3:8b)")
    parser.add_argument("--ollama-host", dest="ollama_host", type=_given, metavar="URL", help="l'adresse d'Ollama (OLLAMA_HOST)")
    parser.add_argument("--llm-timeout", dest="llm_timeout", type=_number, metavar="SECONDES", help="LLM_TIMEOUT (par défaut 60)")
    parser.add_argument(
        "--llm-max-tokens", dest="llm_max_tokens", type=int, metavar="N", help="les tokens qu'une réponse peut compter (LLM_MAX_TOKENS ; par défaut 400)"
    )
    parser.add_argument(
        "--llm-context",
        dest="llm_context",
        type=int,
        metavar="TOKENS",
        help="les tokens que le modèle lit et écrit par réponse (LLM_CONTEXT ; par défaut 8192)",
    )
    parser.add_argument(
        "--llm-deadline",
        dest="llm_deadline",
        type=_number,
        metavar="SECONDES",
        help="les secondes accordées à une réponse entière (LLM_DEADLINE ; par défaut 90)",
    )
    parser.add_argument("--temperature", dest="llm_temperature", type=_number, metavar="TEMPÉRATURE", help="LLM_TEMPERATURE (par défaut 0.4)")
    parser.add_argument("--keep-alive", dest="llm_keep_alive", type=_given, metavar="DURÉE", help="LLM_KEEP_ALIVE (par défaut 30m)")
    parser.add_argument(
        "--semantic", choices=("off", "bundled", "ollama"), help="le sens à côté des mots (GRASBOT_SEMANTIC ; par défaut bundled ; off : les mots seuls)"
    )
    parser.add_argument(
        "--embed-model",
        dest="embed_model",
        type=_given,
        metavar="NOM",
        help="le modèle Ollama qui calcule le sens, avec --semantic ollama (GRASBOT_EMBED_MODEL ; par défaut bge-m3)",
    )
    parser.add_argument("--prompt-budget", dest="prompt_budget", type=int, metavar="CARACTÈRES", help="GRASBOT_PROMPT_BUDGET (par défaut 12000)")
    parser.add_argument(
        "--anchors",
        choices=ANCHOR_FORMS,
        help="GRASBOT_ANCHORS : l'ancre d'un titre de section comme le site la fait, "
        "github (Jekyll), quartz, hugo, mkdocs, text (Obsidian Publish), slug (par défaut), none",
    )
    parser.add_argument(
        "--url-map",
        dest="url_map",
        metavar="TYPE=/CHEMIN/{slug},…",
        help="GRASBOT_URL_MAP : l'adresse d'une source selon son type (* : tout autre type) ; "
        "champs {slug} {path} {name} {quartz} {publish} {hugo} {mkdocs} {mkdocs_html}",
    )
    parser.add_argument(
        "--site-pages",
        dest="site_pages",
        metavar="/PAGE,…",
        help="GRASBOT_SITE_PAGES : les pages du site vers lesquelles un visiteur est envoyé quand les notes ne savent pas "
        "(par défaut /portfolio,/competences,/contact ; off : aucune)",
    )
    parser.add_argument("--json", action="store_true", help="écrit du JSON au lieu de texte")


#: What `grasbot --help` says GrasBot is.
DESCRIPTION = "Répond aux visiteurs d'un site à partir d'un coffre Obsidian de notes en français."


def build_parser() -> argparse.ArgumentParser:
    parser = FrenchParser(prog="grasbot", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="commande", required=True)  # its name is said when it is missing

    p = sub.add_parser("search", help="classe les notes pour une question, avec les raisons de chaque score")
    p.add_argument("question")
    p.add_argument("--audience", choices=("visitor", "owner"), default="owner", help="owner (par défaut) voit aussi les notes privées")
    _common(p)

    p = sub.add_parser("ask", help="répond à une question comme le démon répond à un visiteur")
    p.add_argument("question")
    p.add_argument("--audience", choices=("visitor", "owner"), default="visitor", help="visitor (par défaut) ne voit que les notes publiques")
    _common(p)

    p = sub.add_parser("check", help="la santé du coffre : notes cassées, slugs en double, liens vers aucune note, questions qui manquent leur note")
    _common(p)

    p = sub.add_parser(
        "eval", help="hit@1, hit@5 et MRR@10 sur un fichier de questions, à côté d'un BM25 simple ; le rappel du contexte quand il donne des phrases"
    )
    p.add_argument(
        "--questions",
        required=True,
        nargs="+",
        action="extend",  # --questions a.tsv --questions b.tsv: both, not the last
        metavar="FICHIER.tsv",
        help="des lignes question<TAB>chemin;chemin[<TAB>question précédente || …[<TAB>phrase]] (plusieurs fichiers : leurs questions ensemble ; "
        "une note peut être nommée par le nom de son fichier ou par son slug au lieu de son chemin) ; "
        "avec des phrases, --ollama-host doit être un Ollama de substitution (eval/context_recall.py)",
    )
    p.add_argument(
        "--audience",
        choices=("visitor", "owner"),
        default="visitor",
        help="le public dont l'index classe (par défaut visitor : les questions sont celles de visiteurs)",
    )
    p.add_argument(
        "--off-topic",
        dest="off_topic",
        metavar="FICHIER.txt",
        help="une question par ligne, à laquelle aucune note ne répond : la part d'entre elles fondée sur les notes, à côté de celle des --questions",
    )
    p.add_argument(
        "--new-subject",
        dest="new_subject",
        action="store_true",
        help="pose aussi chaque question sans historique après la plus proche des précédentes qui porte sur d'autres notes : "
        "les chiffres de GrasBot alors, à côté de ses chiffres sur elles seules ; avec --off-topic, chaque question hors sujet après l'une d'elles",
    )
    _common(p)

    p = sub.add_parser("serve", help="lance le démon (JSON-RPC et les points d'accès HTTP du site)")
    p.add_argument("--host", type=_given, metavar="ADRESSE", help="l'adresse d'écoute (GRASBOT_HOST ; par défaut 127.0.0.1)")
    p.add_argument("--port", type=int, help="le port (GRASBOT_PORT ; par défaut 8765 ; 0 en prend un libre)")
    p.add_argument(
        "--token",
        type=_given,
        metavar="JETON",
        help="le jeton du propriétaire (GRASBOT_TOKEN ; par défaut : lu dans --token-file, ou créé) ; ps le montre aux autres utilisateurs",
    )
    p.add_argument("--token-file", dest="token_file", type=_given, metavar="FICHIER", help="GRASBOT_TOKEN_FILE (par défaut ~/.config/grasbot/token)")
    p.add_argument("--cors-origins", dest="cors_origins", metavar="ORIGINE,ORIGINE", help="GRASBOT_CORS_ORIGINS (par défaut app://obsidian.md)")
    p.add_argument("--trusted-proxies", dest="trusted_proxies", metavar="IP,IP", help="GRASBOT_TRUSTED_PROXIES (par défaut 127.0.0.0/8,::1)")
    p.add_argument(
        "--allowed-hosts",
        dest="allowed_hosts",
        metavar="NOM,NOM",
        help="GRASBOT_ALLOWED_HOSTS : les noms par lesquels un navigateur peut joindre le port du démon, outre localhost et les adresses IP (par défaut aucun)",
    )
    p.add_argument(
        "--header-timeout",
        dest="header_timeout",
        type=_number,
        metavar="SECONDES",
        help="les secondes dont un client dispose pour envoyer ses en-têtes (GRASBOT_HEADER_TIMEOUT ; par défaut 10)",
    )
    p.add_argument(
        "--body-timeout",
        dest="body_timeout",
        type=_number,
        metavar="SECONDES",
        help="les secondes dont un client dispose pour envoyer un corps (GRASBOT_BODY_TIMEOUT ; par défaut 10)",
    )
    p.add_argument("--llm-slots", dest="llm_slots", type=int, metavar="N", help="les générations à la fois par hôte du modèle (LLM_SLOTS ; par défaut 2)")
    p.add_argument("--llm-queue", dest="llm_queue", type=int, metavar="N", help="les questions qui peuvent attendre une place (LLM_QUEUE ; par défaut 32)")
    p.add_argument(
        "--llm-max-wait",
        dest="llm_max_wait",
        type=_number,
        metavar="SECONDES",
        help="la plus longue attente d'une place ; au-delà, l'extrait des notes tout de suite, marqué occupé (LLM_MAX_WAIT ; par défaut 20)",
    )
    p.add_argument(
        "--answer-cache", dest="answer_cache", metavar="N|off", help="les réponses finies gardées pour resservir (GRASBOT_ANSWER_CACHE ; par défaut 256 ; off)"
    )
    p.add_argument("--peers", metavar="URL,URL", help="les autres démons du même coffre, qu'un rechargement atteint aussi (GRASBOT_PEERS)")
    p.add_argument(
        "--question-log",
        dest="question_log",
        type=_given,
        metavar="FICHIER",
        help="le journal des questions des visiteurs (GRASBOT_QUESTION_LOG ; off le coupe)",
    )
    p.add_argument(
        "--log-retention-days",
        dest="log_retention_days",
        type=int,
        metavar="N",
        help="les jours pendant lesquels les questions sont gardées (GRASBOT_LOG_RETENTION_DAYS ; par défaut 90)",
    )
    _common(p)
    add_log_parser(sub)
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    names = (
        "vault_dir",
        "exclude",
        "default_visibility",
        "time_zone",
        "search_top_k",
        "search_min_score",
        "llm_model",
        "ollama_host",
        "llm_timeout",
        "llm_max_tokens",
        "llm_context",
        "llm_deadline",
        "llm_temperature",
        "llm_keep_alive",
        "prompt_budget",
        "semantic",
        "embed_model",
        "anchors",
        "url_map",
        "site_pages",
        "host",
        "port",
        "token",
        "token_file",
        "cors_origins",
        "trusted_proxies",
        "allowed_hosts",
        "header_timeout",
        "body_timeout",
        "llm_slots",
        "llm_queue",
        "llm_max_wait",
        "answer_cache",
        "peers",
        "question_log",
        "log_retention_days",
        "cache_dir",
        "index_cache",
    )
    return Settings.load(**{n: getattr(args, n, None) for n in names})


def _print_sources(sources: list[dict]) -> None:
    for rank, s in enumerate(sources, 1):
        print(f"{rank}. [{s['slug']}] {s['title']}  score {s['score']:.2f}  ({s['path']})")
        for r in s["reasons"]:
            print(f"     +{r['points']:.2f} {r['signal']} : {r['detail']}")
        for p in s["passages"]:
            where = " › ".join(p["heading"]) or ("la note entière" if len(s["passages"]) == 1 else "le début de la note")
            print(f"     § {where}, {p['chars']} caractères envoyés{'  ' + p['url'] if p['url'] else ''}")


def cmd_search(bot: GrasBot, args) -> int:
    found = bot.search(args.question, audience=args.audience)
    result = found.to_dict()
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    state = "réponse fondée sur les notes" if result["grounded"] else "réponse non fondée sur les notes"
    print(f"{len(result['results'])} notes, {state}, coffre de {result['vault_size']} notes, {result['took_ms']:.1f} ms")
    if found.query.read:  # stems, as the index holds them
        print("lu avec les mots du coffre : " + ", ".join(f"{w} → {t}" for w, t in found.query.read.items()))
    _print_sources(result["results"])
    return 0


def cmd_ask(bot: GrasBot, args) -> int:
    async def run() -> dict:
        try:
            return await bot.answer(args.question, audience=args.audience)
        finally:
            await bot.aclose()

    payload = asyncio.run(run())
    if args.json:
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    print(payload["response"])
    print()
    print("fondée sur les notes :", "oui" if payload["grounded"] else "non", f"— modèle : {payload['model'] or 'aucun'}")
    if "llm_error" in payload:
        print(f"(sans le modèle de langue : {payload['llm_error']} ; la réponse ci-dessus est faite d'extraits des notes)")
    _print_sources(payload["sources"])
    return 0


def vault_problems(bot: GrasBot) -> dict:
    """Everything `grasbot check` reports, as data."""
    snapshot = bot.snapshot
    index = snapshot.index("owner")
    misses = []
    for path, note in sorted(index.notes.items()):
        audience = "visitor" if note.public else "owner"
        for question in note.answers:
            result = bot.search(question, audience=audience, top_k=10, snapshot=snapshot)
            ranked = [s.path for s in result.sources]
            if not ranked or ranked[0] != path:
                misses.append(
                    {
                        "path": path,
                        "question": question,
                        "rank": ranked.index(path) + 1 if path in ranked else None,
                        "first": result.sources[0].slug if result.sources else None,
                    }
                )
    vault = snapshot.vault
    visitor = snapshot.index("visitor")
    shared = visitor.boilerplate.texts(visitor.notes.values())
    nobody = [{"path": ".", "message": said} for said in vault_wide_warnings(vault, len(visitor))]
    links_out: list[str] = []
    for _ in walk_markdown(vault.root, vault.options, skipped=links_out):
        pass
    return {
        "notes": len(vault.notes),
        "public": len(visitor),
        "errors": [e.to_dict() for e in vault.errors],
        "warnings": nobody + [w.to_dict() for w in vault.warnings],
        "misses": misses,
        "links_left_out": links_out,
        "boilerplate": [{"line": line, "notes": count} for line, count in sorted(shared.items(), key=lambda item: (-item[1], item[0]))],
    }


def cmd_check(bot: GrasBot, args) -> int:
    report = vault_problems(bot)
    failed = bool(report["errors"] or report["warnings"] or report["misses"])
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return int(failed)
    print(f"{counted(report['notes'], 'note', 'chargée')}, {counted(report['public'], 'publique')}")
    for title, items in (("Notes qui n'ont pas pu être chargées", report["errors"]), ("Avertissements", report["warnings"])):
        if items:
            print(f"\n{title} ({len(items)}) :")
            for item in items:  # a file's name may hold a newline, which would forge a line
                print(f"  {printable(item['path'])} : {printable(item['message'])}")
    if report["misses"]:
        print(f"\nQuestions de `answers` qui n'amènent pas leur propre note en premier ({len(report['misses'])}) :")
        for m in report["misses"]:
            where = f"rang {m['rank']}" if m["rank"] else "absente des 10 premières"
            print(f"  {printable(m['path'])} : « {printable(m['question'])} » → {where}, en premier : {m['first']}")
    if report["links_left_out"]:  # not a problem either: a vault's notes are the vault's own
        print(f"\nLiens symboliques laissés de côté, qui mènent hors du coffre ou dans un dossier caché ou exclu ({len(report['links_left_out'])}) :")
        for rel in report["links_left_out"]:
            print(f"  {printable(rel)}")
    if report["boilerplate"]:  # not a problem: what search reads past, said so
        shown = report["boilerplate"]
        print(f"\nLignes que la recherche ne lit pas, présentes mot pour mot dans {MIN_SHARE * 100:.0f} % des notes publiques ou plus ({len(shown)}) :")
        for item in shown:
            line = item["line"] if len(item["line"]) <= 100 else item["line"][:99] + "…"
            print(f"  {item['notes']} notes : « {line} »")
    print("\nOK" if not failed else "\nProblèmes trouvés.")
    return int(failed)


def prompts_received(bot: GrasBot, cases: Sequence[Case]) -> list[str]:
    """Each case's question answered as a visitor, with its history, through the LLM at the
    configured Ollama host, and the prompt that server received, read back from its record:
    the host must be a stand-in Ollama (`tests/support/standin_ollama.py`, which
    `eval/context_recall.py` starts). A question answered again from the answer cache was
    sent no prompt: it is the one of its first asking."""
    import httpx

    host = (bot.settings.ollama_hosts[0] or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434").rstrip("/")

    async def run() -> list[str]:
        texts = []
        asked: dict[tuple[str, tuple[str, ...]], str] = {}
        try:
            async with httpx.AsyncClient(timeout=30.0) as http:
                for case in cases:
                    payload = await bot.answer(case.question, audience="visitor", history=case.turns)
                    if "llm_error" in payload:
                        raise ConfigError(f"rappel du contexte : le modèle de langue de {host} n'a pas répondu ({payload['llm_error']})")
                    if payload.get("reused") and (case.question, case.history) in asked:
                        texts.append(asked[case.question, case.history])
                        continue
                    got = await http.get(f"{host}/standin/requests")
                    if got.status_code != 200:
                        raise ConfigError(
                            f"rappel du contexte : {host} ne garde pas les prompts qu'il a reçus (lancez l'Ollama de substitution : eval/context_recall.py)"
                        )
                    messages = got.json()["requests"][-1]["messages"]
                    texts.append("\n\n".join(m["content"] for m in messages))
                    asked[case.question, case.history] = texts[-1]
        except httpx.HTTPError as exc:
            raise ConfigError(f"rappel du contexte : impossible de lire {host}/standin/requests ({exc})") from None
        finally:
            await bot.aclose()
        return texts

    return asyncio.run(run())


#: The engines `grasbot eval` compares, as its text names them (its JSON keeps their keys).
ENGINES = {"GrasBot": "GrasBot", "lexical": "mots seuls", "plain BM25": "BM25 simple"}


def cmd_eval(bot: GrasBot, args) -> int:
    """GrasBot, lexical and with meaning, beside the plain BM25 it has to beat, on the same
    questions and the same notes."""
    from ._evaluate import PlainBM25, Report, after_another_subject, evaluate, named_notes, paired, read_cases, read_off_topic

    index = bot.snapshot.index(args.audience)
    files = []
    for path in args.questions:  # a note named by its file's name or slug is read as its path, and said
        read, readings = named_notes(read_cases(path), index.notes)
        for case, written, notes in readings:
            said = f"lu comme {notes[0]}" if len(notes) == 1 else f"nomme {len(notes)} notes ({', '.join(notes)}) : écrivez son chemin"
            print(f"grasbot eval: {path}:{case.line}: {written} {said}", file=sys.stderr)
        files.append((path, read))
    cases = [case for _, read in files for case in read]
    off_topic = read_off_topic(args.off_topic) if args.off_topic else None
    if not any(case.expected & index.notes.keys() for case in cases):  # another vault's file: every question a miss, figures of 0
        reader = "le visiteur" if args.audience == "visitor" else "le propriétaire"
        hint = (
            ""
            if args.audience == "owner" or bot.settings.default_visibility == "public"
            else " (ou ses notes sans champ visibility, privées : --default-visibility public)"
        )
        raise ConfigError(
            f"eval : aucune des notes qu'attendent les questions de {', '.join(args.questions)} n'est une note que {reader} lit dans "
            f"{bot.settings.vault_dir} : --vault est-il le coffre de ces questions{hint} ?"
        )
    for path, read in files:  # a typo, a renamed note or a private one: counted, but not silently
        for case in read:
            for absent in sorted(case.expected - index.notes.keys()):
                reader = "le visiteur" if args.audience == "visitor" else "le propriétaire"
                said = f"{path}:{case.line}: {absent} n'est pas une note que {reader} lit"
                print(f"grasbot eval: {said} : une question à laquelle elle seule répond compte comme manquée", file=sys.stderr)

    grounded: dict[bool, list[bool]] = {False: [], True: []}  # lexical or not -> each case's grounded

    def ranker(lexical: bool):
        def rank(case):
            result = bot.search(case.question, top_k=10, audience=args.audience, history=case.turns, lexical=lexical)
            grounded[lexical].append(result.grounded)  # the best score decides it, whatever top_k
            return [s.path for s in result.sources]

        return rank

    prompts = fallback = None
    if any(c.phrase for c in cases):  # the file says where each answer is: did it reach the LLM?
        prompts = prompts_received(bot, cases)
        visible = bot.snapshot.index("visitor")

        def fallback(case: Case) -> tuple[str, list[str]]:  # a follow-up with its history, as a visitor asks it
            result = bot.search(case.question, audience="visitor", history=case.turns)
            answer = extractive_answer(case.question, result.context, visible, grounded=result.grounded, history=case.turns, pages=bot.settings.site_pages)
            return answer, [p.text for p in result.context]

    report = evaluate(cases, ranker(lexical=False), prompts, fallback)
    plain = PlainBM25(index.notes, index.readable_body)
    reports = {"GrasBot": report}
    if bot.snapshot.semantic:
        reports["lexical"] = evaluate(cases, ranker(lexical=True))
    reports["plain BM25"] = evaluate(cases, lambda c: plain.rank(c.one_text))
    engines = {name: r.figures() for name, r in reports.items()}
    against = {name: paired(report, r) for name, r in reports.items() if name != "GrasBot"}
    for engine, lexical in (("GrasBot", False), ("lexical", True)):  # does it say it knows? (plain BM25 has no threshold)
        if engine not in engines:
            continue
        engines[engine]["grounded"] = round(sum(grounded[lexical]) / len(cases), 4)
        if off_topic is not None:
            wrong = [bot.search(q, audience=args.audience, lexical=lexical).grounded for q in off_topic]
            engines[engine]["off_topic_grounded"] = round(sum(wrong) / len(wrong), 4)
    data = {**report.to_dict(), "semantic": bool(bot.snapshot.semantic), "engines": engines, "paired": against}
    if off_topic is not None:
        data["off_topic"] = len(off_topic)
    pairs = after_another_subject(cases) if args.new_subject else []  # does a conversation about something else pull the answer away?
    if args.new_subject and not pairs:
        print("grasbot: --new-subject : aucune question n'en a une plus ancienne sur d'autres notes après laquelle la poser", file=sys.stderr)
    if pairs:
        outcome = {id(o.case): o for o in report.outcomes}
        alone = Report(tuple(outcome[id(case)] for case, _ in pairs))
        after = evaluate([changed for _, changed in pairs], ranker(lexical=False))
        data["new_subject"] = {"questions": len(pairs), **after.figures(), "alone": alone.figures()}
        subjects = [case.question for case, _ in pairs]
        if off_topic is not None and subjects:  # a question no note answers, after one they do
            after_one = zip(off_topic, itertools.cycle(subjects))  # each after the next subject, round and round
            wrong = [bot.search(q, audience=args.audience, history=[{"role": "user", "content": subject}]).grounded for q, subject in after_one]
            data["new_subject"]["off_topic_grounded"] = round(sum(wrong) / len(wrong), 4)
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return 0
    for name, figures in engines.items():
        said = f"  fondées sur les notes {figures['grounded']:.3f}" if "grounded" in figures else ""
        if "off_topic_grounded" in figures:
            said += f", hors sujet fondées {figures['off_topic_grounded']:.3f} sur {data['off_topic']}"
        print(
            f"{ENGINES[name]:>11} : {data['questions']} questions  hit@1 {figures['hit@1']:.3f}  hit@5 {figures['hit@5']:.3f}  "
            f"MRR@10 {figures['mrr@10']:.3f}{said}"
        )
    for name, pair in against.items():  # is the difference at hit@1 more than chance?
        print(
            f"GrasBot face à {ENGINES[name]} : premier sur {pair['won']} questions où il ne l'est pas, pas sur {pair['lost']} où il l'est "
            f"(test des signes, p {pair['p']:.3f})"
        )
    if "new_subject" in data:
        after, alone = data["new_subject"], data["new_subject"]["alone"]
        print(
            f"après un autre sujet : {after['questions']} questions  hit@1 {after['hit@1']:.3f}  hit@5 {after['hit@5']:.3f}  "
            f"MRR@10 {after['mrr@10']:.3f} (posées seules : {alone['hit@1']:.3f} / {alone['hit@5']:.3f} / {alone['mrr@10']:.3f})"
            + (f" ; hors sujet fondées après l'une d'elles {after['off_topic_grounded']:.3f}" if "off_topic_grounded" in after else "")
        )
    if "context_recall" in data:
        print(f"rappel du contexte {data['context_recall']:.3f}  rappel de la réponse extraite {data['fallback_recall']:.3f}")
    for miss in data["misses"]:
        where = f"rang {miss['rank']}" if miss["rank"] else "absente des 10 premières"
        print(f"  manquée ({where}) : {miss['question']}  attendue : {', '.join(miss['expected'])} ; en tête : {', '.join(miss['got']) or 'aucune note'}")
    for miss in data.get("context_misses", ()):
        where = f"note au rang {miss['rank']}" if miss["rank"] else "note absente des 10 premières"
        print(f"  phrase absente du prompt ({where}) : {miss['question']}  « {miss['phrase']} »")
    return 0


#: Texts to embed from which a command says it will take a while (about 25 a second here).
ANNOUNCE_FROM = 500


def _announce_embedding(count: int) -> None:
    """A first run on a large vault, or a long note of thousands of sections, embeds for
    minutes before the command answers: said on stderr rather than a silent wait."""
    if count >= ANNOUNCE_FROM:
        texts = f"{count:,}".replace(",", "\u202f")  # 12 345, as French writes it
        print(
            f"grasbot: calcul du sens de {texts} textes, une fois (ils sont gardés dans le cache) ; --semantic off répond tout de suite",
            file=sys.stderr,
            flush=True,
        )


#: `serve --token`: the command line of a process is every local user's to read (`ps`, /proc).
TOKEN_IN_ARGV = (
    "--token met le jeton du propriétaire dans la ligne de commande, que tout utilisateur de cette machine peut lire (ps) : "
    "chacun d'eux peut appeler le démon en votre nom et lire vos notes privées ; donnez-le par GRASBOT_TOKEN ou dans "
    "le fichier du jeton (--token-file), puis changez-le"
)


def peers_in_clear(peers: Sequence[str]) -> list[str]:
    """The peers a reload sends the owner token to over plain HTTP, off this machine: anyone on
    the way reads it (the documented peers are other daemons on the same host, or https://)."""
    clear = []
    for url in peers:
        parts = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
        host = (parts.hostname or "").strip("[]")
        if parts.scheme == "http" and host != "localhost" and not _loopback(host):
            clear.append(url)
    return clear


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = _settings(args)
        if args.commande == "log":
            return cmd_log(args, settings)
        if args.commande == "serve":
            from .server.app import serve

            if args.token is not None:
                print(f"grasbot: attention : {TOKEN_IN_ARGV}", file=sys.stderr, flush=True)
            for url in peers_in_clear(settings.peers):
                print(
                    f"grasbot: attention : GRASBOT_PEERS : un rechargement envoie à {url} le jeton du propriétaire en HTTP simple, que quiconque sur le trajet "
                    "lit : joignez ce démon en https:// ou par un lien privé",
                    file=sys.stderr,
                    flush=True,
                )
            return serve(settings)
        bot = GrasBot.open(settings)
        # meaning beside words, as the daemon has it once its worker is done; `check` searches
        # only for the questions notes declare in `answers`: a vault that declares none is not
        # embedded first (scripts/run.sh checks before serving: 77 s for a 209-note vault)
        if args.commande != "check" or any(note.answers for note in bot.snapshot.index("owner").notes.values()):
            bot.embed_pending(announce=_announce_embedding)
        return {"search": cmd_search, "ask": cmd_ask, "check": cmd_check, "eval": cmd_eval}[args.commande](bot, args)
    except GrasbotError as exc:
        print(f"grasbot: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `grasbot log | head`: the reader has read enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # or Python's exit flush raises it again
        return 1


if __name__ == "__main__":
    sys.exit(main())
