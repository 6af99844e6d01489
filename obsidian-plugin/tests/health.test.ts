// What the owner is told of the daemon's health: payloads built from shared-protocol's health
// example, each checked against openrpc.json's HealthResult before it is read.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tokenRefusal } from "../src/errors";
import { SaidOnce, formatHealthNotice, healthNotices } from "../src/health";
import { decodeHealthResult } from "../src/protocol";

const SHARED = path.resolve(__dirname, "..", "..", "shared-protocol");

interface Schema {
	type?: string | string[];
	enum?: unknown[];
	required?: string[];
	properties?: Record<string, Schema>;
	items?: Schema;
	$ref?: string;
}

const openrpc = JSON.parse(readFileSync(path.join(SHARED, "openrpc.json"), "utf8")) as { components: { schemas: Record<string, Schema> } };
const example = JSON.parse(readFileSync(path.join(SHARED, "examples", "health.json"), "utf8")) as { response: { result: Payload } };

type Payload = Record<string, unknown>;

/** The schema's keys, required fields and enums (enough to keep these payloads the daemon's). */
function conforms(value: unknown, schema: Schema, where: string): void {
	if (schema.$ref) return conforms(value, openrpc.components.schemas[schema.$ref.split("/").pop() ?? ""], where);
	if (schema.enum) expect(schema.enum, where).toContain(value);
	if (schema.items && Array.isArray(value)) value.forEach((v, i) => conforms(v, schema.items as Schema, `${where}[${i}]`));
	if (!schema.properties || typeof value !== "object" || value === null) return;
	const o = value as Payload;
	for (const key of schema.required ?? []) expect(o, `${where} needs ${key}`).toHaveProperty(key);
	for (const [key, v] of Object.entries(o)) {
		expect(Object.keys(schema.properties), `${where}.${key} is in the schema`).toContain(key);
		conforms(v, schema.properties[key], `${where}.${key}`);
	}
}

/** The example's result with `change` applied (a deep copy), checked against the schema. */
function health(change: (p: Payload & { generation: { hosts: Payload[] } }) => void = () => {}) {
	const payload = structuredClone(example.response.result) as Payload & { generation: { hosts: Payload[] } };
	change(payload);
	conforms(payload, openrpc.components.schemas.HealthResult, "health");
	return decodeHealthResult(payload);
}

const PULL = "Ollama at http://10.0.0.2:11434 (OLLAMA_HOST) does not have model 'qwen3:8b': model \"qwen3:8b\" not found. Run `ollama pull qwen3:8b` on that machine.";
const REFUSED = "Cannot connect to Ollama at http://127.0.0.1:11434 (OLLAMA_HOST): is `ollama serve` running there?";

describe("healthNotices", () => {
	it("says nothing when all is well: the owner's example", () => {
		expect(healthNotices(health())).toEqual([]);
	});

	it("says nothing when all is well with meaning search on and the question log writing", () => {
		const notices = healthNotices(
			health((p) => {
				p.semantic = { backend: "ollama", model: "ollama:nomic-embed-text", ready: true, embedded: 40, total: 40 };
				p.question_log = { state: "on" };
			}),
		);
		expect(notices).toEqual([]);
	});

	it("says nothing of a visitor's view (no url, no question log), nor of an older daemon's", () => {
		const visitor = health((p) => {
			p.caller = "visitor";
			delete p.question_log;
			delete p.default_visibility;
			delete p.time_zone;
			p.generation.hosts = [{ state: "up", slots: 2, in_use: 0 }];
		});
		expect(visitor.question_log).toBeNull();
		expect(visitor.default_visibility).toBeNull(); // the owner's alone: « Tester cette note » reads it
		expect(health().default_visibility).toBe("private");
		expect(visitor.time_zone).toBeNull(); // the owner's alone too: « Tester cette note » reads a note's dates there
		expect(health().time_zone).toBe("UTC");
		expect(healthNotices(visitor)).toEqual([]);
		const older = decodeHealthResult({ status: "ok", vault_size: 43, model: "qwen3:8b", llm_reachable: true, version: "3.1.0" });
		expect(older).toMatchObject({ caller: null, semantic: null, hosts: null, question_log: null, default_visibility: null, time_zone: null });
		expect(healthNotices(older)).toEqual([]);
	});

	it("says first, in French, that the token sent is not the daemon's, and where the daemon's is", () => {
		const refused = health((p) => {
			p.caller = "token_refused";
			delete p.question_log;
			p.generation.hosts = [{ state: "down", slots: 2, in_use: 0 }];
		});
		expect(refused.caller).toBe("token_refused");
		const notices = healthNotices(refused);
		expect(notices.map((n) => [n.key, n.problem])).toEqual([
			["token-refused", true],
			["answers-off", true],
		]);
		expect(notices[0].title).toBe("Jeton d'accès refusé par le démon");
		expect(notices[0].detail).toContain("n'est pas celui du démon GrasBot");
		expect(notices[0].detail).toContain("~/.config/grasbot/token");
		expect(notices[0].detail).toContain("Aucun aperçu n'est envoyé");
		// a value a newer daemon may add is no refusal
		expect(decodeHealthResult({ ...example.response.result, caller: "guest" }).caller).toBeNull();
	});

	it("says, as the preview does, that a token sent never reached the daemon (its view a visitor's)", () => {
		const visitor = health((p) => {
			p.caller = "visitor";
			delete p.question_log;
		});
		const notices = healthNotices(visitor, { tokenSent: true, daemonUrl: "http://127.0.0.1:8765" });
		expect(notices.map((n) => [n.key, n.problem])).toEqual([["token-not-received", true]]);
		expect(formatHealthNotice(notices[0])).toBe(`${tokenRefusal("visitor", "http://127.0.0.1:8765").title}. ${tokenRefusal("visitor", "http://127.0.0.1:8765").detail}`);
		expect(notices[0].title).toBe("Jeton d'accès non reçu par le démon");
		expect(healthNotices(visitor, { tokenSent: false })).toEqual([]);
	});

	it("says visitors get no answer when no note is public, and how a note becomes public", () => {
		const notices = healthNotices(
			health((p) => {
				p.vault_size = 0;
				p.llm_reachable = false;
			}),
		);
		expect(notices.map((n) => [n.key, n.problem])).toEqual([
			["no-public-note", true],
			["answers-off", true],
		]);
		expect(notices[0].title).toBe("Les visiteurs n'ont pas de réponse : aucune note n'est publique");
		expect(notices[0].detail).toContain("`visibility: public`");
		expect(notices[0].detail).toContain("`--default-visibility public`");
		expect(healthNotices(decodeHealthResult({ status: "ok", vault_size: null, model: "qwen3:8b", llm_reachable: true }))).toEqual([]);
	});

	it("says visitors get extracts when every model host lacks the model, with the command that fixes it", () => {
		const notices = healthNotices(
			health((p) => {
				p.generation.hosts = [{ url: "http://10.0.0.2:11434", state: "down", error: PULL, slots: 2, in_use: 0 }];
			}),
		);
		expect(notices).toHaveLength(1);
		expect(notices[0]).toMatchObject({ key: "answers-off", title: "Les visiteurs reçoivent des extraits, pas des réponses rédigées", problem: true });
		expect(notices[0].detail).toContain("Run `ollama pull qwen3:8b` on that machine.");
	});

	it("names each host's reason when all are down, and a retrying host still counts as failing", () => {
		const notices = healthNotices(
			health((p) => {
				p.llm_reachable = false;
				p.generation.hosts = [
					{ url: "http://127.0.0.1:11434", state: "retrying", error: REFUSED, slots: 2, in_use: 0 },
					{ url: "http://10.0.0.2:11434", state: "down", error: PULL, slots: 2, in_use: 0 },
				];
			}),
		);
		expect(notices.map((n) => n.key)).toEqual(["answers-off"]);
		expect(notices[0].detail).toContain(REFUSED);
		expect(notices[0].detail).toContain("ollama pull qwen3:8b");
	});

	it("says Ollama cannot be reached, and where, before any question found it so", () => {
		const notices = healthNotices(health((p) => void (p.llm_reachable = false)));
		expect(notices.map((n) => n.key)).toEqual(["answers-off"]);
		expect(notices[0].detail).toContain("Aucun Ollama ne répond à http://127.0.0.1:11434 : lancez `ollama serve` à cette adresse");
	});

	it("says a host skipped among others once, without saying visitors get extracts", () => {
		const notices = healthNotices(
			health((p) => {
				p.generation.hosts = [
					{ url: "http://127.0.0.1:11434", state: "up", slots: 2, in_use: 1 },
					{ url: "http://10.0.0.2:11434", state: "down", error: PULL, slots: 2, in_use: 0 },
				];
			}),
		);
		expect(notices.map((n) => [n.key, n.title])).toEqual([["host-http://10.0.0.2:11434", "Un hôte de modèle est mis de côté"]]);
		expect(notices[0].detail).toContain("ollama pull qwen3:8b");
	});

	it("says meaning search is off, why and what to do, when the vault could not be embedded", () => {
		const notices = healthNotices(
			health((p) => {
				p.semantic = {
					backend: "ollama",
					model: "ollama:nomic-embed-text",
					ready: false,
					embedded: 0,
					total: 40,
					error: "cannot reach Ollama at http://127.0.0.1:11434 to embed with 'nomic-embed-text': Connection refused",
				};
			}),
		);
		expect(notices).toHaveLength(1);
		expect(formatHealthNotice(notices[0])).toBe(
			"La recherche par le sens est coupée. Les questions des visiteurs ne sont trouvées que par leurs mots (sens calculé pour 0 texte sur 40) : cannot reach Ollama at http://127.0.0.1:11434 to embed with 'nomic-embed-text': Connection refused. Vérifiez qu'Ollama tourne à OLLAMA_HOST et a nomic-embed-text (`ollama pull nomic-embed-text`). Le démon réessaie toutes les 30 s et à chaque rechargement.",
		);
	});

	it("does not repeat the pull command the daemon's error already gives", () => {
		const error = "Ollama at http://127.0.0.1:11434 does not have 'nomic-embed-text': model not found; run `ollama pull nomic-embed-text` there";
		const [notice] = healthNotices(health((p) => void (p.semantic = { backend: "ollama", model: "ollama:nomic-embed-text", ready: false, error })));
		expect(notice.detail.match(/ollama pull/g)).toHaveLength(1);
	});

	it("says meaning is paused for visitors' questions, and for how long, while the daemon says so", () => {
		const notices = healthNotices(
			health((p) => {
				p.semantic = { backend: "ollama", model: "ollama:nomic-embed-text", ready: true, embedded: 40, total: 40, question_error: "Ollama did not embed the question within 5 s", questions_paused_for: 7.3 };
			}),
		);
		expect(notices.map((n) => [n.key, n.problem])).toEqual([["meaning-paused", true]]);
		expect(formatHealthNotice(notices[0])).toBe(
			"La recherche par le sens est suspendue pour les questions des visiteurs. Ollama n'a pas pu être joint ou n'a pas répondu à temps à la dernière question : Ollama did not embed the question within 5 s. Les questions des visiteurs ne sont trouvées que par leurs mots pendant encore 8 secondes, puis Ollama est de nouveau sollicité : vérifiez qu'il tourne et n'est pas surchargé.",
		);
	});

	it("says one second, not zero, when the pause is about to end", () => {
		const [notice] = healthNotices(health((p) => void (p.semantic = { backend: "ollama", ready: true, question_error: "timed out", questions_paused_for: 0.1 })));
		expect(notice.detail).toContain("pendant encore 1 seconde, puis");
	});

	it("does not say a question Ollama refused paused meaning", () => {
		const refused = "Ollama at http://127.0.0.1:11434 could not embed with 'bge-m3': failed to encode response: json: unsupported value: NaN";
		const notices = healthNotices(
			health((p) => void (p.semantic = { backend: "ollama", model: "ollama:bge-m3", ready: true, embedded: 40, total: 40, question_error: refused, questions_paused_for: null })),
		);
		expect(notices.map((n) => [n.key, n.problem])).toEqual([["meaning-question", true]]);
		expect(formatHealthNotice(notices[0])).toBe(`La question d'un visiteur n'a été trouvée que par ses mots. Ollama n'a pas calculé le sens de la dernière : ${refused}. La recherche par le sens n'est pas suspendue : la question suivante est traitée comme d'habitude.`);
	});

	it("does not say meaning is not paused when the daemon does not say (3.2.0 before questions_paused_for), which may be paused", () => {
		const timedOut = "Ollama did not embed the question within 5 s";
		const notices = healthNotices(health((p) => void (p.semantic = { backend: "ollama", model: "ollama:bge-m3", ready: true, embedded: 40, total: 40, question_error: timedOut })));
		expect(notices.map((n) => [n.key, n.problem])).toEqual([["meaning-question", true]]);
		expect(notices[0].detail).not.toContain("pas suspendue");
		expect(notices[0].detail).toBe(
			`Ollama n'a pas calculé le sens de la dernière : ${timedOut}. Si Ollama n'a pas pu être joint ou n'a pas répondu à temps, les questions des 10 s suivantes ne sont trouvées que par leurs mots aussi : vérifiez qu'il tourne et n'est pas surchargé. S'il a refusé le texte de cette question (bge-m3 n'y arrive pas pour quelques-uns), la question suivante est traitée comme d'habitude.`,
		);
	});

	it("rejects a pause that is not a number", () => {
		expect(() => decodeHealthResult({ status: "ok", semantic: { backend: "ollama", ready: true, questions_paused_for: "7" } })).toThrow("health.semantic.questions_paused_for");
	});

	it("names the note Ollama would not embed, matched by words alone", () => {
		const notices = healthNotices(
			health((p) => void (p.semantic = { backend: "ollama", model: "ollama:bge-m3", ready: true, embedded: 40, total: 40, unembedded: ["recettes/pain au levain.md"] })),
		);
		expect(notices.map(formatHealthNotice)).toEqual([
			"Une note n'est trouvée que par ses mots. Ollama n'a pas voulu calculer le sens du texte de 1 note (bge-m3 n'y arrive pas pour quelques-uns) : les questions des visiteurs la trouvent par ses mots seulement, le reste du coffre aussi par le sens. C'est « recettes/pain au levain.md ». Modifier le texte d'une note, ou redémarrer le démon, redemande à Ollama.",
		]);
	});

	it("names five of many notes Ollama would not embed and counts the others, beside a question it did not embed", () => {
		const unembedded = ["a.md", "b.md", "c.md", "d.md", "e.md", "f.md", "g.md"];
		const notices = healthNotices(
			health((p) => {
				p.semantic = { backend: "ollama", model: "ollama:bge-m3", ready: true, embedded: 40, total: 40, unembedded, question_error: "Ollama did not embed the question within 5 s" };
			}),
		);
		expect(notices.map((n) => n.key)).toEqual(["meaning-question", "meaning-unembedded"]);
		expect(formatHealthNotice(notices[1])).toBe(
			"Des notes ne sont trouvées que par leurs mots. Ollama n'a pas voulu calculer le sens du texte de 7 notes (bge-m3 n'y arrive pas pour quelques-uns) : les questions des visiteurs les trouvent par leurs mots seulement, le reste du coffre aussi par le sens. Ce sont « a.md », « b.md », « c.md », « d.md », « e.md » et 2 autres. Modifier le texte d'une note, ou redémarrer le démon, redemande à Ollama.",
		);
	});

	it("reads no unembedded notes from a visitor's view or an older daemon", () => {
		const semantic = health((p) => void (p.semantic = { backend: "ollama", model: "ollama:bge-m3", ready: true, embedded: 40, total: 40 })).semantic;
		expect(semantic?.unembedded).toEqual([]);
		expect(() => decodeHealthResult({ status: "ok", semantic: { backend: "ollama", ready: true, unembedded: [3] } })).toThrow("health.semantic.unembedded[0]");
	});

	it("tells the vault still being embedded apart from a problem", () => {
		const notices = healthNotices(health((p) => void (p.semantic = { backend: "bundled", model: "use-cmlm-multilingual", ready: false, embedded: 12, total: 40 })));
		expect(notices).toHaveLength(1);
		expect(notices[0]).toMatchObject({ key: "meaning-embedding", problem: false });
		expect(notices[0].detail).toContain("sens calculé pour 12 textes sur 40");
	});

	it("says visitors have meaning already while the private notes are being embedded", () => {
		const notices = healthNotices(
			health((p) => void (p.semantic = { backend: "bundled", model: "use-cmlm-multilingual", ready: false, visitors_ready: true, embedded: 30, total: 40 })),
		);
		expect(notices).toHaveLength(1);
		expect(notices[0]).toMatchObject({ key: "meaning-embedding", title: "La recherche par le sens n'est pas encore prête pour les notes privées", problem: false });
		expect(notices[0].detail).toContain("sens calculé pour 30 textes sur 40");
		expect(notices[0].detail).toContain("les questions des visiteurs sont déjà trouvées aussi par le sens");
		expect(health((p) => void (p.semantic = { backend: "bundled", ready: false })).semantic?.visitors_ready).toBeNull(); // a visitor's view, an older daemon
	});

	it("says visitors' questions wait in memory while the question log cannot be written", () => {
		const notices = healthNotices(
			health((p) => void (p.question_log = { state: "waiting", kept: 3, dropped: 0, error: "write: database or disk is full" })),
		);
		expect(notices.map((n) => [n.key, n.title])).toEqual([["log-waiting", "Les questions des visiteurs ne sont pas enregistrées"]]);
		expect(notices[0].detail).toBe(
			"Le journal des questions ne peut pas être écrit : write: database or disk is full. 3 questions attendent en mémoire, écrites dès que possible ; un arrêt du démon d'ici là les perd.",
		);
		const full = healthNotices(health((p) => void (p.question_log = { state: "waiting", kept: 10000, dropped: 1, error: "another process holds the file" })));
		expect(full[0].detail).toContain("1 question est déjà perdue");
	});

	it("says the question log is off only when it failed, not when the owner turned it off", () => {
		const failed = healthNotices(health((p) => void (p.question_log = { state: "off", error: "open: unable to open database file" })));
		expect(failed.map((n) => n.key)).toEqual(["log-off"]);
		expect(failed[0].detail).toContain("Les suggestions d'alias n'apprennent rien des questions des visiteurs tant qu'il n'est pas réparé et le démon redémarré.");
		expect(healthNotices(health((p) => void (p.question_log = { state: "off" })))).toEqual([]);
	});

	it("says questions lost since the start while the log writes again", () => {
		const notices = healthNotices(health((p) => void (p.question_log = { state: "on", dropped: 25 })));
		expect(notices.map((n) => n.key)).toEqual(["log-dropped"]);
		expect(notices[0].detail).toContain("25 questions n'ont pas été journalisées");
	});
});

describe("SaidOnce", () => {
	const down = healthNotices(health((p) => void (p.generation.hosts = [{ url: "http://10.0.0.2:11434", state: "down", error: PULL, slots: 2, in_use: 0 }])));
	const waiting = (kept: number) => healthNotices(health((p) => void (p.question_log = { state: "waiting", kept, dropped: 0, error: "write: disk I/O error" })));

	it("gives a trouble once while it lasts, even as its counts change, and again after it cleared", () => {
		const said = new SaidOnce();
		expect(said.fresh(waiting(1)).map((n) => n.key)).toEqual(["log-waiting"]);
		expect(said.fresh(waiting(2))).toEqual([]);
		expect(said.fresh([...waiting(3), ...down]).map((n) => n.key)).toEqual(["answers-off"]);
		expect(said.fresh([])).toEqual([]);
		expect(said.fresh(down).map((n) => n.key)).toEqual(["answers-off"]);
	});
});
