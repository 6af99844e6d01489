import { readFileSync } from "node:fs";
import path from "node:path";
import { parseYaml } from "obsidian";
import { describe, expect, it, vi } from "vitest";
import { NOTE_TEST } from "../src/messages";
import { dateInstant, type NoteUnderTest, privateReason, questionsOf, testNote } from "../src/noteTest";
import type { Source } from "../src/protocol";
import { noteSlug, pathSlug, slugify } from "../src/slug";
import { source } from "./helpers";

const VISIBILITY_CASES = (
	JSON.parse(readFileSync(path.join(__dirname, "..", "..", "shared-protocol", "cases", "visibility.json"), "utf8")) as {
		cases: { frontmatter: Record<string, unknown> | null; text?: string; default_public: boolean; public: boolean; left_out?: boolean; private_by: string | null }[];
	}
).cases;

const DATE_CASES = (
	JSON.parse(readFileSync(path.join(__dirname, "..", "..", "shared-protocol", "cases", "dates.json"), "utf8")) as {
		cases: { value: string; zone: string; utc: string | null }[];
	}
).cases;

const SLUG_CASES = (
	JSON.parse(readFileSync(path.join(__dirname, "..", "..", "shared-protocol", "cases", "slugs.json"), "utf8")) as {
		cases: { path: string; frontmatter: Record<string, unknown> | null; slug: string }[];
	}
).cases;

function note(frontmatter: Record<string, unknown> | undefined, path = "projets/push-swap.md"): NoteUnderTest {
	return { path, basename: path.split("/").pop()?.replace(/\.md$/, "") ?? path, frontmatter };
}

const pub = { visibility: "public" };

describe("testNote", () => {
	it("reports 'first' when the note tops the visitor's results", async () => {
		const search = vi.fn(async (): Promise<Source[]> => [source("push-swap", 27.4, { path: "projets/push-swap.md" }), source("algorithmique", 6)]);
		const report = await testNote(note({ ...pub, answers: ["C'est quoi push_swap ?"] }), search);
		expect(search).toHaveBeenCalledWith("C'est quoi push_swap ?");
		expect(report).toEqual({
			kind: "tested",
			slug: "push-swap",
			visibilityHint: null,
			outcomes: [{ question: "C'est quoi push_swap ?", status: "first", score: 27.4 }],
		});
	});

	it("reports 'lower' with the rank and the note that beats it", async () => {
		const results = [source("algorithmique", 9), source("ecole-42", 5), source("push-swap", 4, { path: "projets/push-swap.md" })];
		const report = await testNote(note({ ...pub, answers: ["Quels tris ?"] }), async () => results);
		expect(report.kind === "tested" && report.outcomes[0]).toEqual({
			question: "Quels tris ?",
			status: "lower",
			rank: 3,
			score: 4,
			beatenBy: { slug: "algorithmique", title: "algorithmique", score: 9 },
		});
	});

	it("reports 'absent' when the note is not in the results", async () => {
		const report = await testNote(note({ ...pub, answers: "Et minishell ?" }), async () => [source("minishell", 12)]);
		expect(report.kind === "tested" && report.outcomes).toEqual([
			{ question: "Et minishell ?", status: "absent", beatenBy: { slug: "minishell", title: "minishell", score: 12 } },
		]);
	});

	it("matches the note by its frontmatter slug as well as by path", async () => {
		const report = await testNote(note({ ...pub, slug: "Push Swap", answers: ["q"] }, "ailleurs/autre-nom.md"), async () => [
			source("push-swap", 3, { path: "vault/ailleurs/autre-nom.md" }),
		]);
		expect(report.kind === "tested" && report.outcomes[0].status).toBe("first");
	});

	it("tells this note from another note with the same slug ranked above it", async () => {
		const report = await testNote(note({ ...pub, slug: "index", answers: ["q"] }, "projets/index.md"), async () => [
			source("index", 9, { path: "moc/index.md" }),
			source("index", 3, { path: "projets/index.md" }),
		]);
		expect(report.kind === "tested" && report.outcomes[0]).toMatchObject({ status: "lower", rank: 2, score: 3 });
	});

	it("finds the note by its path under a daemon's vault a folder above Obsidian's, not by a slug another note shares", async () => {
		// the daemon serves `site/` whose `vault/` is the Obsidian vault: its paths end with the note's
		const report = await testNote(note({ ...pub, slug: "index", answers: ["q"] }, "projets/index.md"), async () => [
			source("index", 9, { path: "site/moc/index.md" }),
			source("index", 3, { path: "site/vault/projets/index.md" }),
		]);
		expect(report.kind === "tested" && report.outcomes[0]).toEqual({
			question: "q",
			status: "lower",
			rank: 2,
			score: 3,
			beatenBy: { slug: "index", title: "index", score: 9 },
		});
	});

	it("says `publish: false` keeps a note private, without searching", async () => {
		const search = vi.fn(async (): Promise<Source[]> => []);
		const report = await testNote(note({ ...pub, publish: false, answers: ["q"] }), search);
		expect(report.kind === "private" && report.reason).toContain("`publish: false`");
		expect(search).not.toHaveBeenCalled();
	});

	it("says `draft: true` keeps a note private whatever its visibility, without searching", async () => {
		const search = vi.fn(async (): Promise<Source[]> => []);
		const report = await testNote(note({ ...pub, draft: true, answers: ["q"] }), search, { defaultPublic: true });
		expect(report.kind === "private" && report.reason).toBe(
			"Les propriétés de la note disent `draft: true` : un brouillon, que Quartz ou Hugo ne publient pas ; elle reste donc privée quelle que soit sa `visibility`.",
		);
		expect(search).not.toHaveBeenCalled();
	});

	it("says a private note is not visible to visitors, and why, without searching", async () => {
		const search = vi.fn(async (): Promise<Source[]> => []);
		const report = await testNote(note({ visibility: "private", answers: ["q"] }), search);
		expect(report.kind).toBe("private");
		expect(report.kind === "private" && report.reason).toContain("visibility: private");
		expect(search).not.toHaveBeenCalled();
	});

	it("hints at the missing visibility field when a note without one is never found", async () => {
		const report = await testNote(note({ answers: ["q1", "q2"] }), async () => []);
		expect(report.kind === "tested" && report.visibilityHint).toContain("visibility: public");
	});

	it("says from the daemon's default visibility whether a note without one is seen: private without searching, public with no hint", async () => {
		const search = vi.fn(async (): Promise<Source[]> => []);
		const hidden = await testNote(note({ answers: ["q"] }), search, { defaultPublic: false });
		expect(hidden).toEqual({ kind: "private", slug: "push-swap", reason: NOTE_TEST.noVisibilityPrivate });
		expect(search).not.toHaveBeenCalled();
		// public by default: never found is the ranking's doing, not a missing `visibility`
		const shown = await testNote(note({ answers: ["q"] }), search, { defaultPublic: true });
		expect(shown).toMatchObject({ kind: "tested", visibilityHint: null });
		expect(search).toHaveBeenCalledTimes(1);
	});

	it("reports a note without questions", async () => {
		expect((await testNote(note(pub), async () => [])).kind).toBe("no-questions");
		expect((await testNote(note(undefined), async () => [])).kind).toBe("no-questions");
	});

	it("lets a daemon failure through, for the view to show", async () => {
		await expect(testNote(note({ ...pub, answers: ["q"] }), () => Promise.reject(new Error("down")))).rejects.toThrow("down");
	});
});

describe("frontmatter reading", () => {
	it("reads `answers` as a list or as one string, skipping empty items", () => {
		expect(questionsOf({ answers: ["a", " ", "b", null, 3] })).toEqual(["a", "b", "3"]);
		expect(questionsOf({ answers: "Comment ?" })).toEqual(["Comment ?"]);
		expect(questionsOf({})).toEqual([]);
	});

	it("reads `publish` as the daemon does: any value but a yes or a blank keeps the note private", () => {
		for (const no of [false, 0, "false", "non", "private", "draft", "n", [false], Number.NaN]) {
			expect(privateReason({ visibility: "public", publish: no })).toContain("`publish: ");
		}
		for (const yes of [true, 1, "true", "Oui", "public", "", null, undefined]) {
			expect(privateReason({ visibility: "public", publish: yes })).toBeNull();
		}
		expect(privateReason({ visibility: "public", publish: "draft" })).toContain("`publish: draft`");
	});

	it("reads Jekyll's `published` as `publish`, naming the key as written and its site", () => {
		for (const no of [false, 0, "false", "non", "private", [false]]) {
			expect(privateReason({ visibility: "public", published: no })).toContain("`published: ");
		}
		for (const yes of [true, 1, "true", "Oui", "", null]) {
			expect(privateReason({ visibility: "public", published: yes })).toBeNull();
		}
		expect(privateReason({ visibility: "public", Published: false })).toBe(
			"Les propriétés de la note disent `Published: false` (le champ de Jekyll) : seul un oui publie une note, elle reste donc privée quelle que soit sa `visibility`.",
		);
		expect(privateReason({ published: "no" }, true)).toContain("`published: no` (le champ de Jekyll)");
		expect(privateReason({ published: true, publish: false })).toContain("`publish: false` (le champ d'Obsidian Publish)");
	});

	it("reads `draft` as the daemon does: a yes keeps the note private, a no or a blank does not, anything else does", () => {
		for (const yes of [true, "true", "Oui", "yes", 1, "1"]) {
			expect(privateReason({ visibility: "public", draft: yes })).toContain("un brouillon");
		}
		for (const no of [false, "false", "non", "off", 0, "", null, undefined]) {
			expect(privateReason({ visibility: "public", draft: no })).toBeNull();
		}
		for (const unclear of ["peut-être", [true], Number.NaN]) {
			expect(privateReason({ visibility: "public", draft: unclear })).toContain("ni un oui ni un non");
		}
		expect(privateReason({ visibility: "public", Draft: "oui" })).toContain("`Draft: oui`");
		expect(privateReason({ visibility: "public", Publish: false })).toContain("`Publish: false`");
	});

	it("says in French why `private`, Hexo's `hidden` and Digital Garden's `dg-publish` keep a note private, as the daemon reads them", () => {
		expect(privateReason({ private: true }, true)).toBe(
			"Les propriétés de la note disent `private: true` : une note privée, que les sites qui lisent ce champ ne publient pas ; elle reste donc privée quelle que soit sa `visibility`.",
		);
		expect(privateReason({ visibility: "public", Hidden: "oui" })).toBe(
			"Les propriétés de la note disent `Hidden: oui` : une note cachée, que Hexo (hexo-hide-posts) retire de ses listes, de sa recherche et de ses flux ; elle reste donc privée quelle que soit sa `visibility`.",
		);
		expect(privateReason({ private: "peut-être" }, true)).toContain("ni un oui ni un non");
		expect(privateReason({ "dg-publish": false }, true)).toBe(
			"Les propriétés de la note disent `dg-publish: false` (le champ du plugin Digital Garden) : seul un oui publie une note, elle reste donc privée quelle que soit sa `visibility`.",
		);
		for (const no of [false, "non", 0, "", null]) {
			expect(privateReason({ visibility: "public", private: no, hidden: no })).toBeNull();
		}
		expect(privateReason({ visibility: "public", "dg-publish": true })).toBeNull();
	});

	it("tells the author, in French, what the daemon does with a key nearly `visibility` and with a frontmatter after blank lines", async () => {
		expect(privateReason({ visibilité: "public" }, true)).toBe(
			"Les propriétés de la note disent `visibilité: public`, qui n'est pas `visibility`, le champ que lit le démon : dans le doute, elle reste privée. Écrivez `visibility: public` pour la montrer aux visiteurs.",
		);
		expect(privateReason({ Visibility: "public" }, false)).toBeNull();
		const search = vi.fn(async (): Promise<Source[]> => []);
		const late = { ...note(undefined), text: "\n\n---\nvisibility: private\nanswers: [q]\n---\nCorps.\n" };
		const report = await testNote(late, search, { defaultPublic: true });
		expect(report.kind === "private" && report.reason).toBe(
			"Les propriétés de la note viennent après des lignes vides, des espaces ou des caractères invisibles : Obsidian et le démon les lisent comme du texte, mais elles gardent la note privée. Les propriétés de la note disent `visibility: private` ; seules les notes avec `visibility: public` sont montrées aux visiteurs. Supprimez ce qui précède le --- d'ouverture.",
		);
		expect(search).not.toHaveBeenCalled();
	});

	it("runs the shared visibility cases (shared-protocol/cases/visibility.json) as the daemon does", () => {
		for (const { frontmatter, text, default_public, public: isPublic, left_out, private_by } of VISIBILITY_CASES) {
			const reason = privateReason(frontmatter ?? undefined, default_public, text);
			const which = JSON.stringify(frontmatter ?? text);
			expect(reason === null, which).toBe(isPublic);
			expect(reason?.includes("le démon ignore la note") ?? false, which).toBe(left_out ?? false);
			if (private_by) expect(reason?.toLowerCase(), which).toContain(`\`${private_by}: `);
		}
	});

	it("reads Hugo's TOML front matter, text to Obsidian, as the daemon does: it may only keep the note private", () => {
		const draft = "+++\r\ntitle = \"Projet\"\r\ndraft = true\r\n+++\r\nCorps.\r\n";
		expect(privateReason(undefined, true, draft)).toBe(NOTE_TEST.tomlKeeps(NOTE_TEST.draftYes("draft", "true")));
		expect(privateReason(undefined, true, "+++\ntitle = Projet\npublish = false\n+++\nCorps.\n")).toBe(NOTE_TEST.tomlBroken("`publish = false`"));
		expect(privateReason(undefined, true, "+++\ndraft = false\ntags = [\n  \"a\",\n]\n+++\nCorps.\n")).toBeNull();
	});

	it("says private, as TOML that does not parse, a TOML front matter Python's tomllib refuses and the plugin's reader took", () => {
		const broken = (block: string): string | null => privateReason(undefined, true, `+++\n${block}\n+++\nCorps.\n`);
		for (const block of [
			"a.b = 1\na = 2", // a table made by a dotted key, then a value
			"[[cascade]]\n[cascade]", // an array of tables, then a table of that name
			'title = """Un \\q"""', // an escape TOML has not, in a multi-line string
			"title = 'Un \u007f'", // a control character
			"tags = [a, b]", // a bare word in an array
			"params = { x = 1, }", // a trailing comma in an inline table
			"params = { x = 1, x = 2 }",
			'ti$tle = "Note"', // a character no bare key holds
			"Note sans titre", // no statement
			"weight = 01",
			"weight = 1__0",
			"score = NaN",
			"date = 2021-02-29", // a day its month has not
			"date = 0000-01-01",
			"start = 25:00:00",
			'tags = [\n  "a"\n  "b"\n]', // no comma between two items
			"tags = [1] # \u0001",
		]) {
			expect(broken(`${block}\ndraft = false`), block).toBe(NOTE_TEST.tomlBroken("`draft = false`"));
		}
		expect(broken('build = { render = "always", }')).toBe(NOTE_TEST.tomlBroken('`build = { render = "always", }`'));
		// what tomllib reads: a line-ending backslash, a trailing comma in an array, hex, a time, arrays of tables
		const valid = 'title = """Un \\\n  titre"""\ntags = ["a",]\nweight = 0x1F\nstart = 07:32:00\n[[cascade]]\ndraft = true\n[[cascade]]\ndraft = false';
		expect(broken(valid)).toBeNull();
	});

	it("says private a TOML or JSON front matter nested past 32 levels, which the daemon leaves out, where it said public or threw", () => {
		const nested = (n: number, leaf = ""): string => `${"[".repeat(n)}${leaf}${"]".repeat(n)}`;
		const toml = (block: string): string | null => privateReason(undefined, true, `+++\ndraft = false\n${block}\n+++\nCorps.\n`);
		const json = (value: string): string | null => privateReason(undefined, true, `{"draft": false, "t": ${value}}\nCorps.\n`);
		const tooDeep = (format: string): string => NOTE_TEST.frontmatterTooDeep(format);
		// visibility.py `_nested_past(meta, MAX_DEPTH)`: a value 33 levels below the front matter's own
		expect(toml(`t = ${nested(32, "1")}`)).toBe(tooDeep("TOML (entre deux +++)"));
		expect(toml(`t = ${nested(33)}`)).toBe(tooDeep("TOML (entre deux +++)"));
		expect(toml(`${Array(33).fill("a").join(".")} = 1`)).toBe(tooDeep("TOML (entre deux +++)"));
		expect(toml(`t = ${nested(20_000)}`)).toBe(tooDeep("TOML (entre deux +++)")); // past the runtime's stack
		expect(toml(`t = ${nested(32)}`)).toBeNull();
		expect(toml(`${Array(32).fill("a").join(".")} = 1`)).toBeNull();
		expect(json(nested(32, "1"))).toBe(tooDeep("JSON (un objet { … })"));
		expect(json(nested(32))).toBeNull();
		expect(privateReason(undefined, true, `{"title": ${nested(40)}}\nCorps.\n`)).toBeNull(); // no key that says who reads the note: the daemon reads none of it
	});

	it("says private, as nested too deep, a TOML key of 100,000 dotted parts, read in linear time where it froze Obsidian minutes", () => {
		const toml = (line: string): string | null => privateReason(undefined, true, `+++\ndraft = false\n${line}\n+++\nCorps.\n`);
		const lines = (key: string): string[] => [`${key} = 1`, `[${key}]`, `[[ ${key} ]]`, `x = { ${key} = 1 }`, `"a" . ${key} = 1`];
		// visibility.py `_TOML_LONG_KEY`: tomllib reads one in time quadratic in its parts, as this reader did (40,000: 35 s)
		for (const line of lines(Array(100_000).fill("a").join("."))) expect(toml(line)).toBe(NOTE_TEST.frontmatterTooDeep("TOML (entre deux +++)"));
		for (const line of lines(Array(31).fill("a").join("."))) expect(toml(line)).toBeNull();
	});

	it("reads Hugo's JSON front matter, text to Obsidian, as the daemon does: it may only keep the note private", () => {
		const draft = '{\r\n  "title": "Projet",\r\n  "draft": true\r\n}\r\nCorps.\r\n';
		expect(privateReason(undefined, true, draft)).toBe(NOTE_TEST.jsonKeeps(NOTE_TEST.draftYes("draft", "true")));
		expect(privateReason(undefined, true, '{\n  title: "Projet",\n  "publish": false\n}\nCorps.\n')).toBe(NOTE_TEST.jsonBroken('`"publish": false`'));
		expect(privateReason(undefined, true, '{\n  "draft": true,\n  "draft": false\n}\nCorps.\n')).toBe(NOTE_TEST.jsonTwice("draft"));
		expect(privateReason(undefined, true, '{\n  "title": "Projet } ouvert",\n  "draft": false\n}\nCorps.\n')).toBeNull();
	});

	it("reads Hugo's Org front matter (`#+draft: true`), text to Obsidian, as the daemon does: it may only keep the note private", () => {
		expect(privateReason(undefined, true, "#+title: Projet\r\n#+draft: true\r\n\r\nCorps.\r\n")).toBe(NOTE_TEST.orgKeeps(NOTE_TEST.draftYes("draft", "true")));
		expect(privateReason(undefined, true, "#+title: Projet\n#+publish:false\nCorps.\n")).toBe(NOTE_TEST.orgUnread("`#+publish:false`"));
		expect(privateReason(undefined, true, "#+title: Projet\n\n#+draft: true\nCorps.\n")).toBeNull();
	});

	it("reads an Org date never closed in linear time, where 240 KB of `<2020-01-01 ` froze Obsidian 20 s, and the day as before", () => {
		const opened = "<2020-01-01 ".repeat(50_000);
		expect(privateReason(undefined, true, `#+draft: false\n#+date: ${opened}\nCorps.\n`)).toBeNull();
		const expired = privateReason(undefined, true, "#+draft: false\n#+expirydate: <2020-01-01 ]\nCorps.\n");
		expect(expired).not.toBeNull();
		expect(privateReason(undefined, true, `#+draft: false\n#+expirydate: ${opened}]\nCorps.\n`)).toBe(expired);
	});

	it("reads Hugo's front matter in an HTML comment at the top of the note, which Obsidian hides, as the daemon does: it may only keep the note private", () => {
		const yaml = "YAML (entre deux ---)";
		expect(privateReason(undefined, true, "<!--\r\n---\r\ntitle: Projet\r\ndraft: true\r\n---\r\n-->\r\nCorps.\r\n")).toBe(
			NOTE_TEST.commentKeeps(yaml, NOTE_TEST.draftYes("draft", "true")),
		);
		expect(privateReason(undefined, true, "<!--\n---\ndraft: [true\n---\n-->\nCorps.\n")).toBe(NOTE_TEST.commentBroken(yaml, "`draft: [true`"));
		expect(privateReason(undefined, true, "<!--\n+++\ndraft = true\n+++\n-->\nCorps.\n")).toBe(
			NOTE_TEST.commentKeeps("TOML (entre deux +++)", NOTE_TEST.draftYes("draft", "true")),
		);
		expect(privateReason(undefined, true, '<!--\n{ "draft": true, "draft": false }\n-->\nCorps.\n')).toBe(
			NOTE_TEST.commentBroken("JSON (un objet { … })", "`draft` donné plus d'une fois"),
		);
		expect(privateReason(undefined, true, "<!--\n#+draft:true\n-->\nCorps.\n")).toBe(NOTE_TEST.commentBroken("Org (des lignes #+clé: valeur)", "`#+draft:true`"));
		expect(privateReason(undefined, true, "<!-- À revoir.\n---\ndraft: false\n---\n-->\nCorps.\n")).toBeNull();
		expect(privateReason(undefined, true, "<!--\nÀ revoir.\n---\ndraft: true\n---\n-->\nCorps.\n")).toBeNull();
	});

	it("reads a key given twice in a block Obsidian shows as text as the daemon's YAML does: the last kept, and one that says who reads the note twice at its top level private", () => {
		// Obsidian's reading refuses a key given twice; PyYAML keeps the last, and the daemon keeps the note private only
		// when such a key says who reads it (visibility.py `_written_twice`), where the plugin read the whole block as broken
		const lower = (block: string): string | null => privateReason({ visibility: "public" }, false, `---\nvisibility: public\n---\nCorps.\n\n---\n${block}\n---\nFin.\n`);
		expect(lower("x:\n  publish: false\n  publish: false")).toBeNull();
		expect(lower("visibility: public\nx:\n  a: 1\n  a: 2")).toBeNull();
		expect(lower("title: a\ntitle: b\ndraft: false")).toBeNull();
		expect(lower("draft: true\ndraft: false")).toBe(NOTE_TEST.lowerBlock("draft: true"));
		expect(lower('publish: false\n"publish": true')).toBe(NOTE_TEST.lowerBlock("publish: false"));
		expect(lower("draft: false\nx:\n  a: 2024-02-30\n  a: 1")).toBe(NOTE_TEST.lowerBlock("draft: false")); // the earlier date, which PyYAML makes: no YAML
		const second = (block: string): string | null => privateReason({ visibility: "public" }, false, `---\nvisibility: public\n---\n---\n${block}\n---\nFin.\n`);
		expect(second("draft: false\ntitle: a\ntitle: b")).toBeNull();
		expect(second("draft: false\nx:\n  draft: true\n  draft: false")).toBeNull();
		expect(second("draft: false\ndraft: false")).toBe(NOTE_TEST.secondKeeps(NOTE_TEST.fieldTwice("draft")));
		const late = (block: string): string | null => privateReason(undefined, true, `\n---\n${block}\n---\nFin.\n`);
		expect(late("visibility: public\ntitle: a\ntitle: b")).toBeNull();
		expect(late("visibility: public\nx:\n  a: 1\n  a: 2")).toBeNull();
		expect(late("visibility: public\ndraft: false\ndraft: false")).toBe(NOTE_TEST.lateKeeps(NOTE_TEST.fieldTwice("draft")));
		const comment = (block: string): string | null => privateReason(undefined, true, `<!--\n---\n${block}\n---\n-->\nFin.\n`);
		expect(comment("draft: false\nx:\n  a: 1\n  a: 2")).toBeNull();
		expect(comment("draft: false\ntitle: a\ntitle: b")).toBeNull();
		expect(comment("draft: true\ndraft: false")).toBe(NOTE_TEST.commentBroken("YAML (entre deux ---)", "`draft` donné plus d'une fois")); // as JSON's
	});

	it("keeps private a note whose publisher writes no page of it, as the daemon does", () => {
		expect(privateReason({ build: { list: "never", render: "never" } }, true)).toBe(NOTE_TEST.notWritten("build.render: never", "Hugo"));
		expect(privateReason({ visibility: "public", permalink: false }, false)).toBe(NOTE_TEST.notWritten("permalink: false", "Eleventy"));
		expect(privateReason({ build: { render: "parfois" } }, true)).toBe(NOTE_TEST.renderUnclear("build.render: parfois"));
		expect(privateReason({ build: { list: "never" }, permalink: "/notes/plan/", eleventyExcludeFromCollections: true }, true)).toBeNull();
		expect(privateReason(undefined, true, "+++\nbuild = { render = 'link' }\n+++\nCorps.\n")).toBe(
			NOTE_TEST.tomlKeeps(NOTE_TEST.notWritten("build.render: link", "Hugo")),
		);
	});

	it("reads a properties block lower in a note saved with Windows line ends as the daemon does", () => {
		const text = "---\r\nvisibility: public\r\n---\r\nTexte.\r\n\r\n---\r\nvisibility: private\r\n---\r\nSuite.\r\n";
		expect(privateReason({ visibility: "public" }, false, text)).toBe(NOTE_TEST.lowerBlock("visibility: private"));
	});

	it("reads the list items and quotes of a properties block lower in the note as its YAML, as the daemon does, and only code as code", () => {
		// the daemon's prose drops code only (retrieval/markdown.py code_in): `  - 2000-01-01` is the block's value, not a line left out
		const lower = (block: string): string | null => privateReason({ visibility: "public" }, false, `---\nvisibility: public\n---\nCorps.\n\n${block}`);
		expect(lower("---\nexpiryDate:\n  - 2000-01-01\n---\n")).toBe(NOTE_TEST.lowerBlock("expiryDate: [2000-01-01]"));
		expect(lower("---\ndraft:\n  - true\n---\nSuite.\n")).toBe(NOTE_TEST.lowerBlock("draft: [true]"));
		expect(lower("---\nvisibility: public\nexpiryDate:\n    - 2000-01-01\n---\n")).toBe(NOTE_TEST.lowerBlock("visibility: public"));
		expect(lower("---\ndraft: false\n> x\n---\n")).toBe(NOTE_TEST.lowerBlock("draft: false")); // no YAML, and it names `draft`
		// code: a span is one space (`draft:` then blank), a block indented past a list item's content is no block
		expect(lower("---\ndraft: `true`\n---\n")).toBeNull();
		expect(lower("- a\n\n        ---\n        draft: true\n        ---\n")).toBeNull();
	});

	it("names a value written on the lines below its key in YAML's flow form, as the daemon's warning does, where it said `expiryDate:` or `[\"2000-01-01\"]`", () => {
		// retrieval/visibility.py `_as_written`: the line's value as written, or, when it is on the lines below, `_flow` (yaml.safe_dump's flow form)
		const lower = (block: string): string | null => privateReason({ visibility: "public" }, false, `---\nvisibility: public\n---\nCorps.\n\n---\n${block}\n---\n`);
		expect(lower("expiryDate:\n  - 2000-01-01")).toBe(NOTE_TEST.lowerBlock("expiryDate: [2000-01-01]"));
		expect(lower("draft:\n  - true\n  - 'true'\n  - a b\n  - 'a: b'\n  - ''\n  - '007'\n  - it's\n  - {a: 1}")).toBe(
			NOTE_TEST.lowerBlock("draft: [true, 'true', a b, 'a: b', '', '007', it's, {a: 1}]"),
		);
		expect(lower("draft: [ true ]")).toBe(NOTE_TEST.lowerBlock("draft: [ true ]")); // on its line: as written
		const header = "visibility: public\nexpiryDate:\n  - 2000-01-01";
		expect(privateReason(parseYaml(header) as Record<string, unknown>, true, `---\n${header}\n---\nCorps.\n`)).toBe(NOTE_TEST.dateUnreadable("expiryDate", "[2000-01-01]"));
	});

	it("reads a comment opened inside indented code, or code in a quote or a list item, as code, where the daemon reads a lower block after it", () => {
		// the daemon's strip_hidden hides no `%%` nor `<!--` in code (retrieval/markdown.py _contained_code): the block below is read
		const lower = (before: string): string | null => privateReason({ visibility: "public" }, false, `---\nvisibility: public\n---\n${before}---\ndraft: true\n---\nSuite.\n`);
		expect(lower("Texte.\n\n    %%\n\n")).toBe(NOTE_TEST.lowerBlock("draft: true"));
		expect(lower("- a\n\n        <!--\n\n")).toBe(NOTE_TEST.lowerBlock("draft: true"));
		expect(lower("> ```\n> %%\n> ```\n\n")).toBe(NOTE_TEST.lowerBlock("draft: true"));
		// a paragraph's line, however indented, is prose: its `%%` hides the block up to the next one
		expect(privateReason({ visibility: "public" }, false, "---\nvisibility: public\n---\nTexte.\n    %%\n\n---\ndraft: true\n---\n%%\n")).toBeNull();
	});

	it("reads 20,000 fences nothing closes in linear time, as the daemon, before a properties block lower in the note", () => {
		// retrieval/markdown.py `fences_read_once`: each such line was tried against the rest of the note (20,000 « ~~~~ x »: 21 s)
		for (const line of ["~~~~ x", "```python", "```python %%"]) {
			const text = `---\nvisibility: public\n---\n${`${line}\n`.repeat(20_000)}---\ndraft: true\n---\n`;
			expect(privateReason({ visibility: "public" }, false, text)).toBe(NOTE_TEST.lowerBlock("draft: true"));
		}
	});

	it("says a date of year 0 is no date, private with the daemon's words, where « Tester cette note » said public", () => {
		// Python's datetime holds years 1 to 9999: the daemon warns « n'est pas une date » (quoted) or leaves the note out (unquoted)
		expect(privateReason({ visibility: "public", publishDate: "0000-01-01" }, false)).toBe(NOTE_TEST.dateUnreadable("publishDate", "0000-01-01"));
		expect(privateReason({ visibility: "public", expiryDate: "0000-06-01T09:00:00Z" }, false)).toBe(
			NOTE_TEST.dateUnreadable("expiryDate", "0000-06-01T09:00:00Z"),
		);
		expect(privateReason({ visibility: "public", publishDate: "0001-01-01" }, false)).toBeNull(); // Go's zero date: Python's first day
	});

	it("says left out, as the daemon leaves it, a note whose properties hold an unquoted date or time no calendar has, where it said public", () => {
		// Obsidian gives `created: 2024-02-30` as text; the daemon's YAML reads it as a date, cannot make it, and loads no note
		const verdict = (header: string): string | null => {
			const frontmatter = parseYaml(header) as Record<string, unknown>;
			return privateReason(frontmatter, true, `---\n${header}\n---\nCorps.\n`);
		};
		expect(verdict("visibility: public\ncreated: 2024-02-30")).toBe(NOTE_TEST.dateImpossible("created", "2024-02-30"));
		expect(verdict("date: 0000-01-01")).toBe(NOTE_TEST.dateImpossible("date", "0000-01-01")); // year 0
		expect(verdict("visibility: public\nprojet:\n  fin: 2023-02-29T10:00:00Z")).toBe(NOTE_TEST.dateImpossible("projet.fin", "2023-02-29T10:00:00Z"));
		expect(verdict("jours: [2024-01-01, 2024-13-01]")).toBe(NOTE_TEST.dateImpossible("jours", "2024-13-01"));
		expect(verdict("jours:\n  - 2024-01-01 24:00:00")).toBe(NOTE_TEST.dateImpossible("jours", "2024-01-01 24:00:00"));
		expect(verdict("visibility: private\nfin: 2016-12-31T23:59:60Z")).toBe(NOTE_TEST.dateImpossible("fin", "2016-12-31T23:59:60Z")); // left out before it is read
		expect(verdict("publishDate: 2024-02-30")).toBe(NOTE_TEST.dateImpossible("publishDate", "2024-02-30"));
		// what the daemon loads: quoted, a field it reads as the text written, a form its YAML reads as no date, a date that is one
		for (const header of [
			'created: "2024-02-30"',
			"created: '2024-02-30' # 2024-02-30",
			"updated: 2023-02-29 10:00:00",
			"tags: [2024-02-30, [0000-01-01]]",
			"created: 2024-02-30 10:00",
			"created: 2024-2-30",
			"created: 2024-02-29",
			"created: 2024-02-30 et 31",
			"created: |-\n  2024-02-30",
		]) {
			expect(verdict(header), header).toBeNull();
		}
	});

	it("says left out, as the daemon leaves it, a note whose properties have an unquoted key that is a date no calendar has, where it said public", () => {
		// a key is read as a value is: PyYAML makes `2021-02-30:` a date, cannot, and the daemon loads no note; Obsidian gives the key as text
		const verdict = (header: string): string | null => privateReason(parseYaml(header) as Record<string, unknown>, true, `---\n${header}\n---\nCorps.\n`);
		expect(verdict("visibility: public\n2021-02-30: x")).toBe(NOTE_TEST.dateKeyImpossible("2021-02-30", "x"));
		expect(verdict("visibility: public\n? 2021-02-30\n: x")).toBe(NOTE_TEST.dateKeyImpossible("2021-02-30", "x"));
		expect(verdict("visibility: public\nprojet:\n  2021-02-30T10:00:00: x")).toBe(NOTE_TEST.dateKeyImpossible("projet.2021-02-30T10:00:00", "x"));
		expect(verdict("visibility: public\nx: {a: 1, 0000-01-01: 2}")).toBe(NOTE_TEST.dateKeyImpossible("x.0000-01-01", "2"));
		expect(verdict("visibility: public\ntags: [{2021-02-30: x}]")).toBe(NOTE_TEST.dateKeyImpossible("tags.2021-02-30", "x")); // a text field's mapping keeps its keys' types
		expect(privateReason(undefined, true, "\n---\ndraft: false\n2021-02-30: x\n---\nCorps.\n")).toBe(NOTE_TEST.lateBroken);
		for (const header of ['visibility: public\n"2021-02-30": x', "visibility: public\n'2021-02-30': x", "visibility: public\n2021-02-28: x", "visibility: public\nx:\n  - '2021-02-30': y"]) {
			expect(verdict(header), header).toBeNull();
		}
	});

	it("says left out, as the daemon leaves it, a note whose top-level key given twice held a date no calendar has first, where it said public", () => {
		// PyYAML makes `created: 2024-02-30` before it keeps `created: 1`, and raises; the plugin read the last alone
		const verdict = (header: string): string | null => privateReason(undefined, true, `---\nvisibility: public\n${header}\n---\nCorps.\n`);
		expect(verdict("created: 2024-02-30\ncreated: 1")).toBe(NOTE_TEST.dateImpossible("created", "2024-02-30"));
		expect(verdict("x:\n  a: 2024-02-30\nx: 1")).toBe(NOTE_TEST.dateImpossible("x.a", "2024-02-30"));
		expect(verdict("created: 2024-02-30\ncreated: 2024-02-31\ncreated: 1")).toBe(NOTE_TEST.dateImpossible("created", "2024-02-30"));
		expect(verdict("created: 2024-02-28\ncreated: 1")).toBeNull();
		expect(verdict('created: "2024-02-30"\ncreated: 1')).toBeNull();
	});

	it("names a key given twice below the top level as its author wrote it, not as renamed for Obsidian's reading, in each message that shows it", () => {
		// Obsidian's reading refuses a key given twice (« duplicated mapping key »): the plugin reads the earlier ones under
		// another name (`x.2_twice`), as PyYAML makes them before it keeps the last; no message shows that name
		const verdict = (header: string): string | null => privateReason(undefined, true, `---\nvisibility: public\n${header}\n---\nCorps.\n`);
		// a date no calendar has in the earlier value: the daemon leaves the note out
		expect(verdict("x:\n  a: 2024-02-30\n  a: 1")).toBe(NOTE_TEST.dateImpossible("x.a", "2024-02-30"));
		expect(verdict("x:\n  - a: 2024-02-30\n    a: 1")).toBe(NOTE_TEST.dateImpossible("x.a", "2024-02-30"));
		expect(verdict("x:\n  a: 2024-02-30\n  a: 2024-02-31\n  a: 1")).toBe(NOTE_TEST.dateImpossible("x.a", "2024-02-30"));
		expect(verdict("x:\n  a:\n    b: 2024-02-30\n  a: 1")).toBe(NOTE_TEST.dateImpossible("x.a.b", "2024-02-30"));
		expect(verdict("x: {a: 2024-02-30, a: 1}")).toBe(NOTE_TEST.dateImpossible("x.a", "2024-02-30"));
		expect(verdict("x: [{a: 2024-02-30, a: 1}]")).toBe(NOTE_TEST.dateImpossible("x.a", "2024-02-30"));
		// a key that is such a date, then the same key quoted: PyYAML makes the first, cannot, and the daemon leaves the note out
		expect(verdict("x:\n  2024-02-30: 1\n  '2024-02-30': 2")).toBe(NOTE_TEST.dateKeyImpossible("x.2024-02-30", "1"));
		expect(verdict("x: {2024-02-30: 1, '2024-02-30': 2}")).toBe(NOTE_TEST.dateKeyImpossible("x.2024-02-30", "1"));
		// a value shown holds what PyYAML keeps of a key given twice: the last
		expect(verdict("x:\n  2024-02-30:\n    a: 1\n    a: 2")).toBe(NOTE_TEST.dateKeyImpossible("x.2024-02-30", "{a: 2}"));
		expect(verdict("publish:\n  a: 1\n  a: 2")).toBe(NOTE_TEST.publishNo("publish", "{a: 2}"));
		expect(verdict("draft:\n  a: 1\n  a: 2")).toBe(NOTE_TEST.draftUnclear("draft", "{a: 2}"));
		expect(privateReason(undefined, true, "---\nvisibility: {a: 1, a: 2}\n---\nCorps.\n")).toBe(NOTE_TEST.notPublic('{"a":2}'));
		// a long number, a tag, a key that is a collection: their messages show the lines as written
		const long = "1".repeat(4_301);
		expect(verdict(`x:\n  a: ${long}\n  a: 1`)).toBe(NOTE_TEST.numberTooLong("x", `${"1".repeat(40)}…`));
		expect(verdict("x:\n  a: !!int abc\n  a: 1")).toBe(NOTE_TEST.tagRefused("a: !!int abc"));
		expect(verdict("x:\n  a: {[b]: 1}\n  a: 1")).toBe(NOTE_TEST.collectionKey("a: {[b]: 1}"));
		// quoted, the earlier date is text: served, as the daemon serves it
		expect(verdict("x:\n  a: '2024-02-30'\n  a: 1")).toBeNull();
		expect(verdict("x:\n  '2024-02-30': 1\n  '2024-02-30': 2")).toBeNull();
	});

	it("says left out, as the daemon leaves it, a note whose properties have a key of more than 1,024 characters up to its colon, which PyYAML refuses, where it said public", () => {
		// yaml/scanner.py `stale_possible_simple_keys`: an implicit key further than 1,024 characters from its `:` is
		// forgotten, and the `:` refused (« could not find expected ':' »); the daemon leaves the note out. Obsidian's
		// reading takes one in a flow mapping; the properties as it gives them, or none where it refuses them
		const verdict = (header: string, fields?: Record<string, unknown>): string | null => privateReason(fields, true, `---\nvisibility: public\n${header}\n---\nCorps.\n`);
		const a = (n: number): string => "a".repeat(n);
		const shown = `${a(40)}…`;
		expect(verdict(`x: {${a(1_025)}: 1}`, { visibility: "public", x: { [a(1_025)]: 1 } })).toBe(NOTE_TEST.keyTooLong(shown));
		expect(verdict(`x: {${a(1_100)}: 1}`)).toBe(NOTE_TEST.keyTooLong(shown));
		expect(verdict(`x: {"${a(1_100)}": 1}`)).toBe(NOTE_TEST.keyTooLong(`"${a(39)}…`));
		expect(verdict(`x: {a${" ".repeat(1_100)}: 1}`)).toBe(NOTE_TEST.keyTooLong(`a${" ".repeat(39)}…`));
		expect(verdict(`x: {[${a(1_100)}]: 1}`)).toBe(NOTE_TEST.keyTooLong(`[${a(39)}…`));
		expect(verdict(`title: {${a(1_100)}: 1}`)).toBe(NOTE_TEST.keyTooLong(shown));
		expect(verdict(`x: [${a(1_100)} : 1]`)).toBe(NOTE_TEST.keyTooLong(shown));
		expect(verdict(`x: {&b ${a(1_022)}: 1}`)).toBe(NOTE_TEST.keyTooLong(`&b ${a(37)}…`)); // from its anchor
		expect(verdict(`x: {${"😀".repeat(1_025)}: 1}`)).toBe(NOTE_TEST.keyTooLong(`${"😀".repeat(40)}…`)); // Python's characters: a code point each
		expect(verdict(`[${a(1_100)}]: 1`)).toBe(NOTE_TEST.keyTooLong(`[${a(39)}…`));
		expect(verdict(`${a(1_025)}: 1`, { visibility: "public", [a(1_025)]: 1 })).toBe(NOTE_TEST.keyTooLong(shown));
		expect(verdict(`x:\n  ${a(1_100)}: 1`)).toBe(NOTE_TEST.keyTooLong(shown));
		// up to 1,024 characters, an explicit key (`? `), a value, text: served, as the daemon serves them
		for (const [header, fields] of [
			[`x: {${a(1_024)}: 1}`, { x: { [a(1_024)]: 1 } }],
			[`${a(1_024)}: 1`, { [a(1_024)]: 1 }],
			[`x: {${"😀".repeat(600)}: 1}`, { x: { ["😀".repeat(600)]: 1 } }],
			[`x: {&b ${a(1_020)}: 1}`, { x: { [a(1_020)]: 1 } }],
			[`? ${a(1_100)}\n: 1`, { [a(1_100)]: 1 }],
			[`x: {? ${a(1_100)}: 1}`, { x: { [a(1_100)]: 1 } }],
			[`x: [? ${a(1_100)}: 1]`, { x: [{ [a(1_100)]: 1 }] }],
			[`x: [${a(1_100)}]`, { x: [a(1_100)] }],
			[`x: {b: ${a(1_100)}, c: 1}`, { x: { b: a(1_100), c: 1 } }],
			[`x: |\n  ${a(1_100)}: 1`, { x: `${a(1_100)}: 1` }],
			[`x: '${a(1_100)}: 1'`, { x: `${a(1_100)}: 1` }],
			[`x: ${"a ".repeat(600)}# b: 1`, { x: "a ".repeat(600).trim() }],
		] as const) {
			expect(verdict(header, { visibility: "public", ...fields }), header.slice(0, 60)).toBeNull();
		}
		// a block Obsidian shows as text: no YAML, and it names `draft`
		const lower = `---\nvisibility: public\n---\nCorps.\n\n---\ndraft: false\nx: {${a(1_100)}: 1}\n---\nFin.\n`;
		expect(privateReason({ visibility: "public" }, true, lower)).toBe(NOTE_TEST.lowerBlock("draft: false"));
	});

	it("reads a properties line of one character and 300,000 blanks with no key's colon in linear time, where it froze Obsidian minutes, and each line's key as before", () => {
		// fieldLines' and lastOfEach's key pattern tried each length of the key against all the blanks after it: 40,000 blanks 2.9 s, 300,000 176 s
		const blanks = " ".repeat(300_000);
		expect(privateReason(undefined, true, `---\nvisibility: public\nx${blanks}\n---\nCorps.\n`)).toBe(NOTE_TEST.propertiesInvalid);
		// a quoted text going on at the key's indent, which PyYAML reads: its lines read by impossibleDate
		expect(privateReason({ visibility: "public", title: "a b c" }, true, `---\nvisibility: public\ntitle: "a\nb${blanks}c"\n---\nCorps.\n`)).toBeNull();
		// the key as before: blanks and tabs before its colon are not the key's, a colon without a blank after it is not a key's
		const dated = "visibility: public\ncreated \t : 2024-02-30";
		expect(privateReason(parseYaml(dated) as Record<string, unknown>, true, `---\n${dated}\n---\nCorps.\n`)).toBe(NOTE_TEST.dateImpossible("created", "2024-02-30"));
		expect(privateReason(undefined, true, "---\nvisibility: public\ndraft \t: false\ndraft : true\n---\nCorps.\n")).toBe(NOTE_TEST.keyTwice("draft"));
		expect(privateReason(undefined, true, "---\nvisibility: public\ndraft: false\ndraft:b: true\n---\nCorps.\n")).toBeNull(); // `draft:b`, not `draft` twice
	});

	it("finds where YAML reads a node before each tag on a line in linear time, where 480 KB of lines of 50 `!` after 300 blanks froze Obsidian 11 s, and the same nodes as before", () => {
		// NODE_START's lazy `[^:#\n]*?[ \t]*:` tried each length of the text before a tag against the blanks after it: 9 ms a line
		const line = `  b${" ".repeat(300)}${"! ".repeat(49)}!`; // a plain text going on below its key's line
		const header = `visibility: public\ntitle: a\n${`${line}\n`.repeat(1_200)}`;
		expect(privateReason(parseYaml(header) as Record<string, unknown>, true, `---\n${header}---\nCorps.\n`)).toBeNull();
		// the same nodes: a quoted key with blanks before its colon, a key with blanks in it, the tag after an anchor; not in a text
		const verdict = (header: string, fields: Record<string, unknown>): string | null => privateReason({ visibility: "public", ...fields }, true, `---\nvisibility: public\n${header}\n---\nCorps.\n`);
		expect(verdict('"x" \t: !!int abc', { x: "abc" })).toBe(NOTE_TEST.tagRefused('"x" \t: !!int abc'));
		expect(verdict("- 'x y' : !!bool 0", { x: "0" })).toBe(NOTE_TEST.tagRefused("- 'x y' : !!bool 0"));
		expect(verdict("x y \t: &a !!bool 0", { "x y": "0" })).toBe(NOTE_TEST.tagRefused("x y \t: &a !!bool 0"));
		expect(verdict("x: a b !!int c", { x: "a b !!int c" })).toBeNull();
	});

	it("says left out, as the daemon leaves it, a note whose properties hold a number Python cannot make (4,301 digits, base 60 past its bounds), where it said public", () => {
		// frontmatter.py: int() refuses more than 4,300 digits, a base 60 int of 2,400 parts is refused before it is computed, a base 60 float of 175 overflows
		const verdict = (header: string): string | null => privateReason({ visibility: "public" }, false, `---\nvisibility: public\n${header}\n---\nCorps.\n`);
		const digits = `1${"0".repeat(4300)}`;
		expect(verdict(`x: ${digits}`)).toBe(NOTE_TEST.numberTooLong("x", `${digits.slice(0, 40)}…`));
		expect(verdict(`projet:\n  x: [${digits}]`)).toBe(NOTE_TEST.numberTooLong("projet", `${digits.slice(0, 40)}…`));
		expect(verdict(`x: 1${":59".repeat(2_400)}`)).toBe(NOTE_TEST.numberTooLong("x", `1${":59".repeat(13)}…`));
		expect(verdict(`x: 1${":59".repeat(174)}.5`)).toBe(NOTE_TEST.numberTooLong("x", `1${":59".repeat(13)}…`));
		for (const header of [`x: ${digits.slice(1)}`, `x: 0${"7".repeat(5_000)}`, `x: 0x${"f".repeat(5_000)}`, `x: 1.${"0".repeat(5_000)}`, `x: "${digits}"`, `tags: [${digits}]`, `x: a ${digits}`]) {
			expect(verdict(header), header.slice(0, 20)).toBeNull();
		}
		// a block Obsidian shows as text: YAML that does not load, private when it names a key that says who reads the note
		expect(privateReason(undefined, true, `\n---\ndraft: false\nx: ${digits}\n---\nCorps.\n`)).toBe(NOTE_TEST.lateBroken);
		// each number read once: a million characters of them in linear time
		expect(verdict(`x: [${`${digits}, `.repeat(230)}1]`)).toBe(NOTE_TEST.numberTooLong("x", `${digits.slice(0, 40)}…`));
		expect(verdict(`x: [${"1, ".repeat(300_000)}1]`)).toBeNull();
	});

	it("says left out, as the daemon leaves it, a note whose YAML properties nest lists or fields past 32 levels, where it said public", () => {
		const nested = (n: number, leaf = ""): string => `${"[".repeat(n)}${leaf}${"]".repeat(n)}`;
		const block = (n: number): string => `${Array.from({ length: n }, (_, i) => `${"  ".repeat(i)}a:`).join("\n")} 1`;
		const verdict = (header: string): string | null => privateReason(parseYaml(header) as Record<string, unknown>, true, `---\n${header}\n---\nCorps.\n`);
		// frontmatter.py `_check_bounds`: the properties' own mapping is a level, an empty list or mapping one too, an alias its value again
		for (const header of [
			`x: ${nested(32)}`,
			`visibility: private\nx: ${nested(31, "{a: 1}")}`,
			`x: ${nested(31, "{}")}`,
			block(33),
			`a: &a ${nested(31, "1")}\nb: [*a]`,
			"x: &a [*a]", // an alias to the list that holds it: the daemon's « elles ne finissent jamais »
		]) {
			expect(verdict(header), header).toBe(NOTE_TEST.propertiesTooDeep);
		}
		for (const header of [`x: ${nested(31)}`, `x: ${nested(31, "1")}`, `x: ${nested(30, "{}")}`, block(32), `a: &a ${nested(30, "1")}\nb: [*a, *a]`]) {
			expect(verdict(header), header).toBeNull();
		}
	});

	it("says left out, as the daemon leaves it, a note whose YAML properties expand past 20,000 values or a million characters by their aliases (a billion laughs), in bounded time, where it said public", () => {
		// retrieval/frontmatter.py `_check_bounds`: each alias counted as the values it stands for (a mapping's keys too), the note left out past
		// MAX_NODES or MAX_CHARS; Obsidian's reading gives an alias as the same list again, so the properties hold 9 × 9 lists, not 9⁹ values
		const bomb = (depth: number, width: number): [Record<string, unknown>, string] => {
			const fields: Record<string, unknown> = { visibility: "public" };
			const lines = ["visibility: public"];
			let level: unknown[] = Array<string>(width).fill("lol");
			for (let i = 0; i < depth; i++) {
				if (i > 0) level = Array<unknown[]>(width).fill(level);
				fields[`n${i}`] = level;
				lines.push(`n${i}: &n${i} [${Array<string>(width).fill(i === 0 ? "lol" : `*n${i - 1}`).join(", ")}]`);
			}
			return [fields, `---\n${lines.join("\n")}\n---\nCorps.\n`];
		};
		const verdict = ([fields, text]: [Record<string, unknown>, string]): string | null => privateReason(fields, true, text);
		const started = performance.now();
		expect(verdict(bomb(9, 9))).toBe(NOTE_TEST.propertiesExpand); // 490,329,066 values to the daemon
		expect(performance.now() - started).toBeLessThan(1000);
		expect(verdict(bomb(5, 9))).toBe(NOTE_TEST.propertiesExpand); // 74,740
		expect(verdict(bomb(4, 9))).toBeNull(); // 8,300: loaded
		const long = "x".repeat(10_000); // 1,010,018 characters, the 10,000 written once
		const chars = (n: number): [Record<string, unknown>, string] => [
			{ visibility: "public", a: long, b: Array<string>(n).fill(long) },
			`---\nvisibility: public\na: &a ${long}\nb: [${Array<string>(n).fill("*a").join(", ")}]\n---\nCorps.\n`,
		];
		expect(verdict(chars(100))).toBe(NOTE_TEST.propertiesExpand);
		expect(verdict(chars(98))).toBeNull();
		// a block Obsidian shows as text: YAML the daemon does not load, private when it names a key that says who reads the note
		expect(privateReason(undefined, true, `\n${bomb(9, 9)[1]}`)).toBe(NOTE_TEST.lateBroken);
	});

	it("reads an explicit YAML tag as the daemon's YAML makes its value: left out where it cannot (`!foo`, `!!bool 0`, `!!timestamp 2021-02-30`), the value it makes otherwise", () => {
		// PyYAML's SafeConstructor raises on a tag it does not know or a value it cannot make, and the daemon loads no note; Obsidian gives the text
		const verdict = (header: string, fields: Record<string, unknown>): string | null => privateReason({ visibility: "public", ...fields }, false, `---\nvisibility: public\n${header}\n---\nCorps.\n`);
		expect(verdict("x: !foo a", { x: "a" })).toBe(NOTE_TEST.tagRefused("x: !foo a"));
		expect(verdict("x: !!bool 0", { x: "0" })).toBe(NOTE_TEST.tagRefused("x: !!bool 0"));
		expect(verdict("publishDate: !!timestamp 2021-02-30", { publishDate: "2021-02-30" })).toBe(NOTE_TEST.tagRefused("publishDate: !!timestamp 2021-02-30"));
		expect(verdict("x: [a, !!int b]", { x: ["a", "b"] })).toBe(NOTE_TEST.tagRefused("x: [a, !!int b]"));
		expect(verdict("x:\n  - !!str [a]", { x: [["a"]] })).toBe(NOTE_TEST.tagRefused("- !!str [a]"));
		// the value it makes: no value, a date to come, a text
		expect(verdict("draft: !!null x", { draft: "x" })).toBeNull();
		expect(verdict("publishDate: !!timestamp 2999-01-01", { publishDate: "2999-01-01" })).toContain("une date de publication à venir");
		expect(verdict("draft: !!str true", { draft: "true" })).toContain("un brouillon");
		for (const [header, value] of [["title: !!timestamp 2021-02-30", "2021-02-30"], ['title: "a !!int b"', "a !!int b"], ["title: a - !!int b", "a - !!int b"], ["x: !!int 0x1F", "0x1F"], ["x: ! a", "a"]]) {
			expect(verdict(header, { x: value }), header).toBeNull();
		}
		// a block Obsidian shows as text: YAML the daemon does not load, private when it names a key that says who reads the note
		expect(privateReason(undefined, true, "\n---\ndraft: false\nx: !!bool 0\n---\nCorps.\n")).toBe(NOTE_TEST.lateBroken);
		// each tag read up to a bound into its line: a line of a million of them in linear time
		const started = performance.now();
		expect(verdict(`x: [${"! a, ".repeat(200_000)}a]`, { x: [] })).toBeNull();
		expect(verdict(`x: [${"!!int 1, ".repeat(100_000)}1]`, { x: [] })).toBeNull();
		expect(performance.now() - started).toBeLessThan(2000);
	});

	it("reads a verbatim tag `!<…>` up to white space, as YAML does: a `!<` in a text neither hides the tag after it on its line nor is read again to the line's end", () => {
		// `!<c, d: !!int abc>` was one tag to the plugin, across spaces, where YAML ends a tag at a space: the daemon reads `!!int abc>` and leaves the note out
		const verdict = (header: string, fields: Record<string, unknown>): string | null => privateReason({ visibility: "public", ...fields }, false, `---\nvisibility: public\n${header}\n---\nCorps.\n`);
		expect(verdict("x: {a: b !<c, d: !!int abc> }", { x: { a: "b !<c", d: "abc>" } })).toBe(NOTE_TEST.tagRefused("x: {a: b !<c, d: !!int abc> }"));
		expect(verdict("x: !<tag:yaml.org,2002:str> a", { x: "a" })).toBeNull();
		// a text of `!<` never closed: each one read up to the space after it, not to the line's end (quadratic before: 16,000 of them 1.9 s, 32,000 7.3 s)
		expect(verdict(`titre: a${" !<a".repeat(20_000)}`, { titre: "a" })).toBeNull();
	});

	it("says private, as YAML that does not load, a block Obsidian shows as text with an unquoted date no calendar has or nested past 32 levels", () => {
		// the daemon's load_frontmatter raises on it: a late, second, lower or commented block that names a key saying who reads the note keeps it private
		const deep = `${"[".repeat(32)}${"]".repeat(32)}`;
		expect(privateReason(undefined, true, "\n---\nvisibility: public\ncreated: 2024-02-30\n---\nCorps.\n")).toBe(NOTE_TEST.lateBroken);
		expect(privateReason(undefined, true, `\n---\nvisibility: public\nx: ${deep}\n---\nCorps.\n`)).toBe(NOTE_TEST.lateBroken);
		expect(privateReason({ title: "a" }, true, "---\ntitle: a\n---\n\n---\ndraft: false\ncreated: 2024-02-30\n---\nCorps.\n")).toBe(NOTE_TEST.secondBroken);
		const lower = (block: string): string | null => privateReason({ visibility: "public" }, true, `---\nvisibility: public\n---\nTexte.\n\n---\n${block}\n---\nSuite.\n`);
		expect(lower("visibility: public\ncreated: 2024-02-30")).toBe(NOTE_TEST.lowerBlock("visibility: public"));
		const comment = NOTE_TEST.commentBroken("YAML (entre deux ---)", "`draft: false`");
		expect(privateReason(undefined, true, "<!--\n---\ndraft: false\ncreated: 2024-02-30\n---\n-->\nCorps.\n")).toBe(comment);
		expect(privateReason(undefined, true, `<!--\n---\ndraft: false\nx: ${deep}\n---\n-->\nCorps.\n`)).toBe(comment);
		// quoted, or naming no such key: as before
		expect(lower("visibility: public\ncreated: '2024-02-30'")).toBeNull();
		expect(privateReason(undefined, true, "\n---\ntitle: Note\ncreated: 2024-02-30\n---\nCorps.\n")).toBeNull();
	});

	it("reads a note's dates as the daemon does, in each zone (shared-protocol/cases/dates.json)", () => {
		for (const { value, zone, utc } of DATE_CASES) {
			expect(dateInstant(value, zone), `${value} in ${zone}`).toBe(utc === null ? null : Date.parse(utc));
		}
		expect(dateInstant("2026-05-01T09:30:00", "Mars/Olympus")).toBeNull(); // a zone this runtime does not know
	});

	it("reads a date without its offset where Obsidian runs when the daemon says `local`", () => {
		const before = process.env.TZ;
		process.env.TZ = "America/New_York";
		try {
			expect(dateInstant("2026-12-07T08:00:00", "local")).toBe(Date.UTC(2026, 11, 7, 13));
			expect(dateInstant("2026-07-01", "local")).toBe(Date.UTC(2026, 6, 1, 4));
		} finally {
			if (before === undefined) delete process.env.TZ;
			else process.env.TZ = before;
		}
	});

	it("holds back a note by its dates read in the daemon's zone", () => {
		const noon = Date.UTC(2026, 11, 7, 12); // 13:00 in Paris
		const fields = { visibility: "public", publishDate: "2026-12-07T12:30:00" };
		expect(privateReason(fields, false, undefined, noon)).toContain("date de publication à venir"); // 12:30 UTC
		expect(privateReason(fields, false, undefined, noon, "Europe/Paris")).toBeNull(); // 11:30 UTC
		expect(privateReason({ visibility: "public", expiryDate: "2026-12-07T12:30:00" }, false, undefined, noon, "Europe/Paris")).toContain(
			"date d'expiration passée",
		);
	});

	it("holds a public note back by its Hugo dates, against the time it is tested", () => {
		const before = Date.UTC(2026, 4, 1, 8, 0); // 1 May 2026, 08:00 UTC
		const after = Date.UTC(2026, 4, 1, 0, 0); // its midnight in UTC, the daemon's default zone: a date alone is that instant
		expect(privateReason({ visibility: "public", publishDate: "2026-05-02" }, false, undefined, before)).toBe(
			"Les propriétés de la note disent `publishDate: 2026-05-02`, une date de publication à venir : le démon la garde privée jusque-là, puis la montre aux visiteurs sans qu'il faille la recharger.",
		);
		expect(privateReason({ visibility: "public", publishDate: "2026-05-01" }, false, undefined, after)).toBeNull();
		expect(privateReason({ visibility: "public", expiryDate: "2026-05-01" }, false, undefined, after)).toContain("date d'expiration passée");
		expect(privateReason({ visibility: "public", expiryDate: "2026-05-01T09:00" }, false, undefined, before)).toBeNull();
		expect(privateReason({ visibility: "public", expiryDate: "2026-02-30" }, false, undefined, before)).toContain("n'est pas une date");
		expect(privateReason({ published: true, publishDate: null }, true, undefined, before)).toBeNull();
		expect(privateReason({ publishDate: "2026-05-02" }, undefined, undefined, before)).toContain("date de publication à venir");
	});

	it("follows the daemon's visibility rule", () => {
		expect(privateReason({ visibility: "Public " })).toBeNull();
		expect(privateReason({ visibility: "draft" })).toContain("visibility: draft");
		expect(privateReason({ visibility: true })).toContain("visibility: true");
		expect(privateReason({})).toBeNull();
		expect(privateReason({}, false)).toContain("n'a pas de champ `visibility`");
	});

	it("computes slugs like the daemon", () => {
		expect(slugify("École 42 : cœur & Æther")).toBe("ecole-42-coeur-aether");
		expect(slugify("Push_swap")).toBe("push-swap");
		expect(noteSlug("GrasBot — pipeline", undefined)).toBe("grasbot-pipeline");
		expect(noteSlug("fichier", { slug: "grasbot-retrieval" })).toBe("grasbot-retrieval");
		expect(noteSlug("fichier", { slug: "!!!" })).toBe("fichier");
	});

	it("gives the slug of each shared case (shared-protocol/cases/slugs.json), as the daemon does", async () => {
		const got = [];
		for (const c of SLUG_CASES) {
			const basename = c.path.split("/").pop()?.replace(/\.md$/, "") ?? c.path;
			got.push(noteSlug(basename, c.frontmatter ?? undefined) || (await pathSlug(c.path)));
		}
		expect(got).toEqual(SLUG_CASES.map((c) => c.slug));
	});
});
