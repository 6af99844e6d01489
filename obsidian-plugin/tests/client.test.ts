import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_TIMEOUT_MS, GrasbotClient, SLOW_TIMEOUT_MS } from "../src/client";
import {
	AuthError,
	DaemonNotRunningError,
	HttpError,
	ProtocolError,
	RpcError,
	TimeoutError,
	TokenRefusedError,
	describeFailure,
} from "../src/errors";
import { requestUrlTransport } from "../src/transport";
import { fakeTransport, resultTransport, source } from "./helpers";

const URL = "http://127.0.0.1:8765";
const searchResult = { results: [source("push-swap", 27.4)], grounded: true, vault_size: 41, took_ms: 3.8 };

describe("framing", () => {
	it("posts a JSON-RPC 2.0 request with named params to /rpc", async () => {
		const transport = resultTransport(searchResult);
		const client = new GrasbotClient({ daemonUrl: `${URL}/`, transport });
		const result = await client.search("C'est quoi push swap ?", { topK: 3, audience: "visitor" });

		expect(result.results[0].slug).toBe("push-swap");
		const [request] = transport.requests;
		expect(request.url).toBe(`${URL}/rpc`);
		expect(request.method).toBe("POST");
		expect(request.headers["Content-Type"]).toBe("application/json");
		expect(JSON.parse(request.body ?? "")).toEqual({
			jsonrpc: "2.0",
			id: 1,
			method: "search",
			params: { q: "C'est quoi push swap ?", top_k: 3, audience: "visitor" },
		});
	});

	it("gives each call a new id and leaves out params that were not given", async () => {
		const transport = resultTransport(searchResult);
		const client = new GrasbotClient({ daemonUrl: URL, transport });
		await client.search("a");
		await client.search("b");
		const bodies = transport.requests.map((r) => JSON.parse(r.body ?? "") as Record<string, unknown>);
		expect(bodies.map((b) => b.id)).toEqual([1, 2]);
		expect(bodies[0].params).toEqual({ q: "a" });
	});

	it("sends the owner token on every call when it has one", async () => {
		const transport = fakeTransport((_r, body) => {
			const results: Record<string, unknown> = {
				reload: { vault_size: 3, added: 0, changed: 1, removed: 0, errors: [], took_ms: 1 },
				search: searchResult,
			};
			return { status: 200, text: JSON.stringify({ jsonrpc: "2.0", id: body.id, result: results[body.method as string] }) };
		});
		const client = new GrasbotClient({ daemonUrl: URL, token: " s3cret ", transport });
		await client.reload();
		await client.search("q", { audience: "visitor" });
		await client.search("q", { audience: "owner" });
		const auth = transport.requests.map((r) => r.headers.Authorization);
		expect(auth).toEqual(["Bearer s3cret", "Bearer s3cret", "Bearer s3cret"]);
		const anonymous = new GrasbotClient({ daemonUrl: URL, token: "  ", transport });
		await anonymous.search("q", { audience: "visitor" });
		expect(transport.requests.at(-1)?.headers.Authorization).toBeUndefined();
	});

	it("rejects an answer to another request id", async () => {
		const transport = fakeTransport(() => ({ status: 200, text: JSON.stringify({ jsonrpc: "2.0", id: 99, result: searchResult }) }));
		const client = new GrasbotClient({ daemonUrl: URL, transport });
		await expect(client.search("q")).rejects.toThrow(ProtocolError);
	});

	it("rejects a result of the wrong shape with the field's name", async () => {
		const client = new GrasbotClient({ daemonUrl: URL, transport: resultTransport({ results: [{ slug: 3 }], grounded: true }) });
		await expect(client.search("q")).rejects.toThrow("`search.results[0].slug` devrait être un texte, pas un nombre");
	});
});

describe("errors", () => {
	it("turns a JSON-RPC error into RpcError with its code, message and data, said in French whole", async () => {
		const transport = fakeTransport((_r, body) => ({
			status: 200,
			text: JSON.stringify({ jsonrpc: "2.0", id: body.id, error: { code: -32602, message: "Invalid params", data: "`q` : doit être un texte" } }),
		}));
		const client = new GrasbotClient({ daemonUrl: URL, transport });
		const error = await client.search("q").catch((e: unknown) => e);
		expect(error).toBeInstanceOf(RpcError);
		expect(error).toMatchObject({ code: -32602, message: "Invalid params", data: "`q` : doit être un texte", method: "search" });
		expect(describeFailure(error, URL)).toEqual({
			kind: "daemon-error",
			title: "Erreur du démon GrasBot",
			detail: "`search` : paramètres refusés — `q` : doit être un texte (code -32602)",
		});
		// a code the plugin does not know: the daemon's own message, quoted; no data, nothing after it
		expect(describeFailure(new RpcError("health", -32099, "Server busy"), URL).detail).toBe("`health` : « Server busy » (code -32099)");
	});

	it("says in French that the daemon is older than the plugin, naming the param or method it lacks", async () => {
		// GrasBot 3.1's answers: suggest_aliases without `path`, and a method it never had
		const transport = fakeTransport((_r, body) => ({
			status: 200,
			text: JSON.stringify({
				jsonrpc: "2.0",
				id: body.id,
				error:
					body.method === "suggest_aliases"
						? { code: -32602, message: "Invalid params", data: "1 unknown parameter (expected: limit, slug)" }
						: { code: -32601, message: "Method not found" },
			}),
		}));
		const client = new GrasbotClient({ daemonUrl: URL, token: "tok", transport });
		const noPath = describeFailure(await client.suggestAliases("push-swap", 8, "projets/push-swap.md").catch((e: unknown) => e), URL);
		expect(noPath).toMatchObject({ kind: "outdated", title: "Démon GrasBot plus ancien que le plugin" });
		expect(noPath.detail).toBe(
			`Le démon GrasBot (${URL}) ne connaît pas le paramètre \`path\` de \`suggest_aliases\` : il est plus ancien que ce plugin. Mettez GrasBot à jour sur cette machine (la version du plugin ou une plus récente), puis relancez \`grasbot serve\`.`,
		);
		const noMethod = describeFailure(await client.reload().catch((e: unknown) => e), URL);
		expect(noMethod.kind).toBe("outdated");
		expect(noMethod.detail).toContain("ne connaît pas la méthode `reload` :");
		// a param the daemon does know, refused for its value, is no version skew
		const badValue = describeFailure(new RpcError("search", -32602, "Invalid params", "top_k: 0 is less than the minimum of 1", ["q", "top_k"]), URL);
		expect(badValue.kind).toBe("daemon-error");
		// a daemon that says it in French, older than a later plugin
		const french = new RpcError("suggest_aliases", -32602, "Invalid params", "1 paramètre inconnu (attendus : limit, slug)", ["slug", "limit", "path"]);
		expect(describeFailure(french, URL).detail).toBe(noPath.detail);
		expect(describeFailure(new RpcError("health", -32602, "Invalid params", "1 paramètre inconnu (attendus : aucun)", ["verbose"]), URL).detail).toContain(
			"ne connaît pas le paramètre `verbose` de `health`",
		);
		const frenchValue = new RpcError("search", -32602, "Invalid params", "`top_k` : 0 est inférieur au minimum (1)", ["q", "top_k"]);
		expect(describeFailure(frenchValue, URL).kind).toBe("daemon-error");
	});

	it("reads the params a daemon takes from its -32602's `expected`, whatever its sentence says", () => {
		const data = (expected: string[]) => ({ reason: "paramètre refusé", expected });
		const lacking = describeFailure(new RpcError("suggest_aliases", -32602, "Invalid params", data(["limit", "slug"]), ["slug", "limit", "path"]), URL);
		expect(lacking.kind).toBe("outdated");
		expect(lacking.detail).toContain("ne connaît pas le paramètre `path` de `suggest_aliases`");
		const none = describeFailure(new RpcError("health", -32602, "Invalid params", data([]), ["verbose"]), URL);
		expect(none.detail).toContain("ne connaît pas le paramètre `verbose` de `health`");
		// every param sent is one it takes: no version skew, and its sentence is shown
		const known = describeFailure(new RpcError("search", -32602, "Invalid params", data(["audience", "q", "top_k"]), ["q", "top_k"]), URL);
		expect(known).toEqual({ kind: "daemon-error", title: "Erreur du démon GrasBot", detail: "`search` : paramètres refusés — paramètre refusé (code -32602)" });
		// a sentence that reads like one, with no field: only an older daemon's bare string is read
		const reworded = { reason: "1 paramètre inconnu (attendus : limit, slug)" };
		expect(describeFailure(new RpcError("suggest_aliases", -32602, "Invalid params", reworded, ["slug", "path"]), URL).kind).toBe("daemon-error");
	});

	it("shows a -32602's sentence from its `data.reason` when the daemon says its limit in fields", () => {
		const data = { reason: "`q` : doit compter au plus 300 caractères (longueur reçue : 420)", param: "q", max_question: 300 };
		expect(describeFailure(new RpcError("answer", -32602, "Invalid params", data, ["q"]), URL).detail).toBe(
			"`answer` : paramètres refusés — `q` : doit compter au plus 300 caractères (longueur reçue : 420) (code -32602)",
		);
	});

	it("says in French that the daemon's answer is not what this plugin reads, with what to do, rather than « Unexpected daemon response »", async () => {
		// another version's health: a field of another type
		const client = new GrasbotClient({ daemonUrl: URL, transport: resultTransport({ status: "ok", vault_size: "41" }) });
		const error = await client.health().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ProtocolError);
		const state = describeFailure(error, URL);
		expect(state).toMatchObject({ kind: "mismatch", title: "Réponse du démon illisible" });
		expect(state.detail).toContain(`Le démon GrasBot (${URL}) a répondu à \`health\``);
		expect(state.detail).toContain("pas de la même version");
		expect(state.detail).toContain("grasbot serve");
		expect(state.detail).toContain("le réglage « Adresse du démon »");
		// the decoder's own words stay, for whoever reports it
		expect(state.detail).toContain("vault_size");
		// another server at that address: not JSON-RPC at all
		const other = new GrasbotClient({ daemonUrl: URL, transport: fakeTransport(() => ({ status: 200, text: "<html>Jupyter</html>" })) });
		expect(describeFailure(await other.health().catch((e: unknown) => e), URL).kind).toBe("mismatch");
	});

	it("reports the daemon's Unauthorized error as a token problem", async () => {
		const transport = fakeTransport((_r, body) => ({
			status: 200,
			text: JSON.stringify({ jsonrpc: "2.0", id: body.id, error: { code: -32001, message: "Unauthorized", data: "jeton du propriétaire requis" } }),
		}));
		const error = await new GrasbotClient({ daemonUrl: URL, transport }).reload().catch((e: unknown) => e);
		expect(describeFailure(error, URL).kind).toBe("auth");
	});

	it("says how long to wait when the daemon rate-limits a preview, and that the token lifts the limit", async () => {
		const transport = fakeTransport((_r, body) => ({
			status: 200,
			text: JSON.stringify({ jsonrpc: "2.0", id: body.id, error: { code: -32002, message: "Rate limited", data: { retry_after: 3 } } }),
		}));
		const error = await new GrasbotClient({ daemonUrl: URL, transport }).answer("a").catch((e: unknown) => e);
		const state = describeFailure(error, URL);
		expect(state).toMatchObject({ kind: "daemon-error", title: "Trop de questions" });
		expect(state.detail).toContain("Réessayez dans 3 s.");
		expect(state.detail).toContain("Avec le jeton d'accès du démon réglé dans le plugin, les aperçus ne sont pas limités.");
		const withToken = describeFailure(new RpcError("ask/stream", -32002, "Rate limited", {}), URL, { tokenSet: true });
		expect(withToken.detail).toContain("Réessayez dans un instant.");
		expect(withToken.detail).not.toContain("jeton d'accès");
	});

	it("rounds a wait the daemon gives in part of a second up, and says « un instant » for one it cannot mean", () => {
		const said = (data: unknown) => describeFailure(new RpcError("ask/stream", -32002, "Rate limited", data), URL, { tokenSet: true }).detail;
		expect(said({ retry_after: 2.2 })).toContain("Réessayez dans 3 s.");
		expect(said({ retry_after: -1 })).toContain("Réessayez dans un instant.");
	});

	it("quotes the start of an HTTP error's body, on one line, not a whole page", async () => {
		const page = `<html>\n<body>\n<h1>502 Bad Gateway</h1>\n${"<p>nginx</p>\n".repeat(100)}</body></html>`;
		const transport = fakeTransport(() => ({ status: 502, text: page }));
		const error = await new GrasbotClient({ daemonUrl: URL, transport }).health().catch((e: unknown) => e);
		const quoted = page.replace(/\s+/g, " ").slice(0, 200);
		expect(describeFailure(error, URL).detail).toBe(`Le démon GrasBot a répondu HTTP 502 : ${quoted}…`);
	});

	it("reads a JSON-RPC error even when it comes with an HTTP error status", async () => {
		const transport = fakeTransport((_r, body) => ({
			status: 500,
			text: JSON.stringify({ jsonrpc: "2.0", id: body.id, error: { code: -32603, message: "Internal error" } }),
		}));
		await expect(new GrasbotClient({ daemonUrl: URL, transport }).health()).rejects.toMatchObject({ code: -32603 });
	});

	it("maps HTTP 401 to AuthError", async () => {
		const transport = fakeTransport(() => ({ status: 401, text: "unauthorized" }));
		const error = await new GrasbotClient({ daemonUrl: URL, transport }).reload().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(AuthError);
		expect((error as AuthError).status).toBe(401);
		expect(describeFailure(error, URL).kind).toBe("auth");
	});

	it("maps HTTP 500 with a non-JSON body to HttpError", async () => {
		const transport = fakeTransport(() => ({ status: 500, text: "<h1>Internal Server Error</h1>" }));
		const error = await new GrasbotClient({ daemonUrl: URL, transport }).health().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(HttpError);
		expect(error).not.toBeInstanceOf(AuthError);
		expect((error as HttpError).status).toBe(500);
		expect(describeFailure(error, URL).kind).toBe("daemon-error");
	});

	it("maps a network failure to 'daemon not running' and says how to start it", async () => {
		const transport = fakeTransport(() => {
			throw new Error("net::ERR_CONNECTION_REFUSED");
		});
		const error = await new GrasbotClient({ daemonUrl: URL, transport }).health().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(DaemonNotRunningError);
		const state = describeFailure(error, URL);
		expect(state.kind).toBe("not-running");
		expect(state.detail).toContain("grasbot serve");
		expect(state.detail).toContain(`${URL} (net::ERR_CONNECTION_REFUSED)`); // a TLS error or a blocked port reads otherwise
	});

	it("sends nothing, the token least of all, to a daemon URL the settings refuse, and says so in French", async () => {
		const send = vi.fn();
		for (const daemonUrl of ["http://127.0.0.1:9000/rpc", "http://192.168.1.10:8765", ""]) {
			const error = await new GrasbotClient({ daemonUrl, transport: fakeTransport(send), token: "owner-token" }).health().catch((e: unknown) => e);
			expect(describeFailure(error, daemonUrl)).toMatchObject({ kind: "settings", title: "Adresse du démon refusée" });
		}
		expect(send).not.toHaveBeenCalled();
	});

	it("refuses a token with a space or an invisible character before sending anything", async () => {
		const send = vi.fn();
		const error = await new GrasbotClient({ daemonUrl: URL, transport: fakeTransport(send), token: "s3cret\u200b-0123456789" })
			.reload()
			.catch((e: unknown) => e);
		expect(send).not.toHaveBeenCalled();
		const state = describeFailure(error, URL);
		expect(state).toMatchObject({ kind: "auth", title: "Jeton d'accès inutilisable" });
		expect(state.detail).not.toContain("s3cret");
	});

	it("checks before a preview that the token set is the daemon's, and asks nothing without one", async () => {
		const answering = (caller: string | undefined) =>
			fakeTransport((_r, body) => ({
				status: 200,
				text: JSON.stringify({ jsonrpc: "2.0", id: body.id, result: { status: "ok", vault_size: 3, model: null, llm_reachable: false, version: "3.2.0", caller } }),
			}));
		const none = answering("visitor");
		await new GrasbotClient({ daemonUrl: URL, transport: none }).checkToken();
		expect(none.requests).toHaveLength(0); // as before: no token, no question to hold back
		await new GrasbotClient({ daemonUrl: URL, transport: answering("owner"), token: "tok" }).checkToken();
		await new GrasbotClient({ daemonUrl: URL, transport: answering(undefined), token: "tok" }).checkToken(); // an older daemon cannot say
		const refused = answering("token_refused");
		const error = await new GrasbotClient({ daemonUrl: URL, transport: refused, token: "an-old-token" }).checkToken().catch((e: unknown) => e);
		expect(refused.requests.map((r) => [(JSON.parse(r.body ?? "") as { method: string }).method, r.headers.Authorization])).toEqual([["health", "Bearer an-old-token"]]);
		expect(error).toBeInstanceOf(TokenRefusedError);
		const state = describeFailure(error, URL);
		expect(state).toMatchObject({ kind: "auth", title: "Jeton d'accès refusé par le démon" });
		expect(state.detail).toContain(`n'est pas celui du démon GrasBot (${URL})`);
		expect(state.detail).toContain("~/.config/grasbot/token");
		expect(state.detail).not.toContain("an-old-token");
		// sent, but the daemon saw none: something between them took the header off
		const stripped = await new GrasbotClient({ daemonUrl: URL, transport: answering("visitor"), token: "tok" }).checkToken().catch((e: unknown) => e);
		expect(describeFailure(stripped, URL)).toMatchObject({ kind: "auth", title: "Jeton d'accès non reçu par le démon" });
		expect(describeFailure(stripped, URL).detail).toContain("Authorization");
	});

	describe("timeout", () => {
		afterEach(() => {
			vi.useRealTimers();
		});

		it("gives up after timeoutMs and aborts the request", async () => {
			vi.useFakeTimers();
			let signal: AbortSignal | undefined;
			const transport = fakeTransport(
				(request) =>
					new Promise((_resolve, reject) => {
						signal = request.signal;
						request.signal?.addEventListener("abort", () => reject(new Error("aborted")));
					}),
			);
			const client = new GrasbotClient({ daemonUrl: URL, transport, timeoutMs: 5000 });
			const pending = client.answer("q").catch((e: unknown) => e);
			await vi.advanceTimersByTimeAsync(5000);
			const error = await pending;
			expect(error).toBeInstanceOf(TimeoutError);
			expect(signal?.aborted).toBe(true);
			expect(describeFailure(error, URL).kind).toBe("timeout");
		});

		it("waits as long as the daemon may take for an answer or a reload, not the 30 s of a search", async () => {
			vi.useFakeTimers();
			const hanging = fakeTransport(() => new Promise(() => undefined));
			const client = new GrasbotClient({ daemonUrl: URL, transport: hanging });
			const outcomes = { answer: "pending", reload: "pending", search: "pending" };
			void client.answer("q").catch(() => (outcomes.answer = "timed out"));
			void client.reload().catch(() => (outcomes.reload = "timed out"));
			void client.search("q").catch(() => (outcomes.search = "timed out"));
			await vi.advanceTimersByTimeAsync(DEFAULT_TIMEOUT_MS);
			expect(outcomes).toEqual({ answer: "pending", reload: "pending", search: "timed out" });
			await vi.advanceTimersByTimeAsync(SLOW_TIMEOUT_MS - DEFAULT_TIMEOUT_MS);
			expect(outcomes).toEqual({ answer: "timed out", reload: "timed out", search: "timed out" });
			expect(SLOW_TIMEOUT_MS).toBeGreaterThanOrEqual((20 + 90) * 1000); // LLM_MAX_WAIT + LLM_DEADLINE
		});

		it("does not time out a call that answers in time", async () => {
			vi.useFakeTimers();
			const transport = fakeTransport(
				(_r, body) =>
					new Promise((resolve) => {
						window.setTimeout(() => resolve({ status: 200, text: JSON.stringify({ jsonrpc: "2.0", id: body.id, result: searchResult }) }), 4000);
					}),
			);
			const client = new GrasbotClient({ daemonUrl: URL, transport, timeoutMs: 5000 });
			const pending = client.search("q");
			await vi.advanceTimersByTimeAsync(4000);
			await expect(pending).resolves.toMatchObject({ grounded: true });
		});
	});
});

describe("transports", () => {
	it("requestUrlTransport passes contentType apart and never lets requestUrl throw on status", async () => {
		const calls: Record<string, unknown>[] = [];
		const transport = requestUrlTransport(async (request) => {
			calls.push(request);
			return { status: 401, text: "no" };
		});
		const response = await transport({ url: `${URL}/rpc`, method: "POST", headers: { "Content-Type": "application/json", Authorization: "Bearer t" }, body: "{}" });
		expect(response).toEqual({ status: 401, text: "no" });
		expect(calls[0]).toMatchObject({ contentType: "application/json", headers: { Authorization: "Bearer t" }, throw: false });
	});
});
