import { describe, expect, it } from "vitest";
import { DaemonUrlError } from "../src/errors";
import {
	DEFAULT_SETTINGS,
	chooseLegacyToken,
	legacySecretName,
	legacyToken,
	normalizeSettings,
	refusedSettings,
	refusedSettingNote,
	refusedSettingsNotice,
	shownSetting,
	usableDaemonUrl,
	validateDaemonUrl,
	validateDebounce,
} from "../src/settings";

describe("settings", () => {
	it("defaults to the daemon on 127.0.0.1:8765 with reload on save off", () => {
		expect(normalizeSettings(null)).toEqual(DEFAULT_SETTINGS);
		expect(DEFAULT_SETTINGS.daemonUrl).toBe("http://127.0.0.1:8765");
		expect(DEFAULT_SETTINGS.reloadOnSave).toBe(false);
	});

	it("accepts loopback URLs only", () => {
		expect(validateDaemonUrl("http://127.0.0.1:8765")).toBeUndefined();
		expect(validateDaemonUrl("http://localhost:8765/")).toBeUndefined();
		expect(validateDaemonUrl("http://[::1]:8765")).toBeUndefined();
		expect(validateDaemonUrl("http://192.168.1.10:8765")).toContain("sur cet ordinateur");
		expect(validateDaemonUrl("https://example.com")).toContain("sur cet ordinateur");
		expect(validateDaemonUrl("ftp://127.0.0.1")).toContain("http://");
		expect(validateDaemonUrl("127.0.0.1:8765")).toBeDefined();
		expect(validateDaemonUrl("http://127.0.0.1:8765/?q=1")).toBeDefined();
	});

	it("refuses a path, which the plugin would call with /rpc after it, and credentials in the URL", () => {
		expect(validateDaemonUrl("http://127.0.0.1:8765/rpc")).toBe("Saisissez l'adresse du démon seule, sans /rpc : le plugin ajoute /rpc lui-même.");
		expect(validateDaemonUrl("http://user:pw@localhost:8765")).toBe("Saisissez l'adresse du démon seule, sans nom d'utilisateur ni mot de passe.");
	});

	it("keeps a daemon URL it refuses as written, never the default's, and no request may use it", () => {
		// the default may be another vault's daemon: the token must not go there
		expect(normalizeSettings({ daemonUrl: "http://127.0.0.1:9000/rpc" }).daemonUrl).toBe("http://127.0.0.1:9000/rpc");
		expect(normalizeSettings({ daemonUrl: 9000 }).daemonUrl).toBe("");
		expect(normalizeSettings({ daemonUrl: " http://localhost:9000/ " }).daemonUrl).toBe("http://localhost:9000");
		expect(usableDaemonUrl("http://localhost:9000")).toBe("http://localhost:9000");
		expect(() => usableDaemonUrl("http://127.0.0.1:9000/rpc")).toThrow(DaemonUrlError);
		expect(() => usableDaemonUrl("http://127.0.0.1:9000/rpc")).toThrow(
			"Le réglage « Adresse du démon » du plugin (« http://127.0.0.1:9000/rpc ») est refusé : l'adresse du démon seule, sans /rpc : le plugin ajoute /rpc lui-même. Aucune requête n'est envoyée au démon, ni le jeton d'accès, tant qu'il n'est pas corrigé dans les réglages du plugin.",
		);
		expect(() => usableDaemonUrl("")).toThrow(DaemonUrlError);
	});

	it("names each setting data.json holds with a value it refuses, as written, and says why in French", () => {
		const data = { daemonUrl: "http://192.168.1.10:8765", debounceMs: 999_999, reloadOnSave: "yes", tokenSecret: "grasbot-laptop", later: 1 };
		const refused = refusedSettings(data);
		expect(refused.map(({ key, written }) => [key, written])).toEqual([
			["daemonUrl", "http://192.168.1.10:8765"],
			["reloadOnSave", "yes"],
			["debounceMs", 999_999],
		]);
		expect(refusedSettingsNotice(refused).split("\n")).toEqual([
			"GrasBot : le data.json du plugin contient des réglages que cette version refuse. Ils y restent tels quels jusqu'à ce que vous les changiez dans les réglages du plugin.",
			'• Adresse du démon (daemonUrl : "http://192.168.1.10:8765") : le démon doit tourner sur cet ordinateur (127.0.0.1, localhost ou [::1]) ; aucune requête n\'est envoyée au démon, ni le jeton d\'accès, tant qu\'elle n\'est pas corrigée.',
			'• Recharger à l\'enregistrement (reloadOnSave : "yes") : true ou false attendu ; le rechargement à l\'enregistrement reste désactivé.',
			"• Délai de rechargement (debounceMs : 999999) : un délai entre 250 et 60000 ms attendu ; 2000 ms s'appliquent en attendant.",
		]);
		expect(refusedSettings({ ...DEFAULT_SETTINGS, daemonUrl: "http://localhost:9000/" })).toEqual([]);
		expect(refusedSettings(null)).toEqual([]);
		expect(refusedSettings({ tokenSecret: null, debounceMs: "3000" }).map((r) => r.key)).toEqual(["tokenSecret", "debounceMs"]);
	});

	it("shows a refused value as data.json holds it, and says what applies meanwhile", () => {
		const settings = normalizeSettings({ debounceMs: 999_999, reloadOnSave: "yes" });
		const refused = { debounceMs: 999_999, reloadOnSave: "yes" };
		expect(shownSetting("debounceMs", settings, refused)).toBe(999_999);
		expect(shownSetting("debounceMs", settings, {})).toBe(2000);
		expect(shownSetting("reloadOnSave", settings, refused)).toBe(false); // a toggle shows what applies
		expect(shownSetting("daemonUrl", settings, refused)).toBe("http://127.0.0.1:8765");
		expect(shownSetting("debounceMs", settings, { debounceMs: null })).toBe(2000); // nothing a number field can show
		expect(refusedSettingNote("debounceMs", refused)).toBe(" Le data.json du plugin contient 999999, que cette version refuse : 2000 ms s'appliquent tant qu'aucun délai n'est réglé.");
		expect(refusedSettingNote("reloadOnSave", refused)).toBe(' Le data.json du plugin contient "yes", que cette version refuse : le rechargement à l\'enregistrement reste désactivé tant qu\'il n\'est pas réglé.');
		expect(refusedSettingNote("daemonUrl", refused)).toBe("");
		expect(validateDebounce("3000")).toBeDefined();
	});

	it("bounds the debounce delay", () => {
		expect(validateDebounce(2000)).toBeUndefined();
		expect(validateDebounce(10)).toBeDefined();
		expect(validateDebounce(Number.NaN)).toBeDefined();
		expect(normalizeSettings({ debounceMs: 999_999, reloadOnSave: "yes", tokenSecret: " t " })).toEqual({ ...DEFAULT_SETTINGS, tokenSecret: "t" });
	});

	it("never keeps the owner token itself: an older data.json's is read only to move it", () => {
		expect(normalizeSettings({ token: " owner-token " })).toEqual(DEFAULT_SETTINGS);
		expect(legacyToken({ token: " owner-token " })).toBe("owner-token");
		expect(legacyToken({ tokenSecret: "grasbot-owner-token" })).toBe("");
		expect(legacyToken(null)).toBe("");
	});

	it("keeps an older data.json's token under a name of its own when the keychain holds another", () => {
		const keychain: Record<string, string> = { "grasbot-owner-token-3-1": "other", "grasbot-owner-token-3-1-2": " mine " };
		const of = (id: string) => keychain[id] ?? null;
		expect(legacySecretName("grasbot-owner-token", "fresh", of)).toBe("grasbot-owner-token-3-1-3");
		expect(legacySecretName("grasbot-owner-token", "mine", of)).toBe("grasbot-owner-token-3-1-2");
		expect(legacySecretName("grasbot-laptop", "fresh", of)).toBe("grasbot-laptop-3-1");
	});

	it("uses the token the daemon takes as its owner's, the keychain's when it does not say", () => {
		const secrets = { current: "a", legacy: "a-3-1" };
		const url = "http://127.0.0.1:8765";
		expect(chooseLegacyToken(secrets, { current: "token_refused", legacy: "owner" }, url).secret).toBe("a-3-1");
		expect(chooseLegacyToken(secrets, { current: "owner", legacy: "token_refused" }, url).secret).toBe("a");
		expect(chooseLegacyToken(secrets, { current: null, legacy: null }, url).secret).toBe("a");
		expect(chooseLegacyToken(secrets, { current: "owner", legacy: "owner" }, url).secret).toBe("a");
	});
});
