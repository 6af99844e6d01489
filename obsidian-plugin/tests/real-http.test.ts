// The client and the stream over real HTTP against a small server on 127.0.0.1 port 0, so
// framing, status codes and chunked SSE are not only checked on fakes. The fetch is the DOM
// environment's (happy-dom), which, like Obsidian's renderer, applies CORS: the server
// answers the preflight the way the daemon must for the origin app://obsidian.md.
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GrasbotClient } from "../src/client";
import { AuthError, DaemonNotRunningError } from "../src/errors";
import { streamAnswer } from "../src/sse";
import { fetchTransport } from "../src/transport";
import { source } from "./helpers";

const fetch = window.fetch.bind(window);

let server: Server;
let base = "";
const seen: { auth: string | undefined; body: string }[] = [];

beforeAll(async () => {
	server = createServer((req, res) => {
		res.setHeader("Access-Control-Allow-Origin", req.headers.origin ?? "*");
		res.setHeader("Access-Control-Allow-Headers", "Content-Type, Authorization, Accept");
		res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
		if (req.method === "OPTIONS") {
			res.writeHead(204).end();
			return;
		}
		let body = "";
		req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
		req.on("end", () => {
			seen.push({ auth: req.headers.authorization, body });
			if (req.url === "/rpc" && req.method === "POST") {
				const call = JSON.parse(body) as { id: number; method: string };
				if (call.method === "reload" && req.headers.authorization !== "Bearer good") {
					res.writeHead(401, { "Content-Type": "text/plain" }).end("owner token required");
					return;
				}
				const result = call.method === "health"
					? { status: "ok", vault_size: 2, model: null, llm_reachable: false, version: "3.2.0" }
					: { vault_size: 2, added: 0, changed: 0, removed: 0, errors: [], took_ms: 1 };
				res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result }));
				return;
			}
			if (req.url?.startsWith("/ask/stream")) {
				const q = new URL(req.url, "http://x").searchParams.get("q");
				res.writeHead(200, { "Content-Type": "text/event-stream" });
				const s = source("push-swap", 12);
				const done = { response: `Réponse à ${q}`, sources: [s], grounded: true, model: "m", vault_size: 2 };
				const text = `: keepalive\n\nevent: sources\ndata: ${JSON.stringify({ sources: [s], grounded: true })}\n\nevent: token\ndata: {"text":"Répo"}\n\nevent: done\ndata: ${JSON.stringify(done)}\n\n`;
				const bytes = Buffer.from(text, "utf8");
				// Byte by byte for the first part, so a multi-byte character is cut in two.
				let i = 0;
				const step = () => {
					if (i >= bytes.length) return void res.end();
					const n = i < 200 ? 1 : 64;
					res.write(bytes.subarray(i, i + n));
					i += n;
					setImmediate(step);
				};
				step();
				return;
			}
			res.writeHead(404).end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
	server.closeAllConnections();
	await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("over real HTTP", () => {
	it("calls health and reload, with the token on both", async () => {
		const client = new GrasbotClient({ daemonUrl: base, token: "good", transport: fetchTransport(fetch) });
		expect((await client.health()).version).toBe("3.2.0");
		expect((await client.reload()).vault_size).toBe(2);
		expect(seen.slice(-2).map((s) => s.auth)).toEqual(["Bearer good", "Bearer good"]);
	});

	it("maps a real 401 to AuthError", async () => {
		const client = new GrasbotClient({ daemonUrl: base, token: "bad", transport: fetchTransport(fetch) });
		await expect(client.reload()).rejects.toBeInstanceOf(AuthError);
	});

	it("streams an answer cut at every byte", async () => {
		const tokens: string[] = [];
		let sources = 0;
		const result = await streamAnswer(
			"push swap ?",
			{ onToken: (t) => tokens.push(t), onSources: (s) => (sources = s.length) },
			{ daemonUrl: base, fetch },
		);
		expect(tokens).toEqual(["Répo"]);
		expect(sources).toBe(1);
		expect(result.response).toBe("Réponse à push swap ?");
	});

	it("reports 'daemon not running' on a closed port", async () => {
		const closed = createServer();
		await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
		const port = (closed.address() as AddressInfo).port;
		await new Promise<void>((resolve) => closed.close(() => resolve()));
		const url = `http://127.0.0.1:${port}`;
		const client = new GrasbotClient({ daemonUrl: url, transport: fetchTransport(fetch) });
		await expect(client.health()).rejects.toBeInstanceOf(DaemonNotRunningError);
		await expect(streamAnswer("q", {}, { daemonUrl: url, fetch })).rejects.toBeInstanceOf(DaemonNotRunningError);
	});
});
