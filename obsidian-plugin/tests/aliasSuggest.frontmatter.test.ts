// The pure parts of the alias suggestions: reading `aliases` from the raw frontmatter, adding
// one the way processFrontMatter would, which suggestions are shown, the dismissed list.
import { describe, expect, it } from "vitest";
import { addAlias, locateAliases, normalizeAlias, writeAliases } from "../src/aliasSuggest/frontmatter";
import {
	dismissedKey,
	DismissedAliases,
	UNREAD_DISMISSED_KEY,
	dismissedToSave,
	hoverText,
	normalizeDismissed,
	unreadDismissed,
	unreadDismissedReason,
	visibleSuggestions,
} from "../src/aliasSuggest/suggestions";
import type { AliasSuggestion } from "../src/protocol";
import { normalizeSettings } from "../src/settings";

const s = (alias: string, source = "link_text", evidence: string[] = []): AliasSuggestion => ({ alias, source, evidence, score: 0.5 });

describe("locateAliases", () => {
	it("reads a block list and ends it at the next key", () => {
		const text = "---\ntitle: Push swap\naliases:\n  - tri\n  - 'deux piles' # le nom du sujet\n\n  - \"push_swap\"\ntags: [c]\n---\nCorps\n";
		const where = locateAliases(text);
		expect(where.kind).toBe("block");
		expect(where.values).toEqual(["tri", "deux piles", "push_swap"]);
		expect(text.slice(where.from, where.keyLineEnd)).toBe("aliases:");
		expect(text.slice(where.from, where.to)).toBe("aliases:\n  - tri\n  - 'deux piles' # le nom du sujet\n\n  - \"push_swap\"");
	});

	it("reads a block list written at column 0", () => {
		const where = locateAliases("---\naliases:\n- a\n- b\n---\n");
		expect(where).toMatchObject({ kind: "block", values: ["a", "b"] });
	});

	it("reads a flow list, on one line or several", () => {
		expect(locateAliases("---\naliases: [a, \"b, c\", 'd']\n---\n")).toMatchObject({ kind: "flow", values: ["a", "b, c", "d"] });
		const text = "---\naliases: [un,\n  deux]\nslug: x\n---\n";
		const where = locateAliases(text);
		expect(where).toMatchObject({ kind: "flow", values: ["un", "deux"] });
		expect(text.slice(where.from, where.to)).toBe("aliases: [un,\n  deux]");
	});

	it("reads a single string, an empty key, a missing key and no frontmatter", () => {
		expect(locateAliases("---\naliases: moteur de recherche\n---\n")).toMatchObject({ kind: "scalar", values: ["moteur de recherche"] });
		expect(locateAliases("---\naliases:\ntitle: x\n---\n")).toMatchObject({ kind: "empty", values: [] });
		expect(locateAliases("---\naliases: ~\n---\n")).toMatchObject({ kind: "empty", values: [] });
		const missing = "---\ntitle: x\n---\nbody";
		expect(locateAliases(missing)).toMatchObject({ kind: "missing", closingFence: missing.indexOf("---\nbody") });
		expect(locateAliases("# No frontmatter\naliases: a\n")).toMatchObject({ kind: "none", values: [] });
		expect(locateAliases("---\naliases: a\nno closing fence\n")).toMatchObject({ kind: "none" });
	});

	it("reads no frontmatter closed by `...`, as Obsidian and the daemon read none", () => {
		// chips offered aliases Obsidian did not have, drawn under a block it shows as text
		expect(locateAliases("---\naliases: [Tian]\n...\nLe corps.\n")).toMatchObject({ kind: "none", values: [] });
		const later = "---\naliases: [Tian]\n...\n---\nLe corps.\n";
		expect(locateAliases(later)).toMatchObject({ kind: "flow", closingFence: later.indexOf("---\nLe corps") });
	});

	it("does not take a nested key or a longer key for `aliases`", () => {
		expect(locateAliases("---\nmeta:\n  aliases: [x]\naliases_old: y\n---\n").kind).toBe("missing");
	});

	it("reads `Aliases:` in any case, the first one written, and a string's items between commas, as Obsidian does", () => {
		const text = "---\nAliases:\n  - Tian\naliases: [autre]\n---\n";
		const where = locateAliases(text);
		expect(where).toMatchObject({ kind: "block", values: ["Tian"] });
		expect(text.slice(where.from, where.keyLineEnd)).toBe("Aliases:");
		expect(locateAliases("---\nALIASES: Doggo, Woofer\n---\n")).toMatchObject({ kind: "scalar", values: ["Doggo", "Woofer"] });
	});

	it("handles CRLF line ends", () => {
		const where = locateAliases("---\r\naliases:\r\n  - a\r\n---\r\n");
		expect(where).toMatchObject({ kind: "block", values: ["a"] });
	});
});

describe("addAlias (the processFrontMatter callback)", () => {
	it("appends to a list, turns a string into a list, creates the key", () => {
		const list: Record<string, unknown> = { title: "t", aliases: ["a"] };
		expect(addAlias(list, "b")).toBe(true);
		expect(list).toEqual({ title: "t", aliases: ["a", "b"] });
		const scalar: Record<string, unknown> = { aliases: "a" };
		addAlias(scalar, "b");
		expect(scalar.aliases).toEqual(["a", "b"]);
		const none: Record<string, unknown> = { slug: "x" };
		addAlias(none, "b");
		expect(none).toEqual({ slug: "x", aliases: ["b"] });
		const empty: Record<string, unknown> = { aliases: null };
		addAlias(empty, "b");
		expect(empty.aliases).toEqual(["b"]);
	});

	it("writes no empty item back as `- null`: a `-` left alone in the list goes when an alias is added", () => {
		// `aliases:\n  -\n  - a\n` as Obsidian's YAML reads it: the lone dash is a null item
		const dash: Record<string, unknown> = { aliases: [null, "a", ""] };
		expect(addAlias(dash, "b")).toBe(true);
		expect(dash.aliases).toEqual(["a", "b"]);
		const old: Record<string, unknown> = { alias: ["Tian", null], aliases: ["a"] };
		expect(addAlias(old, "b")).toBe(true);
		expect(old).toEqual({ aliases: ["a", "Tian", "b"] });
	});

	it("never adds a duplicate, after normalisation", () => {
		const fm: Record<string, unknown> = { aliases: ["Moteur de recherche"] };
		expect(addAlias(fm, "moteur de  RECHERCHE")).toBe(false);
		expect(addAlias(fm, "  ")).toBe(false);
		expect(fm.aliases).toEqual(["Moteur de recherche"]);
		const scalar: Record<string, unknown> = { aliases: "Données" };
		expect(addAlias(scalar, "donnees")).toBe(false);
		expect(scalar.aliases).toBe("Données");
	});

	it("moves the old singular `alias` key into `aliases`: one key, its aliases read at last", () => {
		const scalar: Record<string, unknown> = { title: "t", alias: "Cuisine du sud" };
		expect(addAlias(scalar, "plats du sud")).toBe(true);
		expect(scalar).toEqual({ title: "t", aliases: ["Cuisine du sud", "plats du sud"] });
		const both: Record<string, unknown> = { alias: ["a", "B"], aliases: ["b"] };
		expect(addAlias(both, "c")).toBe(true);
		expect(both).toEqual({ aliases: ["b", "a", "c"] });
		const same: Record<string, unknown> = { alias: "Cuisine du sud" };
		expect(addAlias(same, "cuisine du Sud")).toBe(true);
		expect(same).toEqual({ aliases: ["Cuisine du sud"] });
		const nested: Record<string, unknown> = { alias: { fr: "x" } }; // not an alias list: left as written
		expect(addAlias(nested, "c")).toBe(true);
		expect(nested).toEqual({ alias: { fr: "x" }, aliases: ["c"] });
	});

	it("adds to the key the note has, whatever its case, and keeps a string's comma-separated aliases apart", () => {
		const capital: Record<string, unknown> = { title: "t", Aliases: ["Cuisine du sud"], tags: ["x"] };
		expect(addAlias(capital, "plats du sud")).toBe(true);
		expect(capital).toEqual({ title: "t", Aliases: ["Cuisine du sud", "plats du sud"], tags: ["x"] });
		expect(Object.keys(capital)).toEqual(["title", "Aliases", "tags"]);
		expect(addAlias(capital, "Plats du Sud")).toBe(false);
		const commas: Record<string, unknown> = { aliases: "Doggo, Woofer" };
		expect(addAlias(commas, "woofer")).toBe(false);
		expect(addAlias(commas, "Yapper")).toBe(true);
		expect(commas).toEqual({ aliases: ["Doggo", "Woofer", "Yapper"] });
		const oldCapital: Record<string, unknown> = { Alias: "Tian", Aliases: "Ratatouille" };
		addAlias(oldCapital, "plat");
		expect(oldCapital).toEqual({ Aliases: ["Ratatouille", "Tian", "plat"] });
	});

	it("normalises like the daemon's fold: case, accents, œ, punctuation", () => {
		expect(normalizeAlias("Œuvre d’Éléonore !")).toBe("oeuvre d eleonore");
		expect(normalizeAlias("push_swap")).toBe(normalizeAlias("Push swap"));
		expect(normalizeAlias("Cafe\u1dc4ine, u\u20d7")).toBe("cafeine u"); // every mark the daemon drops, not U+0300–036F alone
	});
});

describe("writeAliases (the stand-in for Obsidian's YAML round trip)", () => {
	it("rewrites only the aliases key, whatever its form, and keeps the rest", () => {
		expect(writeAliases("---\ntitle: x\naliases: [a, b] # c\nslug: y\n---\nbody\n", ["a", "b", "c"])).toBe(
			"---\ntitle: x\naliases:\n  - a\n  - b\n  - c\nslug: y\n---\nbody\n",
		);
		expect(writeAliases("---\naliases: seul\n---\n", ["seul", "autre"])).toBe("---\naliases:\n  - seul\n  - autre\n---\n");
		expect(writeAliases("---\ntitle: x\n---\nbody", ["a"])).toBe("---\ntitle: x\naliases:\n  - a\n---\nbody");
		expect(writeAliases("body", ["a"])).toBe("---\naliases:\n  - a\n---\nbody");
		expect(writeAliases("---\nAliases: [a]\n---\n", ["a", "b"])).toBe("---\nAliases:\n  - a\n  - b\n---\n");
	});

	it("quotes what plain YAML would misread, and reads back what it wrote", () => {
		const text = writeAliases("---\naliases:\n---\n", ["yes", "a: b", "C++ #1", "l'API"]);
		expect(text).toBe('---\naliases:\n  - "yes"\n  - "a: b"\n  - "C++ #1"\n  - l\'API\n---\n');
		expect(locateAliases(text).values).toEqual(["yes", "a: b", "C++ #1", "l'API"]);
	});
});

describe("visibleSuggestions", () => {
	it("drops the dismissed ones, those already in the aliases, and repeats, in the daemon's order", () => {
		const shown = visibleSuggestions(
			[s("Projet de tri"), s("tri avec deux piles"), s("push_swap 42"), s("projet de TRI"), s("")],
			["Tri avec deux piles"],
			new Set([normalizeAlias("push_swap 42")]),
		);
		expect(shown.map((x) => x.alias)).toEqual(["Projet de tri"]);
	});

	it("says where a suggestion comes from, with its evidence", () => {
		const text = hoverText(s("projet de tri", "visitor_question", ["comment trier avec deux piles ?"]));
		expect(text).toContain("questions de visiteurs qui ont mené à cette note");
		expect(text).toContain("• comment trier avec deux piles ?");
		expect(hoverText(s("x", "something_new"))).toContain("source : something_new");
	});
});

describe("dismissed list in the plugin's data", () => {
	it("keeps a key of each normalized alias per note path, not its words, and survives a save and a load", async () => {
		const settings = normalizeSettings({});
		const dismissed = new DismissedAliases(() => settings.dismissedAliases);
		expect(await dismissed.add("projets/push-swap.md", "Projet de tri")).toBe(true);
		expect(await dismissed.add("projets/push-swap.md", "projet de tri")).toBe(false);
		const key = await dismissedKey("projet de tri");
		expect(key).toMatch(/^sha256 [0-9a-f]{32}$/);
		expect(await dismissedKey("PROJET de tri")).toBe(key);
		const reloaded = normalizeSettings(JSON.parse(JSON.stringify(settings)));
		expect(reloaded.dismissedAliases).toEqual({ "projets/push-swap.md": [key] });
		expect(JSON.stringify(reloaded)).not.toContain("tri");
		expect(await new DismissedAliases(() => reloaded.dismissedAliases).has("projets/push-swap.md", "PROJET de tri")).toBe(true);
		expect(await new DismissedAliases(() => reloaded.dismissedAliases).has("autre.md", "projet de tri")).toBe(false);
		const among = new DismissedAliases(() => reloaded.dismissedAliases).dismissedAmong("projets/push-swap.md", ["Projet de tri", "rachat"]);
		expect(await among).toEqual(new Set(["projet de tri"]));
	});

	it("turns an older version's dismissed words into keys, which still dismiss, and a key read by an older version stays as it is", async () => {
		const older = normalizeDismissed({ "a.md": ["Projet de tri", "2027"], "b.md": [await dismissedKey("rachat"), "rachat"] });
		const dismissed = new DismissedAliases(() => older);
		expect(await dismissed.has("a.md", "projet de tri")).toBe(true); // before, as words
		expect(await dismissed.hideWords()).toBe(true);
		expect(older).toEqual({ "a.md": [await dismissedKey("projet de tri"), await dismissedKey("2027")], "b.md": [await dismissedKey("rachat")] });
		expect(await dismissed.has("a.md", "Projet de tri")).toBe(true);
		expect(await dismissed.has("b.md", "rachat")).toBe(true);
		expect(await dismissed.hideWords()).toBe(false);
		// the version before reads every dismissal through normalizeAlias: a key passes unchanged
		const key = await dismissedKey("rachat");
		expect(normalizeAlias(key)).toBe(key);
	});

	it("follows a renamed note and reads what it can of a hand-edited data.json", () => {
		const data = normalizeDismissed({ "a.md": ["X", null, "x"], "c.md": [] });
		expect(data).toEqual({ "a.md": ["x"] });
		const dismissed = new DismissedAliases(() => data);
		expect(dismissed.rename("a.md", "dossier/a.md")).toBe(true);
		expect(data).toEqual({ "dossier/a.md": ["x"] });
		expect(normalizeDismissed(null)).toEqual({});
	});

	it("keeps the dismissals data.json holds in a shape it cannot read, as written, beside the others", async () => {
		// one alias alone, or a number (« 2027 »), is read; a note's value that is neither is kept as written
		const written = { "a.md": "Projet de tri", "b.md": [2027, "Rachat"], "c.md": { aliases: ["x"] }, "d.md": true };
		expect(normalizeDismissed(written)).toEqual({ "a.md": ["projet de tri"], "b.md": ["2027", "rachat"] });
		const unread = unreadDismissed(written);
		expect(unread).toEqual({ entries: { "c.md": { aliases: ["x"] }, "d.md": true } });
		const dismissed = normalizeDismissed(written);
		await new DismissedAliases(() => dismissed).add("e.md", "Autre");
		expect(dismissedToSave(dismissed, unread)).toEqual({
			dismissedAliases: { "c.md": { aliases: ["x"] }, "d.md": true, "a.md": ["projet de tri"], "b.md": ["2027", "rachat"], "e.md": [await dismissedKey("autre")] },
		});
		expect(unreadDismissedReason(unread!)).toBe(
			"les notes « c.md », « d.md » n'ont ni liste d'alias ni alias : leurs valeurs restent telles quelles dans data.json ; les suggestions écartées des autres notes s'appliquent",
		);
		// a list instead of the map: nothing read, kept in place until a dismissal needs it, then beside it
		const list = ["projet de tri", "rachat"];
		expect(normalizeDismissed(list)).toEqual({});
		expect(dismissedToSave({}, unreadDismissed(list))).toEqual({ dismissedAliases: list });
		expect(dismissedToSave({ "e.md": ["autre"] }, unreadDismissed(list))).toEqual({ dismissedAliases: { "e.md": ["autre"] }, [UNREAD_DISMISSED_KEY]: list });
		expect(unreadDismissedReason(unreadDismissed(list)!)).toMatch(/^une liste au lieu d'un objet « chemin de la note → liste des alias écartés »/);
		expect(unreadDismissed({ "a.md": ["x"] })).toBeNull();
		expect(unreadDismissed(undefined)).toBeNull();
	});
});
