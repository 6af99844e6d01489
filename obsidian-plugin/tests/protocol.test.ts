// The plugin against the shared contract: every example exchange of shared-protocol/examples
// goes through the client (request framing and response decoding), and every method the
// client calls exists in openrpc.json with the same owner-only flag.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLIENT_METHODS, type ClientMethod, GrasbotClient } from "../src/client";
import { RpcError } from "../src/errors";
import { type HistoryTurn, decodeAnswerResult, decodeSearchResult } from "../src/protocol";
import { fakeTransport } from "./helpers";

const SHARED = path.resolve(__dirname, "..", "..", "shared-protocol");

interface Example {
	file: string;
	description: string;
	request: unknown;
	response: unknown;
}

/** One example; a result `{"$ref": "../openrpc.json"}` (rpc-discover.json) is that file, not a copy of it. */
function loadExample(file: string): Example {
	const example = JSON.parse(readFileSync(path.join(SHARED, "examples", file), "utf8")) as Omit<Example, "file">;
	const responses = Array.isArray(example.response) ? (example.response as unknown[]) : [example.response];
	for (const response of responses) {
		const result = (response as { result?: unknown } | null)?.result;
		if (typeof result === "object" && result !== null && Object.keys(result).length === 1 && "$ref" in result) {
			(response as { result: unknown }).result = JSON.parse(
				readFileSync(path.resolve(SHARED, "examples", (result as { $ref: string }).$ref), "utf8"),
			) as unknown;
		}
	}
	return { file, ...example };
}

const examples: Example[] = readdirSync(path.join(SHARED, "examples"))
	.filter((f) => f.endsWith(".json"))
	.sort()
	.map(loadExample);

const openrpc = JSON.parse(readFileSync(path.join(SHARED, "openrpc.json"), "utf8")) as {
	methods: { name: string }[];
};

type Params = Record<string, unknown>;
type Request = { jsonrpc: string; method: string; params?: Params; id: number | string };

/** How the plugin would make each call, from the example's params. */
const invoke: Record<ClientMethod, (client: GrasbotClient, p: Params) => Promise<unknown>> = {
	search: (c, p) => c.search(p.q as string, { topK: p.top_k as number | undefined, audience: p.audience as "visitor" | "owner" | undefined }),
	answer: (c, p) => c.answer(p.q as string, { history: p.history as HistoryTurn[] | undefined, audience: p.audience as "visitor" | "owner" | undefined }),
	reload: (c) => c.reload(),
	health: (c) => c.health(),
	suggest_aliases: (c, p) => c.suggestAliases(p.slug as string, p.limit as number | undefined),
	"rpc.discover": (c) => c.discover(),
};

const EXPRESSIBLE: Record<ClientMethod, string[]> = {
	search: ["q", "top_k", "audience"],
	answer: ["q", "history", "audience"],
	reload: [],
	health: [],
	suggest_aliases: ["slug", "limit"],
	"rpc.discover": [],
};

/** A single request with named params the client's API can produce (q a string, no unknown keys). */
function replayable(example: Example): example is Example & { request: Request } {
	const r = example.request as Partial<Request> | null;
	if (typeof r !== "object" || r === null || Array.isArray(r) || r.id === undefined || r.id === null) return false;
	if (!CLIENT_METHODS.includes(r.method as ClientMethod)) return false;
	if (r.params !== undefined && (typeof r.params !== "object" || Array.isArray(r.params))) return false;
	const params = r.params ?? {};
	if ("q" in params && typeof params.q !== "string") return false;
	if ("slug" in params && typeof params.slug !== "string") return false;
	return Object.keys(params).every((k) => EXPRESSIBLE[r.method as ClientMethod].includes(k));
}

/** What the client hands back for a result: the result itself, except where it keeps only what the plugin reads. */
function decodedAs(method: string, result: Params): unknown {
	if (method === "rpc.discover") return { methods: (result.methods as { name: string }[]).map((m) => m.name) };
	if (method === "health") {
		const { status, caller, vault_size, model, llm_reachable, version, semantic, generation, question_log, default_visibility, time_zone } = result as Params & {
			generation: { hosts: Params[] };
		};
		return {
			status,
			caller,
			vault_size,
			model,
			llm_reachable,
			version,
			semantic: expect.objectContaining(semantic) as unknown,
			hosts: generation.hosts.map((h) => ({ url: h.url ?? null, state: h.state, error: h.error ?? null })),
			question_log: expect.objectContaining(question_log) as unknown,
			default_visibility,
			time_zone,
		};
	}
	return expect.objectContaining(result);
}

describe("shared-protocol", () => {
	it("has examples to check", () => {
		expect(examples.length).toBeGreaterThan(5);
	});

	it("reads rpc-discover.json's result as the document it refers to", () => {
		const discover = examples.find((e) => e.file === "rpc-discover.json");
		expect((discover?.response as { result?: unknown } | undefined)?.result).toEqual(openrpc);
	});

	it("defines every method the client calls", () => {
		const names = openrpc.methods.map((m) => m.name);
		for (const method of CLIENT_METHODS) expect(names).toContain(method);
	});

	const replayed = examples.filter(replayable);

	it("replays at least the search, answer, reload, health and suggest_aliases examples", () => {
		const methods = new Set(replayed.map((e) => e.request.method));
		for (const m of ["search", "answer", "reload", "health", "suggest_aliases", "rpc.discover"]) expect(methods).toContain(m);
	});

	for (const example of replayed) {
		it(`${example.file}: frames the request and decodes the response`, async () => {
			const transport = fakeTransport((_request, body) => {
				const response = { ...(example.response as Params), id: body.id };
				return { status: 200, text: JSON.stringify(response) };
			});
			const unauthorized = JSON.stringify(example.response).includes("-32001");
			const client = new GrasbotClient({ daemonUrl: "http://127.0.0.1:8765", token: unauthorized ? "" : "owner-token", transport });
			const outcome = await invoke[example.request.method as ClientMethod](client, example.request.params ?? {}).then(
				(value) => ({ value }),
				(error: unknown) => ({ error }),
			);

			const sent = JSON.parse(transport.requests[0].body ?? "") as Request;
			const expected = { ...example.request, id: sent.id };
			// The client sends `params: {}` for reload like the example; it leaves params out when the example does.
			expect(sent).toEqual(expected);

			const response = example.response as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
			if (response.error) {
				expect("error" in outcome && outcome.error).toBeInstanceOf(RpcError);
				expect("error" in outcome && outcome.error).toMatchObject({
					code: response.error.code,
					message: response.error.message,
					data: response.error.data,
				});
			} else {
				if ("error" in outcome) throw outcome.error;
				// what the daemon said, decoded (a decoder that returned an empty or partial
				// object passed the truthiness check this was)
				expect(outcome.value).toEqual(decodedAs(example.request.method, response.result as Params));
			}
		});
	}

	it("decodes the answer examples' sources, grounded flag and llm_error", () => {
		const fallback = examples.find((e) => e.file === "answer-llm-fallback.json");
		const result = decodeAnswerResult((fallback?.response as { result: unknown }).result);
		expect(result.model).toBeNull();
		expect(result.llm_error).toContain("Ollama");
		const search = examples.find((e) => e.file === "search.json");
		const decoded = decodeSearchResult((search?.response as { result: unknown }).result);
		expect(decoded.results.map((s) => s.path)).toEqual(["portfolio/jeu-casse-briques.md", "competences/html-css.md", "competences/typescript.md"]);
	});

	it("decodes each source's passages, and none from a daemon that sends none", () => {
		const search = examples.find((e) => e.file === "search.json");
		const raw = (search?.response as { result: { results: Record<string, unknown>[] } }).result;
		const decoded = decodeSearchResult(raw);
		// a short note goes whole: no heading, no anchor, the note's own address
		expect(decoded.results[0].passages[0]).toEqual({ heading: [], anchor: null, url: "/portfolio/jeu-casse-briques", chars: 1626 });
		expect(decoded.results.map((s) => s.passages.length)).toEqual([1, 0, 0]);
		const cut = { ...raw, results: [{ ...raw.results[0], passages: [{ heading: ["Casse-briques", "Collisions"], anchor: "collisions", url: "/x#collisions", chars: 610 }] }] };
		expect(decodeSearchResult(cut).results[0].passages[0].heading).toEqual(["Casse-briques", "Collisions"]);
		const older = { ...raw, results: raw.results.map(({ passages: _passages, ...rest }) => rest) };
		expect(decodeSearchResult(older).results.map((s) => s.passages)).toEqual([[], [], []]);
		const broken = { ...raw, results: [{ ...raw.results[0], passages: [{ heading: "Casse-briques", anchor: null, url: null, chars: 1 }] }] };
		expect(() => decodeSearchResult(broken)).toThrow("`search.results[0].passages[0].heading` devrait être une liste, pas un texte");
	});
});
