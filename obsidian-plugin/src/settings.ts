/** Plugin settings, their defaults and their checks (no Obsidian here, so they are tested). */

import { type DismissedData, normalizeDismissed, unreadDismissed, unreadDismissedReason } from "./aliasSuggest/suggestions";
import { DaemonUrlError } from "./errors";
import { LEGACY_TOKEN_CHOICE, REFUSED_REASONS, SETTING_NAMES, URL_PROBLEMS, debounceProblem, legacyTokenFound, refusedMeanwhile, refusedSettingNote as noteOfRefused, refusedSettingsNotice as noticeOfRefused } from "./messages";
import type { Caller } from "./protocol";

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

/**
 * The keychain's name for an older data.json's token when the secret it would go to already
 * holds another (`grasbot-owner-token-3-1`, then `-2`, …): a token pasted under 3.1 on a synced
 * machine may be the newer one, and neither is dropped. A name already holding this token is reused.
 */
export function legacySecretName(name: string, token: string, secretOf: (id: string) => string | null): string {
	for (let n = 1; ; n++) {
		const id = n === 1 ? `${name}-3-1` : `${name}-3-1-${n}`;
		const held = (secretOf(id) ?? "").trim();
		if (held === "" || held === token) return id;
	}
}

/** Which of two tokens the plugin uses, and what the author is told of the other. */
export interface LegacyTokenChoice {
	/** The secret the « Jeton d'accès » setting names from now on. */
	secret: string;
	message: string;
}

/**
 * An older data.json and the keychain held two tokens: the one the daemon takes as its owner's
 * (health's `caller`, null when it could not be asked) is used, the keychain's when the daemon
 * does not tell; the other stays in its secret, and the author is told where.
 */
export function chooseLegacyToken(
	secrets: { current: string; legacy: string },
	callers: { current: Caller | null; legacy: Caller | null },
	daemonUrl: string,
): LegacyTokenChoice {
	const found = legacyTokenFound(secrets.current, secrets.legacy);
	const { current, legacy } = secrets;
	if (callers.legacy === "owner" && callers.current !== "owner") {
		return { secret: legacy, message: `${found} ${LEGACY_TOKEN_CHOICE.legacy(current, legacy, daemonUrl)}` };
	}
	if (callers.current === "owner") return { secret: current, message: `${found} ${LEGACY_TOKEN_CHOICE.current(current, legacy, daemonUrl)}` };
	return { secret: current, message: `${found} ${LEGACY_TOKEN_CHOICE.neither(current, legacy, daemonUrl)}` };
}

export const MIN_DEBOUNCE_MS = 250;
export const MAX_DEBOUNCE_MS = 60_000;

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/** What is wrong with a daemon URL: under the settings tab's field, and inside a sentence. */
interface UrlProblem {
	field: string;
	reason: string;
}

/** Only loopback addresses: the plugin talks to the author's own daemon and nothing else. */
function daemonUrlProblem(value: string): UrlProblem | undefined {
	let url: URL;
	try {
		url = new URL(value.trim());
	} catch {
		return URL_PROBLEMS.notUrl;
	}
	if (url.protocol !== "http:" && url.protocol !== "https:") return URL_PROBLEMS.scheme;
	if (!LOOPBACK_HOSTS.has(url.hostname)) return URL_PROBLEMS.notLocal;
	if (url.search || url.hash) return URL_PROBLEMS.query;
	if (url.username || url.password) return URL_PROBLEMS.credentials;
	// `…/rpc`, as the README's curl example writes it, would be called as `…/rpc/rpc`
	if (url.pathname.replace(/\/+$/, "") !== "") return URL_PROBLEMS.path(url.pathname);
	return undefined;
}

/** An error message for the settings tab, or undefined when the URL is usable. */
export function validateDaemonUrl(value: string): string | undefined {
	return daemonUrlProblem(value)?.field;
}

/**
 * The daemon URL as a request may use it, or a DaemonUrlError before anything is sent: a
 * data.json edited by hand keeps a URL this version refuses, and the token must not go to
 * an address the author did not choose (the default's may be another vault's daemon).
 */
export function usableDaemonUrl(value: string): string {
	const problem = daemonUrlProblem(value);
	if (problem) throw new DaemonUrlError(value, problem.reason);
	return value;
}

export function validateDebounce(value: unknown): string | undefined {
	if (typeof value !== "number" || !Number.isFinite(value) || value < MIN_DEBOUNCE_MS || value > MAX_DEBOUNCE_MS) {
		return debounceProblem(MIN_DEBOUNCE_MS, MAX_DEBOUNCE_MS);
	}
	return undefined;
}

/**
 * What data.json holds that this version does not read: a newer plugin's settings, written on
 * another machine that shares the vault (sync, git), are saved again as they were, not dropped
 * at this one's next save. Never an older version's `token`, which goes to the keychain.
 */
export function unknownSettings(raw: unknown): Record<string, unknown> {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return {};
	return Object.fromEntries(Object.entries(raw).filter(([key]) => key !== "token" && !(key in DEFAULT_SETTINGS)));
}

/** A value data.json holds that this version refuses: kept there as written, and said. */
export interface RefusedSetting {
	key: keyof GrasbotSettings;
	written: unknown;
	/** Why, in French, and what the plugin does meanwhile. */
	reason: string;
}

/**
 * The settings data.json holds with a value this version does not take (written by hand, or
 * by a newer plugin on another machine): each is kept in data.json as written, never saved
 * over with the default, and the author is told which, why and what applies meanwhile. Of
 * `dismissedAliases`, what can be read applies, and the rest is kept (`dismissedToSave`).
 */
export function refusedSettings(raw: unknown): RefusedSetting[] {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return [];
	const data = raw as Record<string, unknown>;
	const refused: RefusedSetting[] = [];
	const refuse = (key: keyof GrasbotSettings, reason: string) => refused.push({ key, written: data[key], reason });
	if ("daemonUrl" in data) {
		const reason = typeof data.daemonUrl === "string" ? daemonUrlProblem(data.daemonUrl)?.reason : REFUSED_REASONS.notText;
		if (reason !== undefined) refuse("daemonUrl", REFUSED_REASONS.daemonUrl(reason));
	}
	if ("tokenSecret" in data && typeof data.tokenSecret !== "string") {
		refuse("tokenSecret", REFUSED_REASONS.tokenSecret);
	}
	if ("reloadOnSave" in data && typeof data.reloadOnSave !== "boolean") {
		refuse("reloadOnSave", REFUSED_REASONS.reloadOnSave);
	}
	if ("debounceMs" in data && (typeof data.debounceMs !== "number" || validateDebounce(data.debounceMs) !== undefined)) {
		refuse("debounceMs", REFUSED_REASONS.debounceMs(MIN_DEBOUNCE_MS, MAX_DEBOUNCE_MS, DEFAULT_SETTINGS.debounceMs));
	}
	const unread = unreadDismissed(data.dismissedAliases);
	if (unread !== null) refused.push({ key: "dismissedAliases", written: "whole" in unread ? unread.whole : unread.entries, reason: unreadDismissedReason(unread) });
	return refused;
}

/**
 * What the settings tab says of a control whose value in data.json is refused (`refused`: key →
 * value as written), so the author sees what is written and what to fix; "" when not refused.
 */
export function refusedSettingNote(key: keyof GrasbotSettings, refused: Readonly<Record<string, unknown>>): string {
	if (!(key in refused)) return "";
	const written = JSON.stringify(refused[key]) ?? String(refused[key]);
	return noteOfRefused(written, refusedMeanwhile(key, DEFAULT_SETTINGS.debounceMs));
}

/**
 * The value a settings control shows: the one data.json holds as written when it is refused
 * and a text or number field can show it, the one that applies otherwise (a toggle shows what
 * applies: « yes » drawn on would say reload on save runs). The default shown for a refused
 * Reload delay looked as if it were written, and hid what to fix.
 */
export function shownSetting(key: keyof GrasbotSettings, settings: GrasbotSettings, refused: Readonly<Record<string, unknown>>): unknown {
	const written = refused[key];
	const field = typeof DEFAULT_SETTINGS[key] === "string" || typeof DEFAULT_SETTINGS[key] === "number";
	return field && key in refused && (typeof written === "string" || typeof written === "number") ? written : settings[key];
}

/** The notice that names the refused settings. */
export function refusedSettingsNotice(refused: RefusedSetting[]): string {
	return noticeOfRefused(refused.map(({ key, written, reason }) => ({ name: SETTING_NAMES[key], key, written: JSON.stringify(written) ?? String(written), reason })));
}

/**
 * Settings from data.json, whatever an older or hand-edited file holds. A daemon URL this
 * version refuses is kept as written (`usableDaemonUrl` then stops every request), not
 * replaced by the default, which may be another vault's daemon.
 */
export function normalizeSettings(raw: unknown): GrasbotSettings {
	const data = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
	const settings: GrasbotSettings = { ...DEFAULT_SETTINGS, dismissedAliases: normalizeDismissed(data.dismissedAliases) };
	if (typeof data.daemonUrl === "string") {
		settings.daemonUrl = validateDaemonUrl(data.daemonUrl) === undefined ? data.daemonUrl.trim().replace(/\/+$/, "") : data.daemonUrl;
	} else if ("daemonUrl" in data) settings.daemonUrl = "";
	if (typeof data.tokenSecret === "string") settings.tokenSecret = data.tokenSecret.trim();
	if (typeof data.reloadOnSave === "boolean") settings.reloadOnSave = data.reloadOnSave;
	if (typeof data.debounceMs === "number" && validateDebounce(data.debounceMs) === undefined) {
		settings.debounceMs = Math.round(data.debounceMs);
	}
	return settings;
}
