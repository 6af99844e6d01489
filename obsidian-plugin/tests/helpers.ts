import type { HttpRequest, HttpResponse, Transport } from "../src/client";
import type { Reason, Source } from "../src/protocol";

export interface FakeTransport extends Transport {
	requests: HttpRequest[];
}

/** A transport that records requests and answers with `respond` (which may throw). */
export function fakeTransport(respond: (request: HttpRequest, body: Record<string, unknown>) => HttpResponse | Promise<HttpResponse>): FakeTransport {
	const requests: HttpRequest[] = [];
	const transport = (async (request: HttpRequest) => {
		requests.push(request);
		const body = request.body ? (JSON.parse(request.body) as Record<string, unknown>) : {};
		return respond(request, body);
	}) as FakeTransport;
	transport.requests = requests;
	return transport;
}

/** Answers every call with `result`, echoing the request's id. */
export function resultTransport(result: unknown): FakeTransport {
	return fakeTransport((_request, body) => ({ status: 200, text: JSON.stringify({ jsonrpc: "2.0", id: body.id, result }) }));
}

/** A source as a grounded answer has it: sent whole to the model (one passage), unless `extra` says otherwise. */
export function source(slug: string, score: number, extra: Partial<Source> = {}): Source {
	const reasons: Reason[] = [{ signal: "title", points: score, detail: `titre « ${slug} »` }];
	const passages = [{ heading: [], anchor: null, url: null, chars: 400 }];
	return { slug, title: slug, type: "projet", score, reasons, url: null, path: `${slug}.md`, passages, ...extra };
}

/** A ReadableStream that yields the given text chunks as UTF-8 bytes. */
export function byteStream(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
	const encoder = new TextEncoder();
	let i = 0;
	return new ReadableStream<Uint8Array>({
		pull(controller) {
			if (i >= chunks.length) {
				controller.close();
				return;
			}
			const chunk = chunks[i++];
			controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
		},
	});
}
