// @vitest-environment node
// The REAL preview panel (src/preview.ts with the real client and stream, bundled by esbuild
// into a small page) in headless Chromium, against the real daemon and the stand-in Ollama
// started by tests/support/run_stack.py. It asks a question and reads the screen: the
// streamed answer, the badge, the sources with their reasons. Screenshots go to
// test-artifacts/ (gitignored): plugin-preview-streaming.png and plugin-preview.png.
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { type Server, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import esbuild from "esbuild";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANSWER, PANEL } from "../../src/messages";
import type { Source } from "../../src/protocol";
import { formatChars, formatPoints, passageLabel } from "../../src/render";
import { launchChromium } from "../../../tests/browser/chromium.mjs";
import { REPO, type Stack, requirePython, startStack } from "../contract/stack";

const here = path.dirname(fileURLToPath(import.meta.url));
const PLUGIN = path.resolve(here, "..", "..");
const ARTIFACTS = path.join(REPO, "test-artifacts");
const WAIT_MS = 30_000;

let stack: Stack;
let server: Server;
let pageOrigin = "";
let userDataDir = "";
let context: BrowserContext;
let page: Page;
const requests: string[] = [];
const pageErrors: string[] = [];

async function bundlePage(): Promise<string> {
	const result = await esbuild.build({
		entryPoints: [path.join(here, "page.ts")],
		bundle: true,
		write: false,
		format: "iife",
		platform: "browser",
		target: "es2018",
		logLevel: "silent",
		alias: { obsidian: path.join(PLUGIN, "tests", "obsidian-stub.ts") },
	});
	return result.outputFiles[0].text;
}

/** The test page and its assets, from 127.0.0.1 on a free port; the daemon must allow its origin. */
async function servePage(files: Record<string, [string, string]>): Promise<void> {
	server = createServer((req, res) => {
		const file = files[req.url ?? ""];
		if (!file) {
			res.writeHead(404).end();
			return;
		}
		res.writeHead(200, { "Content-Type": file[0], "Cache-Control": "no-store" }).end(file[1]);
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	pageOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function html(daemon: string): string {
	return [
		"<!doctype html>",
		'<html lang="fr"><head><meta charset="utf-8"><title>GrasBot preview (test page)</title>',
		'<link rel="stylesheet" href="/theme.css"><link rel="stylesheet" href="/styles.css"></head>',
		`<body><div id="app" data-daemon="${daemon}"></div><script src="/page.js"></script></body></html>`,
	].join("\n");
}

beforeAll(async () => {
	requirePython();
	const files: Record<string, [string, string]> = {
		"/page.js": ["text/javascript; charset=utf-8", await bundlePage()],
		"/styles.css": ["text/css; charset=utf-8", await readFile(path.join(PLUGIN, "styles.css"), "utf8")],
		"/theme.css": ["text/css; charset=utf-8", await readFile(path.join(here, "theme.css"), "utf8")],
	};
	await servePage(files);
	stack = await startStack([pageOrigin]);
	files["/"] = ["text/html; charset=utf-8", html(stack.info.daemon)];

	userDataDir = await mkdtemp(path.join(tmpdir(), "grasbot-chromium-"));
	context = await launchChromium({ viewport: { width: 460, height: 900 } }, userDataDir);
	page = context.pages()[0] ?? (await context.newPage());
	page.on("request", (request) => requests.push(request.url()));
	page.on("pageerror", (error) => pageErrors.push(String(error)));
}, 120_000);

afterAll(async () => {
	await context?.close();
	await stack?.stop();
	if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
	if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
});

interface Screen {
	status: string;
	text: string;
	badge: string;
	facts: string;
	states: string[];
	sources: {
		title: string;
		score: string;
		meta: string;
		reasons: { signal: string; points: string; detail: string }[];
		passages: { label: string; chars: string }[];
		unsent: string;
	}[];
}

function readScreen(): Promise<Screen> {
	return page.evaluate(() => {
		const text = (el: Element | null) => el?.textContent ?? "";
		return {
			status: text(document.querySelector(".grasbot-answer-status")),
			text: text(document.querySelector(".grasbot-answer-text")),
			badge: text(document.querySelector(".grasbot-badge")),
			facts: text(document.querySelector(".grasbot-answer-facts")),
			states: Array.from(document.querySelectorAll(".grasbot-state")).map((el) => text(el)),
			sources: Array.from(document.querySelectorAll(".grasbot-source")).map((item) => ({
				title: text(item.querySelector(".grasbot-source-link, .grasbot-source-title")),
				score: text(item.querySelector(".grasbot-source-score")),
				meta: text(item.querySelector(".grasbot-source-meta")),
				reasons: Array.from(item.querySelectorAll(".grasbot-reason")).map((row) => ({
					signal: text(row.querySelector(".grasbot-reason-signal")),
					points: text(row.querySelector(".grasbot-reason-points")),
					detail: text(row.querySelector(".grasbot-reason-detail")),
				})),
				passages: Array.from(item.querySelectorAll(".grasbot-passage")).map((row) => ({
					label: text(row.querySelector(".grasbot-passage-heading, .grasbot-passage-link")),
					chars: text(row.querySelector(".grasbot-passage-chars")),
				})),
				unsent: text(item.querySelector(".grasbot-passages-none")),
			})),
		};
	});
}

/** The JSON a GET (or, with a body, a POST) of `url` answers, by node's http client. */
function httpJson<T>(url: string, body?: string): Promise<T> {
	const options = body === undefined ? { method: "GET" } : { method: "POST", headers: { "Content-Type": "application/json" } };
	return new Promise((resolve, reject) => {
		const req = request(url, options, (res) => {
			let text = "";
			res.setEncoding("utf8");
			res.on("data", (chunk: string) => (text += chunk));
			res.on("end", () => {
				try {
					resolve(JSON.parse(text) as T);
				} catch (error) {
					reject(error instanceof Error ? error : new Error(String(error)));
				}
			});
		});
		req.on("error", reject);
		req.end(body);
	});
}

/** What the daemon itself says a visitor gets for `q` (the screen must show the same). */
async function visitorSearch(q: string): Promise<Source[]> {
	const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "search", params: { q, audience: "visitor" } });
	return (await httpJson<{ result: { results: Source[] } }>(`${stack.info.daemon}/rpc`, body)).result.results;
}

describe("the preview panel in headless Chromium", { timeout: 90_000 }, () => {
	it("streams the answer, then shows the badge and the sources with their reasons", async () => {
		const { question, reply } = stack.info;
		const expected = await visitorSearch(question);
		expect(expected.length).toBeGreaterThan(1);

		// The stand-in writes its first piece, then holds the rest until `release`.
		const pieces = [reply.slice(0, 90), reply.slice(90, 120), reply.slice(120)];
		await stack.command("script", { pieces, hold_after: 1 });
		try {
			await page.goto(`${pageOrigin}/`, { waitUntil: "load" });
			await page.waitForSelector('#app[data-ready="true"]', { timeout: WAIT_MS });
			await page.fill(".grasbot-question", question);
			await page.click(".grasbot-ask-button");

			// Mid-stream: the first piece is on screen, the sources already shown, not done yet. The
			// daemon holds a piece's last word until the next (it may still become an address no
			// note holds, which is taken out of the answer).
			await page.waitForFunction(
				(first) => document.querySelector(".grasbot-answer-text")?.textContent === first,
				pieces[0].replace(/\S+$/u, ""),
				{ timeout: WAIT_MS },
			);
			const partial = await readScreen();
			expect(partial.badge).toBe(`basé sur ${expected.length} notes`);
			expect(partial.sources.map((s) => s.title)).toEqual(expected.map((s) => s.title));
			expect(partial.status).toBe(PANEL.asking);
			expect(partial.facts).toBe("");
			expect(await page.isDisabled(".grasbot-ask-button")).toBe(true);
			await mkdir(ARTIFACTS, { recursive: true });
			await page.screenshot({ path: path.join(ARTIFACTS, "plugin-preview-streaming.png"), fullPage: true });
		} finally {
			await stack.command("release");
			await stack.command("script");
		}

		await page.waitForSelector(".grasbot-answer-facts", { timeout: WAIT_MS });
		const screen = await readScreen();
		// The final answer is read as Markdown, as the site's chat reads it: a [slug] shows its note's title.
		expect(reply).toContain("[grasbot-pipeline]");
		expect(screen.text).toBe(reply.replace("[grasbot-pipeline]", "[GrasBot — le pipeline de réponse]"));
		expect(screen.badge).toBe(`basé sur ${expected.length} notes`);
		expect(screen.states).toEqual([]);
		expect(screen.status).not.toContain(PANEL.streamFallback); // the stream itself answered
		expect(screen.facts).toContain("modèle qwen3:8b");
		expect(screen.sources.map((s) => s.title)).toEqual(expected.map((s) => s.title));

		const first = screen.sources[0];
		expect(first.title).toBe("GrasBot — le pipeline de réponse");
		expect(first.meta).toBe("grasbot-pipeline · technique");
		expect(first.score).toMatch(/^score \d+\.\d$/);
		expect(first.reasons.find((r) => r.signal === "alias")?.detail).toBe("alias « comment fonctionne grasbot »");
		// Every source shows every reason the daemon gave, signal, points and detail.
		expect(screen.sources.map((s) => s.reasons)).toEqual(
			expected.map((s) => s.reasons.map((r) => ({ signal: r.signal, points: formatPoints(r.points), detail: r.detail }))),
		);
		// Under each source, the passages the daemon says it sent to the model.
		expect(screen.sources.map((s) => s.passages)).toEqual(
			expected.map((s) => s.passages.map((p) => ({ label: passageLabel(s, p), chars: formatChars(p.chars) }))),
		);
		expect(first.passages).toEqual([{ label: ANSWER.wholeNote, chars: formatChars(expected[0].passages[0].chars) }]);
		expect(screen.sources.map((s) => s.unsent)).toEqual(expected.map((s) => (s.passages.length ? "" : "Not sent to the model")));
		expect(await page.isDisabled(".grasbot-ask-button")).toBe(false);

		// A source opens its note (the panel reports the vault path it would open).
		await page.click(".grasbot-source-link");
		expect(await page.getAttribute("#app", "data-opened")).toBe(expected[0].path);
		// So does a citation in the answer.
		await page.evaluate(() => document.querySelector("#app")?.removeAttribute("data-opened"));
		await page.click(".grasbot-answer-text a.grasbot-cite");
		expect(await page.getAttribute("#app", "data-opened")).toBe(expected[0].path);

		await page.screenshot({ path: path.join(ARTIFACTS, "plugin-preview.png"), fullPage: true });

		expect(pageErrors).toEqual([]);
		expect(requests.some((url) => url.startsWith(`${stack.info.daemon}/ask/stream?`))).toBe(true);
		// The page talks to itself and to the daemon, nothing else.
		expect(requests.filter((url) => !url.startsWith(`${pageOrigin}/`) && !url.startsWith(`${stack.info.daemon}/`))).toEqual([]);
	});

	it("asks a follow-up as a visitor with the conversation's history", async () => {
		const { question, reply } = stack.info;
		const followUp = "Et quel modèle utilise-t-il ? <img src=x onerror=\"window.__grasbotInjected = 5\">";
		// The model's reply carries markup: the panel must show it as text.
		const hostile = 'Qwen3 <script>window.__grasbotInjected = 4</script> et <img src="x" onerror="window.__grasbotInjected = 2">';
		expect(await page.textContent(".grasbot-ask-button")).toBe(PANEL.followUp);
		await stack.command("script", { reply: hostile });
		try {
			await page.fill(".grasbot-question", followUp);
			await page.click(".grasbot-ask-button");
			await page.waitForFunction(() => document.querySelectorAll(".grasbot-answer-facts").length === 2, null, { timeout: WAIT_MS });
		} finally {
			await stack.command("script");
		}
		const turns = await page.evaluate(() =>
			Array.from(document.querySelectorAll(".grasbot-turn")).map((turn) => ({
				question: turn.querySelector(".grasbot-turn-question")?.textContent ?? "",
				text: turn.querySelector(".grasbot-answer-text")?.textContent ?? "",
			})),
		);
		expect(turns).toEqual([
			{ question, text: reply.replace("[grasbot-pipeline]", "[GrasBot — le pipeline de réponse]") },
			{ question: followUp, text: hostile },
		]);
		expect(await page.evaluate(() => document.querySelectorAll("#app script, #app img").length)).toBe(0);
		expect(await page.evaluate(() => (window as unknown as { __grasbotInjected?: unknown }).__grasbotInjected ?? null)).toBeNull();
		// What reached the model: the first exchange, then the follow-up.
		const recorded = await httpJson<{ requests: { messages: { role: string; content: string }[] }[] }>(
			`${stack.info.ollama}/standin/requests`,
		);
		const last = recorded.requests[recorded.requests.length - 1].messages;
		expect(last.slice(1, -1)).toEqual([
			{ role: "user", content: question },
			{ role: "assistant", content: reply },
		]);
		expect(last[last.length - 1].content).toContain(followUp);
		await page.screenshot({ path: path.join(ARTIFACTS, "plugin-preview-follow-up.png"), fullPage: true });

		await page.click(".grasbot-new-conversation");
		expect(await page.locator(".grasbot-turn").count()).toBe(0);
		expect(await page.textContent(".grasbot-ask-button")).toBe(PANEL.ask);
		expect(pageErrors).toEqual([]);
	});
});
