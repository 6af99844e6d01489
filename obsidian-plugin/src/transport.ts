/**
 * Adapters from an HTTP function to the client's Transport. Both take the function as an
 * argument, so this module stays free of Obsidian and of globals.
 */

import type { HttpRequest, HttpResponse, Transport } from "./client";

/** The part of Obsidian's `requestUrl` the client needs. */
export type RequestUrlLike = (request: {
	url: string;
	method?: string;
	headers?: Record<string, string>;
	body?: string;
	contentType?: string;
	throw?: boolean;
}) => Promise<{ status: number; text: string }>;

/** requestUrl bypasses CORS and cannot be aborted; the client's timeout still applies. */
export function requestUrlTransport(requestUrl: RequestUrlLike): Transport {
	return async (request: HttpRequest): Promise<HttpResponse> => {
		const { "Content-Type": contentType, ...headers } = request.headers;
		const response = await requestUrl({
			url: request.url,
			method: request.method,
			headers,
			body: request.body,
			contentType,
			throw: false,
		});
		return { status: response.status, text: response.text };
	};
}

/** The part of `fetch` the client and the stream need. */
export type FetchLike = (
	url: string,
	init: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<{
	ok: boolean;
	status: number;
	text(): Promise<string>;
	body: ReadableStream<Uint8Array> | null;
}>;

export function fetchTransport(fetchFn: FetchLike): Transport {
	return async (request: HttpRequest): Promise<HttpResponse> => {
		const response = await fetchFn(request.url, {
			method: request.method,
			headers: request.headers,
			body: request.body,
			signal: request.signal,
		});
		return { status: response.status, text: await response.text() };
	};
}
