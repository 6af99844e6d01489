// The chat's pure parts (daemon/grasbot/server/static/chat.js), run by node's test runner on a
// happy-dom document: which history a follow-up is sent with, how a daemon's 400 lowers the
// limits, and that the Markdown reader only ever builds its own few elements. The browser
// tests (tests/e2e/test_chat_page.py) drive the same file through nginx.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import { Window } from "happy-dom";

const here = path.dirname(fileURLToPath(import.meta.url));
const CHAT = path.join(here, "..", "..", "daemon", "grasbot", "server", "static", "chat.js");

const window = new Window({ url: "https://bot.example.org/" });
const document = window.document;
vm.runInNewContext(readFileSync(CHAT, "utf8"), { window, document, URL, sessionStorage: window.sessionStorage });
const chat = window.GrasBotChat;
const { renderMarkdown, LIMITS } = chat;
// The script's objects come from another realm: compared as plain data.
const plain = (value) => JSON.parse(JSON.stringify(value));
const historyFor = (...args) => plain(chat.historyFor(...args));
const lowerLimits = (...args) => plain(chat.lowerLimits(...args));
const { questionLimit } = chat;

const done = (i, response = `réponse ${i}`) => ({ q: `question ${i}`, status: "done", response });
const always = () => true;

test("history: answered turns as user/assistant pairs, the last 4 exchanges", () => {
	const turns = [1, 2, 3, 4, 5, 6].map((i) => done(i));
	const history = historyFor(turns, LIMITS, always);
	assert.equal(history.length, 8);
	assert.deepEqual(history[0], { role: "user", content: "question 3" });
	assert.deepEqual(history[7], { role: "assistant", content: "réponse 6" });
});

test("history: failed and stopped turns are not part of it", () => {
	const turns = [done(1), { q: "cassée", status: "error", response: null }, { q: "arrêtée", status: "stopped", response: null }];
	assert.deepEqual(historyFor(turns, LIMITS, always), [
		{ role: "user", content: "question 1" },
		{ role: "assistant", content: "réponse 1" },
	]);
});

test("history: a turn is cut to the daemon's length", () => {
	const [, assistant] = historyFor([done(1, "é".repeat(5000))], LIMITS, always);
	assert.equal(assistant.content.length, LIMITS.maxTurnChars);
});

test("history: oldest exchanges dropped until it fits, then the last answer cut", () => {
	const turns = [1, 2, 3].map((i) => done(i, "x".repeat(1000)));
	const under = (n) => (h) => JSON.stringify(h).length <= n;
	const one = historyFor(turns, LIMITS, under(1500)); // two exchanges are over 2,000
	assert.deepEqual(one, [
		{ role: "user", content: "question 3" },
		{ role: "assistant", content: "x".repeat(1000) },
	]);
	const cut = historyFor(turns, LIMITS, under(600));
	assert.equal(cut[0].content, "question 3");
	assert.ok(under(600)(cut) && cut[1].content.length > 0 && cut[1].content.length < 1000);
	assert.deepEqual(historyFor(turns, LIMITS, () => false), []);
});

test("a daemon's 400 names its lower limits in fields, whatever its sentence says", () => {
	const said = (fields) => ({ reason: "l'historique ne passe pas", param: "history", ...fields });
	assert.deepEqual(lowerLimits(LIMITS, said({ max_history: 4 })), { ...LIMITS, maxItems: 4 });
	assert.deepEqual(lowerLimits(LIMITS, said({ max_turn: 500 })), { ...LIMITS, maxTurnChars: 500 });
	// the sentence is not read when the fields are there: a lower limit it names is not one
	assert.equal(lowerLimits(LIMITS, { reason: "`history` : doit compter au plus 4 éléments (nombre reçu : 8)", param: "history" }), null);
	assert.equal(lowerLimits(LIMITS, { reason: "1 paramètre inconnu (attendus : q)", expected: ["q"] }), null);
	for (const wrong of [0, -1, 2.5, "4", null]) assert.equal(lowerLimits(LIMITS, said({ max_history: wrong })), null, String(wrong));
	assert.equal(questionLimit({ reason: "trop long", param: "q", max_question: 300 }), 300);
	assert.equal(questionLimit({ reason: "`q` : doit compter au plus 300 caractères (longueur reçue : 420)", param: "q" }), null);
	assert.equal(questionLimit(said({ max_history: 4 })), null);
});

test("an older daemon's 400 named its lower limits in its sentence alone, read as it was", () => {
	assert.equal(questionLimit("`q` : doit compter au plus 300 caractères (longueur reçue : 420)"), 300);
	assert.equal(questionLimit("q: must be at most 300 characters (got 420)"), 300);
	assert.equal(questionLimit("`history` : doit compter au plus 4 éléments (nombre reçu : 8)"), null);
	assert.equal(questionLimit(null), null);
	assert.equal(lowerLimits(LIMITS, "history: must have at most 4 items (got 8)").maxItems, 4);
	assert.equal(lowerLimits(LIMITS, "history[3].content: must be at most 500 characters (got 2000)").maxTurnChars, 500);
	assert.equal(lowerLimits(LIMITS, "q: must be at most 500 characters (got 600)"), null);
	assert.equal(lowerLimits(LIMITS, null), null);
});

test("a daemon that takes one history turn gets the last question alone", () => {
	const turns = [1, 2, 3, 4, 5].map((i) => done(i));
	const one = lowerLimits(LIMITS, "history: must have at most 1 items (got 8)");
	assert.deepEqual(historyFor(turns, one, always), [{ role: "user", content: "question 5" }]);
	assert.deepEqual(historyFor(turns, one, () => false), []);
	assert.deepEqual(historyFor([], one, always), []);
});

function render(text, sources = []) {
	const root = document.createElement("div");
	const bySlug = new Map(sources.map((s) => [s.slug, s]));
	renderMarkdown(root, text, (slug) => bySlug.get(slug) || null);
	return root;
}

test("Markdown: paragraphs, lists, emphasis, code, citations", () => {
	const root = render(
		"Le **potager** *arrose* [potager] avec `arrosage.py`.\nSuite.\n\n3. trois\n4. quatre\n   suite\n\n```\n<b>code</b>\n```",
		[{ slug: "potager", title: "Potager connecté", url: "/portfolio/potager" }],
	);
	assert.equal(root.querySelectorAll("p").length, 1);
	assert.equal(root.querySelectorAll("p br").length, 1);
	assert.equal(root.querySelector("strong").textContent, "potager");
	assert.equal(root.querySelector("em").textContent, "arrose");
	assert.equal(root.querySelector("p code").textContent, "arrosage.py");
	const cite = root.querySelector("a.grasbot-cite");
	assert.equal(cite.textContent, "Potager connecté");
	assert.equal(cite.getAttribute("href"), "https://bot.example.org/portfolio/potager");
	assert.equal(root.querySelector("ol").getAttribute("start"), "3");
	assert.deepEqual([...root.querySelectorAll("li")].map((li) => li.textContent), ["trois", "quatre suite"]);
	assert.equal(root.querySelector("pre code").textContent, "<b>code</b>");
	assert.equal(root.querySelector("b"), null);
});

test("Markdown: what is not a citation or a safe link stays text", () => {
	const root = render("[inconnu] [x](javascript:alert(1)) [note]", [{ slug: "note", title: "Note", url: "javascript:alert(1)" }]);
	assert.equal(root.querySelectorAll("a").length, 0);
	assert.equal(root.querySelector("span.grasbot-cite").textContent, "Note");
	assert.equal(root.textContent, "[inconnu] [x](javascript:alert(1)) [Note]");
});

test("Markdown: unclosed markers and snake_case are left alone", () => {
	assert.equal(render("**pas fermé et push_swap_tri").textContent, "**pas fermé et push_swap_tri");
	assert.equal(render("**pas fermé et push_swap_tri").querySelectorAll("strong, em").length, 0);
	assert.equal(render("```\nun bloc jamais fermé\n<script>").querySelector("pre code").textContent, "un bloc jamais fermé\n<script>");
});

// Any text, however hostile, becomes only the reader's own elements and attributes, and every
// character of markup in it is still there, as text.
const ALLOWED_TAGS = new Set(["P", "BR", "STRONG", "EM", "CODE", "PRE", "UL", "OL", "LI", "A", "SPAN"]);
const ALLOWED_ATTRIBUTES = new Set(["class", "href", "start", "tabindex"]);
const ALPHABET = ["<", ">", "script", "img", " onerror=", '"', "'", "*", "**", "_", "`", "```", "[", "]", "(", ")", "note",
	"javascript:", "-", "1.", "#", "\n", "\n\n", " ", "é", "&lt;", "a"];

test("Markdown: random hostile text builds nothing else", () => {
	let seed = 20;
	const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
	const sources = [{ slug: "note", title: "<img src=x onerror=alert(1)>", url: "/n" }];
	for (let n = 0; n < 3000; n++) {
		let text = "";
		for (let i = Math.floor(random() * 40); i > 0; i--) text += ALPHABET[Math.floor(random() * ALPHABET.length)];
		const root = render(text, sources);
		for (const el of root.querySelectorAll("*")) {
			assert.ok(ALLOWED_TAGS.has(el.tagName), `${el.tagName} from ${JSON.stringify(text)}`);
			for (const attr of el.getAttributeNames()) assert.ok(ALLOWED_ATTRIBUTES.has(attr), `${attr} from ${JSON.stringify(text)}`);
			if (el.hasAttribute("href")) assert.match(el.getAttribute("href"), /^https:\/\/bot\.example\.org\//);
		}
		const count = (s, c) => s.split(c).length - 1;
		const cited = count(text, "[note]");
		assert.equal(count(root.textContent, "<"), count(text, "<") + cited, JSON.stringify(text));
		assert.equal(count(root.textContent, "&lt;"), count(text, "&lt;"), JSON.stringify(text));
	}
});

// The rule both the chat page and the Obsidian preview follow, as cases both suites run.
const SHARED = JSON.parse(readFileSync(path.join(here, "..", "..", "shared-protocol", "cases", "history.json"), "utf8"));
const text = (s) => (Array.isArray(s) ? s.map(text).join("") : typeof s === "string" ? s : s.repeat.repeat(s.times));

test("history: the shared cases (shared-protocol/cases/history.json)", () => {
	assert.equal(LIMITS.maxItems, SHARED.limits.turns);
	assert.equal(LIMITS.maxTurnChars, SHARED.limits.turn_chars);
	assert.ok(SHARED.cases.length >= 7);
	for (const c of SHARED.cases) {
		const turns = c.exchanges.map(([q, a]) => ({ q: text(q), status: "done", response: text(a) }));
		const fits = (h) => c.budget === null || h.reduce((n, t) => n + t.content.length, 0) <= c.budget;
		const expected = c.expect.map(([role, content]) => ({ role, content: text(content) }));
		assert.deepEqual(historyFor(turns, LIMITS, fits), expected, c.name);
	}
});

test("history: the shared refusals (shared-protocol/cases/history.json)", () => {
	assert.ok(SHARED.refusals.length >= 3);
	for (const c of SHARED.refusals) {
		const lowered = lowerLimits(LIMITS, c.detail);
		const expected = c.limits && { ...LIMITS, maxItems: c.limits.turns, maxTurnChars: c.limits.turn_chars };
		assert.deepEqual(lowered, expected, JSON.stringify(c.detail));
	}
});

// How an answer's Markdown is shown, as cases the Obsidian preview runs too.
const MARKDOWN = JSON.parse(readFileSync(path.join(here, "..", "..", "shared-protocol", "cases", "markdown.json"), "utf8"));

test("Markdown: the shared cases (shared-protocol/cases/markdown.json)", () => {
	assert.ok(MARKDOWN.cases.length >= 9);
	for (const c of MARKDOWN.cases) {
		const root = render(c.text, MARKDOWN.sources);
		assert.equal(root.innerHTML.replace(/ href="[^"]*"/g, ""), c.html, c.name);
	}
	const cited = render("[potager]", MARKDOWN.sources).querySelector("a.grasbot-cite");
	assert.equal(cited.href, "https://exemple.org/potager"); // the page links a citation to its source's page
});

// What the daemon sends, Ollama down, for a note found by its title whose body holds nothing to
// quote (an embed alone): grounded, every passage list empty, and « Je ne trouve pas… ».
const FROM_NO_NOTE = {
	q: "Les abeilles du rucher ?",
	status: "done",
	response: "Je ne trouve pas cette information dans les notes. Vous pouvez consulter /portfolio, /competences ou /contact.",
	sources: [{ slug: "a", title: "Les abeilles du rucher", type: null, url: null, path: "a.md", passages: [] }],
	grounded: true,
	model: null,
	llmError: true,
};

test("badge: an answer written from no note's passage is « réponse généraliste », not « basé sur 0 notes »", () => {
	const read = { ...FROM_NO_NOTE, q: "Le miel ?", sources: [{ ...FROM_NO_NOTE.sources[0], passages: [{ heading: [], anchor: null, url: null, chars: 17 }] }] };
	window.sessionStorage.setItem("badge-test", JSON.stringify({ v: 1, turns: [FROM_NO_NOTE, read] }));
	const root = document.createElement("div");
	chat.mount(root, { base: "https://bot.example.org/", storageKey: "badge-test" });
	const badges = [...root.querySelectorAll(".grasbot-badge")];
	assert.deepEqual(
		badges.map((b) => [b.textContent, b.classList.contains("is-general")]),
		[
			["réponse généraliste", true],
			["basé sur 1 note", false],
		],
	);
});
