/** Plugin settings, their defaults and their checks (no Obsidian here, so they are tested). */

import { type DismissedData, normalizeDismissed } from "./aliasSuggest/suggestions";

export interface GrasbotSettings {
	daemonUrl: string;
	/**
	 * The name of the secret, in Obsidian's keychain (`app.secretStorage`), that holds the
	 * daemon's owner token: never the token itself, so data.json (inside the vault, often
	 * synced or committed) does not carry it.
	 */
	tokenSecret: string;
	reloadOnSave: boolean;
	debounceMs: number;
	/** Alias suggestions the author dismissed: note path → normalized aliases. */
	dismissedAliases: DismissedData;
}

export const DEFAULT_SETTINGS: GrasbotSettings = {
	daemonUrl: "http://127.0.0.1:8765",
	tokenSecret: "",
	reloadOnSave: false,
	debounceMs: 2000,
	dismissedAliases: {},
};

/** The keychain's name for the owner token when the plugin moves it there itself. */
export const DEFAULT_TOKEN_SECRET = "grasbot-owner-token";

/** The owner token an older version (3.1) kept in data.json, to move into the keychain. */
export function legacyToken(raw: unknown): string {
	const token = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>).token : undefined;
	return typeof token === "string" ? token.trim() : "";
}

export const MIN_DEBOUNCE_MS = 250;
export const MAX_DEBOUNCE_MS = 60_000;

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/**
 * An error message, or undefined when the URL is usable. Only loopback addresses are
 * accepted: the plugin talks to the author's own daemon and nothing else.
 */
export function validateDaemonUrl(value: string): string | undefined {
	let url: URL;
	try {
		url = new URL(value.trim());
	} catch {
		return "Enter a URL such as http://127.0.0.1:8765.";
	}
	if (url.protocol !== "http:" && url.protocol !== "https:") return "The URL must start with http:// or https://.";
	if (!LOOPBACK_HOSTS.has(url.hostname)) {
		return "The daemon must run on this computer (127.0.0.1, localhost or [::1]).";
	}
	if (url.search || url.hash) return "Enter the daemon's address only, without a query or a fragment.";
	if (url.username || url.password) return "Enter the daemon's address without a user name or password.";
	// `…/rpc`, as the README's curl example writes it, would be called as `…/rpc/rpc`
	if (url.pathname.replace(/\/+$/, "") !== "") return `Enter the daemon's address only, without ${url.pathname}: the plugin adds /rpc itself.`;
	return undefined;
}

export function validateDebounce(value: number): string | undefined {
	if (!Number.isFinite(value) || value < MIN_DEBOUNCE_MS || value > MAX_DEBOUNCE_MS) {
		return `Enter a delay between ${MIN_DEBOUNCE_MS} and ${MAX_DEBOUNCE_MS} ms.`;
	}
	return undefined;
}

/** Settings from data.json, whatever an older or hand-edited file holds. */
export function normalizeSettings(raw: unknown): GrasbotSettings {
	const data = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
	const settings: GrasbotSettings = { ...DEFAULT_SETTINGS, dismissedAliases: normalizeDismissed(data.dismissedAliases) };
	if (typeof data.daemonUrl === "string" && validateDaemonUrl(data.daemonUrl) === undefined) {
		settings.daemonUrl = data.daemonUrl.trim().replace(/\/+$/, "");
	}
	if (typeof data.tokenSecret === "string") settings.tokenSecret = data.tokenSecret.trim();
	if (typeof data.reloadOnSave === "boolean") settings.reloadOnSave = data.reloadOnSave;
	if (typeof data.debounceMs === "number" && validateDebounce(data.debounceMs) === undefined) {
		settings.debounceMs = Math.round(data.debounceMs);
	}
	return settings;
}
