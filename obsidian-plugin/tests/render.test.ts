import { readFileSync } from "node:fs";
import path from "node:path";
import { runInNewContext } from "node:vm";
import { describe, expect, it, vi } from "vitest";
import { type AnswerResult, decodeReloadResult } from "../src/protocol";
import { groundedBadgeText } from "../src/messages";
import { AnswerView, formatReloadNotice, passageLabel, renderAnswer, renderFailure, renderNoteTest } from "../src/render";
import { describeFailure, DaemonNotRunningError, TimeoutError } from "../src/errors";
import { source } from "./helpers";

function answer(extra: Partial<AnswerResult> = {}): AnswerResult {
	return {
		response: "Push_swap trie une pile [push-swap].",
		sources: [source("push-swap", 27.4), source("algorithmique", 6.1)],
		grounded: true,
		model: "qwen3:8b",
		vault_size: 41,
		llm_error: null,
		busy: false,
		reused: false,
		...extra,
	};
}

describe("badge", () => {
	it("says how many notes ground the answer, or that it is general", () => {
		expect(groundedBadgeText(true, 3)).toBe("basé sur 3 notes");
		expect(groundedBadgeText(true, 1)).toBe("basé sur 1 note");
		expect(groundedBadgeText(false, 2)).toBe("réponse généraliste");
	});

	it("counts the notes the answer was written from, as the site's chat does", () => {
		// the daemon's answer when Ollama is down: five notes found, three quoted
		const passage = { heading: [], anchor: null, url: null, chars: 300 };
		const quoted = ["grasbot-pipeline", "moc-ia", "sqlite"].map((slug, i) => source(slug, 9 - i, { passages: [passage] }));
		const sources = [...quoted, source("bm25", 4, { passages: [] }), source("generateur-site-statique", 3, { passages: [] })];
		const root = createDiv();
		renderAnswer(root, answer({ sources, model: null, llm_error: "the LLM did not answer" }));
		expect(root.querySelector(".grasbot-badge")?.textContent).toBe("basé sur 3 notes");
		const items = [...root.querySelectorAll(".grasbot-source")];
		expect(items.map((item) => item.querySelector(".grasbot-passages-title, .grasbot-passages-none")?.textContent)).toEqual([
			"Passages cités dans la réponse",
			"Passages cités dans la réponse",
			"Passages cités dans la réponse",
			"Aucun passage cité",
			"Aucun passage cité",
		]);
	});

	it("is « réponse généraliste » for an answer written from no note's passage, as on the site's chat", () => {
		// the daemon, Ollama down, on a note found by its title with nothing to quote (an embed alone)
		const root = createDiv();
		const sources = [source("les-abeilles", 15.6, { passages: [] })];
		renderAnswer(root, answer({ sources, model: null, llm_error: "the LLM did not answer", response: "Je ne trouve pas cette information dans les notes." }));
		expect(root.querySelector(".grasbot-badge")?.textContent).toBe("réponse généraliste");
		expect(root.querySelector(".grasbot-badge-general")).not.toBeNull();
		const streamed = new AnswerView(createDiv());
		streamed.setSources(sources, true); // its `sources` event, before any token
		expect(streamed.el.querySelector(".grasbot-badge")?.textContent).toBe("réponse généraliste");
	});

	it("is drawn from the answer's grounded flag and source count", () => {
		const root = createDiv();
		renderAnswer(root, answer());
		expect(root.querySelector(".grasbot-badge")?.textContent).toBe("basé sur 2 notes");
		const general = createDiv();
		renderAnswer(general, answer({ grounded: false, sources: [] }));
		expect(general.querySelector(".grasbot-badge")?.textContent).toBe("réponse généraliste");
		expect(general.querySelector(".grasbot-badge-general")).not.toBeNull();
	});
});

describe("text from notes is never HTML", () => {
	const hostile = '<script>window.__pwned = true</script><img src=x onerror="window.__pwned = true">';

	it("shows a note's <script> as text in the answer, the titles and the reasons", () => {
		const root = createDiv();
		const evil = source("evil", 5, {
			title: `Titre ${hostile}`,
			reasons: [{ signal: "bm25", points: 1.5, detail: hostile }],
		});
		renderAnswer(root, answer({ response: `Voici : ${hostile}`, sources: [evil], llm_error: hostile }), { onOpenSource: () => {} });

		expect(root.querySelector("script")).toBeNull();
		expect(root.querySelector("img")).toBeNull();
		expect(root.querySelector(".grasbot-answer-text")?.textContent).toBe(`Voici : ${hostile}`);
		expect(root.querySelector(".grasbot-source-link")?.textContent).toBe(`Titre ${hostile}`);
		expect(root.querySelector(".grasbot-reason-detail")?.textContent).toBe(hostile);
		expect(root.textContent).toContain("<script>window.__pwned = true</script>");
		expect((window as unknown as { __pwned?: boolean }).__pwned).toBeUndefined();
	});

	it("draws a note's text that leaves a right-to-left override open apart from what follows it", () => {
		// U+202E unclosed (a clipped page's title): in the same run as the card's score, type or
		// next heading, it drew them right to left (« score 5.0 » as « 0.5 erocs »)
		const rlo = "\u202e";
		const passage = { heading: [`Le script${rlo}`, "Capteurs"], anchor: null, url: null, chars: 120 };
		const evil = source("potager", 5, {
			title: `Potager${rlo}`,
			type: `projet${rlo}`,
			reasons: [{ signal: "title", points: 5, detail: `titre « Potager${rlo} »` }],
			passages: [passage],
		});
		for (const options of [{ onOpenSource: () => {} }, {}]) {
			const root = createDiv();
			renderAnswer(root, answer({ response: "Voir [potager] pour arroser.", sources: [evil] }), options);
			const held = [...root.querySelectorAll("*")].flatMap((el) => [...el.childNodes].filter((n) => n.nodeType === 3 && n.textContent?.includes(rlo)));
			expect(held.length).toBe(5); // the citation, the title, the type, the reason, the first heading
			for (const text of held) {
				// its own isolate (bdi, or dir="auto"), with nothing after it there
				const isolate = text.parentElement as HTMLElement;
				expect(isolate.tagName === "BDI" || isolate.getAttribute("dir") === "auto", isolate.outerHTML).toBe(true);
				expect(isolate.lastChild).toBe(text);
			}
			expect(root.querySelector(".grasbot-source-meta")?.textContent).toBe(`potager · projet${rlo}`);
			expect(root.querySelector(".grasbot-passage-link, .grasbot-passage-heading")?.textContent).toBe(`Le script${rlo} › Capteurs`);
		}
	});

	it("keeps streamed tokens as text too", () => {
		const root = createDiv();
		const view = new AnswerView(root);
		view.appendToken("<scr");
		view.appendToken("ipt>alert(1)</script>");
		expect(root.querySelector("script")).toBeNull();
		expect(root.querySelector(".grasbot-answer-text")?.textContent).toBe("<script>alert(1)</script>");
	});
});

describe("the final answer", () => {
	it("replaces the streamed text with the answer read as Markdown, its citations opening their notes", () => {
		const root = createDiv();
		const open = vi.fn();
		const view = new AnswerView(root, { onOpenSource: open });
		view.appendToken("Push_swap **trie**");
		expect(root.querySelector(".grasbot-answer-text strong")).toBeNull(); // tokens stay text until the end
		view.complete(answer({ response: "Push_swap **trie** une pile [push-swap].\n\n- `ra`\n- `rb`" }));
		const text = root.querySelector(".grasbot-answer-text");
		expect(text?.classList.contains("grasbot-md")).toBe(true);
		expect(text?.querySelector("p strong")?.textContent).toBe("trie");
		expect([...(text?.querySelectorAll("li code") ?? [])].map((c) => c.textContent)).toEqual(["ra", "rb"]);
		text?.querySelector<HTMLAnchorElement>("a.grasbot-cite")?.click();
		expect(open).toHaveBeenCalledWith(expect.objectContaining({ slug: "push-swap" }));
	});
});

describe("sources", () => {
	it("lists each source with its score and every reason", () => {
		const root = createDiv();
		const s = source("push-swap", 27.4, {
			reasons: [
				{ signal: "alias", points: 10, detail: "alias « push swap » dans la question" },
				{ signal: "bm25", points: 2.44, detail: "tri, pile" },
			],
		});
		renderAnswer(root, answer({ sources: [s] }));
		expect(root.querySelector(".grasbot-source-score")?.textContent).toBe("score 27.4");
		const reasons = [...root.querySelectorAll(".grasbot-reason")].map((r) => r.textContent);
		expect(reasons).toEqual(["alias+10.0alias « push swap » dans la question", "bm25+2.4tri, pile"]);
	});

	it("opens the note behind a source when its link is clicked", () => {
		const root = createDiv();
		const open = vi.fn();
		renderAnswer(root, answer(), { onOpenSource: open });
		const links = root.querySelectorAll<HTMLAnchorElement>(".grasbot-source-link");
		links[1].click();
		expect(open).toHaveBeenCalledTimes(1);
		expect(open.mock.calls[0][0]).toMatchObject({ slug: "algorithmique", path: "algorithmique.md" });
	});
});

describe("passages", () => {
	const course = source("cours", 12, {
		title: "Cours de jardinage",
		passages: [
			{ heading: ["Cours de jardinage"], anchor: "cours-de-jardinage", url: null, chars: 53 },
			{ heading: ["Cours de jardinage", "Greffe", "Le bon moment"], anchor: "le-bon-moment", url: "/cours/cours#le-bon-moment", chars: 1240 },
		],
	});
	const whole = source("greffe", 6, { passages: [{ heading: [], anchor: null, url: null, chars: 310 }] });
	const weak = source("cuisine", 2, { passages: [] });

	it("shows under each source which passages were sent, by heading path, and how long", () => {
		const root = createDiv();
		renderAnswer(root, answer({ sources: [course, whole, weak] }));
		const items = [...root.querySelectorAll(".grasbot-source")];
		const rows = (item: Element) =>
			[...item.querySelectorAll(".grasbot-passage")].map((row) => [
				row.querySelector(".grasbot-passage-heading, .grasbot-passage-link")?.textContent,
				row.querySelector(".grasbot-passage-chars")?.textContent,
			]);
		expect(items[0].querySelector(".grasbot-passages-title")?.textContent).toBe("Passages envoyés au modèle");
		// the note's title, its first heading here, is not said again
		expect(rows(items[0])).toEqual([
			["Début de la note", "53 caractères"],
			["Greffe › Le bon moment", "1\u202f240 caractères"],
		]);
		expect(rows(items[1])).toEqual([["Note entière", "310 caractères"]]);
		expect(rows(items[2])).toEqual([]);
		expect(items[2].querySelector(".grasbot-passages-none")?.textContent).toBe("Aucun passage envoyé au modèle");
	});

	it("opens the note at a passage's heading when its link is clicked", () => {
		const root = createDiv();
		const open = vi.fn();
		renderAnswer(root, answer({ sources: [course, whole] }), { onOpenSource: open });
		const links = root.querySelectorAll<HTMLAnchorElement>(".grasbot-passage-link");
		expect([...links].map((a) => a.textContent)).toEqual(["Début de la note", "Greffe › Le bon moment"]);
		links[1].click();
		expect(open).toHaveBeenCalledWith(course, course.passages[1]);
		expect(root.querySelectorAll(".grasbot-source")[1].querySelector(".grasbot-passage-link")).toBeNull(); // a whole note: the source link opens it
	});

	it("shows a heading with markup as text", () => {
		const root = createDiv();
		const hostile = source("x", 1, { passages: [{ heading: ["<img src=x onerror=alert(1)>"], anchor: null, url: null, chars: 1 }] });
		renderAnswer(root, answer({ sources: [hostile] }));
		expect(root.querySelector("img")).toBeNull();
		expect(root.querySelector(".grasbot-passage-heading")?.textContent).toBe("<img src=x onerror=alert(1)>");
	});
});

describe("LLM fallback", () => {
	// chat.js as the site serves it: its MESSAGES are what a visitor is told
	const chatWindow: { GrasBotChat?: { MESSAGES: Record<string, unknown> } } = {};
	runInNewContext(readFileSync(path.join(__dirname, "..", "..", "daemon", "grasbot", "server", "static", "chat.js"), "utf8"), { window: chatWindow });
	const MESSAGES = chatWindow.GrasBotChat?.MESSAGES ?? {};

	it("says of an extractive answer what the site's chat says, and why the LLM failed", () => {
		const root = createDiv();
		renderAnswer(root, answer({ model: null, llm_error: "Ollama ne répond pas sur http://127.0.0.1:11434" }));
		expect(root.querySelector(".grasbot-llm-fallback-label")?.textContent).toBe(MESSAGES.fallback);
		expect(root.querySelector(".grasbot-llm-fallback-detail")?.textContent).toContain("Ollama ne répond pas");
	});

	it("says of the extract a visitor gets when the model is busy what the site's chat says", () => {
		const root = createDiv();
		renderAnswer(root, answer({ model: null, busy: true }));
		expect(root.querySelector(".grasbot-llm-fallback-label")?.textContent).toBe(MESSAGES.busy);
		expect(root.querySelector(".grasbot-llm-fallback-detail")).toBeNull();
	});

	it("tells the owner when an answer was reused rather than written again, which the site's chat never tells a visitor", () => {
		const root = createDiv();
		renderAnswer(root, answer({ reused: true }));
		expect(root.querySelector(".grasbot-llm-fallback")).toBeNull();
		expect(root.querySelector(".grasbot-reused-label")?.textContent).toBe("Réponse reprise d'une question identique posée récemment");
		expect(root.querySelector(".grasbot-reused-detail")?.textContent).toContain("Un visiteur n'en est pas averti");
		expect(MESSAGES.reused).toBeUndefined();
		expect(root.querySelector(".grasbot-answer-facts")?.textContent).toBe("modèle qwen3:8b · 41 notes dans le coffre");
	});

	it("shows no such label when the LLM answered", () => {
		const root = createDiv();
		renderAnswer(root, answer());
		expect(root.querySelector(".grasbot-llm-fallback, .grasbot-reused")).toBeNull();
		expect(root.querySelector(".grasbot-answer-facts")?.textContent).toBe("modèle qwen3:8b · 41 notes dans le coffre");
	});
});

describe("states", () => {
	it("tells how to start a daemon that is not running, in French as the other failures", () => {
		const root = createDiv();
		renderFailure(root, describeFailure(new DaemonNotRunningError("http://127.0.0.1:8765", "refused"), "http://127.0.0.1:8765"));
		expect(root.querySelector(".grasbot-state-not-running .grasbot-state-title")?.textContent).toBe("Le démon GrasBot ne tourne pas");
		expect(root.querySelector(".grasbot-state-detail")?.textContent).toBe(
			"Rien n'a répondu à http://127.0.0.1:8765 (refused). Lancez-le dans un terminal avec `grasbot serve`, puis réessayez.",
		);
	});

	it("says a daemon too slow to answer in French, with what it may be busy at and what to do", () => {
		const state = describeFailure(new TimeoutError("`reload`", 120_000), "http://127.0.0.1:8765");
		expect(state).toMatchObject({ kind: "timeout", title: "Le démon GrasBot ne répond pas" });
		expect(state.detail).toBe(
			"Le démon GrasBot (http://127.0.0.1:8765) n'a pas répondu à `reload` en 120 s : il est peut-être occupé (un rechargement qui calcule le sens des notes, un modèle lent ou une file d'attente pleine). Réessayez dans un moment ; si cela dure, le journal de `grasbot serve` dit pourquoi.",
		);
	});

	it("says a private note is not visible to visitors and why", () => {
		const root = createDiv();
		renderNoteTest(root, { kind: "private", slug: "journal", reason: "The note's frontmatter says `visibility: private`" });
		expect(root.querySelector(".grasbot-note-test-summary")?.textContent).toBe("Invisible aux visiteurs : cette note est privée.");
		expect(root.textContent).toContain("visibility: private");
	});

	it("reports each question's rank and who beats the note", () => {
		const root = createDiv();
		renderNoteTest(root, {
			kind: "tested",
			slug: "push-swap",
			visibilityHint: null,
			outcomes: [
				{ question: "C'est quoi push_swap ?", status: "first", score: 27.4 },
				{ question: "Quels tris ?", status: "lower", rank: 3, score: 4, beatenBy: { slug: "algorithmique", title: "Algorithmique", score: 9 } },
				{ question: "Et minishell ?", status: "absent", beatenBy: null },
			],
		});
		const verdicts = [...root.querySelectorAll(".grasbot-outcome-verdict")].map((v) => v.textContent);
		expect(verdicts).toEqual([
			"En tête (score 27.4)",
			"Rang 3 (score 4.0), devancée par algorithmique (score 9.0)",
			"Absente : aucune note ne répond à cette question",
		]);
		expect(root.querySelector(".grasbot-note-test-summary")?.textContent).toBe("Cette note arrive en tête pour 1 question sur 3.");
	});
});

describe("reload notice", () => {
	it("gives the vault size and each failed note with its reason", () => {
		const text = formatReloadNotice({
			vault_size: 42,
			added: 1,
			changed: 2,
			removed: 0,
			took_ms: 184.2,
			errors: [{ path: "brouillons/idées.md", message: "frontmatter YAML illisible (ligne 3) : note ignorée" }],
			peers: [],
		});
		expect(text).toBe(
			"Coffre GrasBot rechargé : 42 notes (1 ajoutée, 2 modifiées, 0 supprimée).\n1 note en échec :\n• brouillons/idées.md : frontmatter YAML illisible (ligne 3) : note ignorée",
		);
	});

	it("says which peer did not reload and why, a refused token with what to do, and that the others did", () => {
		const base = { vault_size: 42, added: 0, changed: 1, removed: 0, took_ms: 3, errors: [] };
		const peers = [
			{ url: "http://127.0.0.1:8766", ok: true, vault_size: 42, error: null },
			// a daemon before `status`: its error's « HTTP 401 » says the token was refused
			{ url: "http://127.0.0.1:8767", ok: false, vault_size: null, error: "HTTP 401 : jeton du propriétaire requis" },
		];
		expect(formatReloadNotice(decodeReloadResult({ ...base, peers })).split("\n")).toEqual([
			"Coffre GrasBot rechargé : 42 notes (0 ajoutée, 1 modifiée, 0 supprimée).",
			"1 des 2 autres démons (GRASBOT_PEERS) ne s'est pas rechargé, et répond encore depuis le coffre tel qu'il était :",
			"• http://127.0.0.1:8767 : HTTP 401 : jeton du propriétaire requis",
			"Un démon pair qui refuse le jeton du propriétaire tourne avec un autre : redémarrez-le pour qu'il lise le jeton de ce démon (après un changement de jeton, chaque démon doit être redémarré).",
		]);
		const down = { url: "http://127.0.0.1:8767", ok: false, error: "ClientConnectorError: Cannot connect to host 127.0.0.1:8767" };
		expect(formatReloadNotice(decodeReloadResult({ ...base, peers: [down] })).split("\n").slice(1)).toEqual([
			"L'autre démon (GRASBOT_PEERS) ne s'est pas rechargé, et répond encore depuis le coffre tel qu'il était :",
			"• http://127.0.0.1:8767 : ClientConnectorError: Cannot connect to host 127.0.0.1:8767",
		]);
		expect(formatReloadNotice(decodeReloadResult({ ...base, peers: [peers[0]] })).split("\n").slice(1)).toEqual([
			"L'autre démon (GRASBOT_PEERS) s'est rechargé aussi.",
		]);
		expect(formatReloadNotice(decodeReloadResult(base)).split("\n")).toHaveLength(1); // no peers
	});

	it("tells a peer that refused the token by its status, whatever its error says", () => {
		const base = { vault_size: 42, added: 0, changed: 1, removed: 0, took_ms: 3, errors: [] };
		const notice = (peer: object) => formatReloadNotice(decodeReloadResult({ ...base, peers: [{ url: "http://127.0.0.1:8767", ok: false, ...peer }] }));
		const refused = notice({ status: 401, error: "jeton refusé par le pair" }).split("\n");
		expect(refused.slice(2)).toEqual([
			"• http://127.0.0.1:8767 : jeton refusé par le pair",
			"Un démon pair qui refuse le jeton du propriétaire tourne avec un autre : redémarrez-le pour qu'il lise le jeton de ce démon (après un changement de jeton, chaque démon doit être redémarré).",
		]);
		// another status: no word of its error makes it a refused token
		expect(notice({ status: 500, error: "HTTP 401 ? non : HTTP 500 : erreur interne" }).split("\n")).toHaveLength(3);
	});

	it("lists at most five failures", () => {
		const errors = Array.from({ length: 7 }, (_, i) => ({ path: `n${i}.md`, message: "bad" }));
		const text = formatReloadNotice({ vault_size: 3, added: null, changed: null, removed: null, took_ms: null, errors, peers: [] });
		expect(text.split("\n")).toHaveLength(1 + 1 + 5 + 1);
		expect(text).toContain("… et 2 de plus.");
	});
});

describe("passage label", () => {
	it("says the note's title once, whatever its case or Unicode form in the first heading", () => {
		const nfd = "Éléphant".normalize("NFD");
		const passage = { heading: ["éléphant ", "Habitat"], anchor: null, url: null, chars: 10 };
		expect(passageLabel(source("elephant", 1, { title: nfd }), passage)).toBe("Habitat");
		expect(passageLabel(source("elephant", 1, { title: "Zoo" }), passage)).toBe("éléphant  › Habitat");
	});
});
