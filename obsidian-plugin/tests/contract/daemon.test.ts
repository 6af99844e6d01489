// @vitest-environment-options {"url": "http://plugin-contract.test/"}
// The plugin's own client against the REAL daemon (Python package, bundled vault copied to a
// temporary folder, stand-in Ollama), started by tests/support/run_stack.py on free ports.
// The fetch is happy-dom's, which applies CORS like Obsidian's renderer: the page origin
// above must be one the daemon was told to allow.
import { readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENT_METHODS, type ClientMethod, GrasbotClient } from "../../src/client";
import {
	DaemonNotRunningError,
	RPC_UNAUTHORIZED,
	RpcError,
	TimeoutError,
	TokenRefusedError,
	describeFailure,
} from "../../src/errors";
import type { Source } from "../../src/protocol";
import { streamAnswer } from "../../src/sse";
import { fetchTransport } from "../../src/transport";
import { type Stack, startStack } from "./stack";

const ORIGIN = "http://plugin-contract.test";
const fetch = window.fetch.bind(window);
const INVALID_PARAMS = -32602;
const METHOD_NOT_FOUND = -32601;

let stack: Stack;
let daemon = "";

function client(options: { token?: string; timeoutMs?: number } = {}): GrasbotClient {
	return new GrasbotClient({ daemonUrl: daemon, transport: fetchTransport(fetch), ...options });
}

/** The rejection of `promise`, which must reject. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
	try {
		await promise;
	} catch (error) {
		return error;
	}
	throw new Error("expected the call to fail, it succeeded");
}

beforeAll(async () => {
	stack = await startStack([ORIGIN]);
	daemon = stack.info.daemon;
}, 120_000);

afterAll(async () => {
	await stack?.stop();
});

describe("the plugin's client against the real daemon", { timeout: 60_000 }, () => {
	it("allows this page's origin and sees a healthy daemon with a reachable LLM", async () => {
		expect(stack.info.cors_origins).toContain(ORIGIN);
		const health = await client().health();
		expect(health.status).toBe("ok");
		expect(health.llm_reachable).toBe(true);
		expect(health.model).toBe("qwen3:8b");
		expect(health.vault_size).toBeGreaterThan(10);
	});

	it("finds every method the client calls in the daemon's rpc.discover", async () => {
		const { methods } = await client().discover();
		for (const method of CLIENT_METHODS.filter((m) => m !== "rpc.discover")) expect(methods).toContain(method);
	});

	it("searches as a visitor: the note that answers comes first, with its reasons", async () => {
		const result = await client().search(stack.info.question, { audience: "visitor" });
		expect(result.grounded).toBe(true);
		const first = result.results[0];
		expect(first.slug).toBe("grasbot-pipeline");
		expect(first.title).toBe("GrasBot — le pipeline de réponse");
		expect(first.path).toBe("grasbot/grasbot-pipeline.md");
		expect(first.reasons.map((r) => r.signal)).toEqual(expect.arrayContaining(["alias", "answers", "bm25"]));
		expect(first.score).toBeCloseTo(
			first.reasons.reduce((sum, r) => sum + r.points, 0),
			1,
		);
	});

	it("keeps private notes from visitors and shows them to the owner", async () => {
		const q = "Quels sont les tarifs de l'auteur ?";
		const visitor = await client().search(q, { audience: "visitor" });
		expect(visitor.results.map((s) => s.slug)).not.toContain("brouillon-tarifs");
		const owner = await client({ token: stack.info.token }).search(q, { audience: "owner" });
		expect(owner.results[0].slug).toBe("brouillon-tarifs");
	});

	it("answers with the stand-in LLM's reply and its cited source", async () => {
		const result = await client().answer(stack.info.question, { audience: "visitor" });
		expect(result.response).toBe(stack.info.reply);
		expect(result.model).toBe("qwen3:8b");
		expect(result.llm_error).toBeNull();
		expect(result.grounded).toBe(true);
		expect(result.sources[0].slug).toBe("grasbot-pipeline");
	});

	it("streams: sources first, then the tokens in order, then done", async () => {
		const events: string[] = [];
		const tokens: string[] = [];
		let streamedSources: Source[] = [];
		const result = await streamAnswer(
			stack.info.question,
			{
				onSources: (sources, grounded) => {
					events.push(`sources grounded=${String(grounded)}`);
					streamedSources = sources;
				},
				onToken: (text) => {
					events.push("token");
					tokens.push(text);
				},
			},
			{ daemonUrl: daemon, fetch },
		);
		expect(events[0]).toBe("sources grounded=true");
		expect(events.slice(1).every((e) => e === "token")).toBe(true);
		expect(tokens.length).toBeGreaterThan(1);
		expect(tokens.join("")).toBe(stack.info.reply);
		expect(result.response).toBe(stack.info.reply);
		expect(result.sources).toEqual(streamedSources);
		expect(streamedSources[0].slug).toBe("grasbot-pipeline");
	});

	it("gives the extractive answer, labelled, when the LLM fails; only the owner reads why", async () => {
		await stack.command("script", { mode: "http_500" });
		try {
			const answer = await client().answer(stack.info.question);
			expect(answer.llm_error).toEqual(expect.any(String));
			expect(answer.llm_error).not.toMatch(/Ollama|127\.0\.0\.1|500/);
			expect(answer.model).toBeNull();
			expect(answer.response).not.toBe(stack.info.reply);
			expect(answer.response.length).toBeGreaterThan(0);
			const tokens: string[] = [];
			const streamed = await streamAnswer(stack.info.question, { onToken: (t) => tokens.push(t) }, { daemonUrl: daemon, fetch });
			expect(tokens).toEqual([]);
			expect(streamed.llm_error).toBe(answer.llm_error);
			expect(streamed.response).toBe(answer.response);
			// The plugin sends its token: the author reads the cause, by RPC and by the stream
			// (a cross-origin GET with Authorization: the daemon's CORS preflight allows it).
			const token = stack.info.token;
			const owners = await client({ token }).answer(stack.info.question);
			expect(owners.llm_error).toMatch(/^Ollama sur http:\/\/127\.0\.0\.1:\d+ \(OLLAMA_HOST\) a répondu par HTTP 500/);
			expect(owners.response).toBe(answer.response);
			const ownersStream = await streamAnswer(stack.info.question, {}, { daemonUrl: daemon, fetch, token });
			expect(ownersStream.llm_error).toMatch(/^Ollama sur http:\/\/127\.0\.0\.1:\d+ \(OLLAMA_HOST\)/);
			expect(ownersStream.response).toBe(answer.response);
		} finally {
			await stack.command("script");
		}
	});

	it("reloads the vault after a note is edited, and names the note that failed", async () => {
		const q = "xylophone quantique";
		const before = await client().search(q);
		expect(before.results.map((s) => s.slug)).not.toContain("jeu-casse-briques");

		const notes = (await readdir(stack.info.vault, { recursive: true })).filter((f) => f.endsWith(".md")).length;
		const note = path.join(stack.info.vault, "portfolio", "jeu-casse-briques.md");
		const text = await readFile(note, "utf8");
		expect(text).toContain("aliases:\n");
		await writeFile(note, text.replace("aliases:\n", `aliases:\n  - "${q}"\n`), "utf8");
		const broken = path.join("brouillons", "frontmatter-cassee.md");
		await writeFile(path.join(stack.info.vault, broken), "---\ntitle: [pas fermé\n---\nTexte.\n", "utf8");

		const report = await client({ token: stack.info.token }).reload();
		// Every note of the bundled vault still loads; the broken one is reported, not added.
		expect(report).toMatchObject({ vault_size: notes, added: 0, changed: 1, removed: 0 });
		expect(report.errors.map((e) => e.path)).toEqual([broken]);
		expect(report.errors[0].message).toMatch(/YAML/);

		const after = await client().search(q);
		expect(after.results[0].slug).toBe("jeu-casse-briques");
		expect(after.results[0].reasons.some((r) => r.signal === "alias" && r.detail.includes(q))).toBe(true);
	});
});

describe("the error paths, as the plugin sees them", { timeout: 60_000 }, () => {
	it("bad params: a JSON-RPC -32602 naming the parameter", async () => {
		const error = await failure(client().call("search", { q: "push swap", top_k: "beaucoup" }, (r) => r));
		expect(error).toBeInstanceOf(RpcError);
		const rpc = error as RpcError;
		expect(rpc.code).toBe(INVALID_PARAMS);
		expect(rpc.method).toBe("search");
		expect(String(rpc.data)).toMatch(/^`top_k` : /);
		expect(describeFailure(rpc, daemon).detail).toContain("top_k");

		const missing = (await failure(client().call("answer", {}, (r) => r))) as RpcError;
		expect(missing.code).toBe(INVALID_PARAMS);
		expect(String(missing.data)).toBe("`q` : obligatoire, mais absent");
	});

	it("a question too long for the stream: HTTP 400 carrying -32602 whose data names q and its limit", async () => {
		const error = await failure(streamAnswer("a".repeat(600), {}, { daemonUrl: daemon, fetch }));
		expect(error).toBeInstanceOf(RpcError);
		expect((error as RpcError).code).toBe(-32602);
		expect((error as RpcError).data).toEqual({ reason: "`q` : doit compter au plus 500 caractères (longueur reçue : 600)", param: "q", max_question: 500 });
	});

	it("an unknown method: -32601", async () => {
		const error = await failure(client().call("no_such_method" as ClientMethod, undefined, (r) => r));
		expect(error).toBeInstanceOf(RpcError);
		expect((error as RpcError).code).toBe(METHOD_NOT_FOUND);
	});

	it("owner calls without the token or with a wrong one: -32001, shown as an auth state", async () => {
		for (const token of [undefined, "not-the-token"]) {
			const reload = await failure(client({ token }).reload());
			expect(reload).toBeInstanceOf(RpcError);
			expect((reload as RpcError).code).toBe(RPC_UNAUTHORIZED);
			expect(describeFailure(reload, daemon).kind).toBe("auth");
			const ownerSearch = await failure(client({ token }).search("tarifs", { audience: "owner" }));
			expect((ownerSearch as RpcError).code).toBe(RPC_UNAUTHORIZED);
		}
	});

	it("a stale token is a visitor's view, not a refusal: health says so, and the token check holds previews back", async () => {
		expect((await client({ token: "an-old-token-0123456789" }).health()).caller).toBe("token_refused");
		expect((await client().health()).caller).toBe("visitor");
		expect((await client({ token: stack.info.token }).health()).caller).toBe("owner");
		const stale = await failure(client({ token: "an-old-token-0123456789" }).checkToken());
		expect(stale).toBeInstanceOf(TokenRefusedError);
		expect(describeFailure(stale, daemon).title).toBe("Jeton d'accès refusé par le démon");
		await client({ token: stack.info.token }).checkToken();
		await client().checkToken();
	});

	it("a daemon slower than the client's delay: TimeoutError", async () => {
		// The stand-in holds its reply for 5 s; the client gives up after 250 ms.
		await stack.command("script", { first_delay: 5 });
		try {
			const error = await failure(client({ timeoutMs: 250 }).answer(stack.info.question));
			expect(error).toBeInstanceOf(TimeoutError);
			expect(describeFailure(error, daemon).kind).toBe("timeout");
		} finally {
			await stack.command("script");
		}
	});

	it("a stopped daemon: 'daemon not running' from the client and the stream", async () => {
		expect(await stack.stop()).toBe(0);
		const error = await failure(client().health());
		expect(error).toBeInstanceOf(DaemonNotRunningError);
		expect(describeFailure(error, daemon)).toMatchObject({ kind: "not-running", title: "Le démon GrasBot ne tourne pas" });
		expect(await failure(streamAnswer(stack.info.question, {}, { daemonUrl: daemon, fetch }))).toBeInstanceOf(
			DaemonNotRunningError,
		);
	});
});
