/**
 * Every text the plugin shows its author, in French, in one place: the settings tab, the
 * commands, the preview panel, the alias chips, the notices and the failures. Obsidian's style:
 * sentence case, no plugin name before a command's (Obsidian writes it), no heading atop the
 * settings tab. The other modules build what they show from these; tests/messages.test.ts fails
 * on a text of src/ left in English. No Obsidian here.
 */

// ------------------------------------------------------------------ names

/** The settings, as the settings tab names them and the texts that send the author there. */
export const SETTING_NAMES = {
	daemonUrl: "Adresse du démon",
	tokenSecret: "Jeton d'accès",
	reloadOnSave: "Recharger à l'enregistrement",
	debounceMs: "Délai de rechargement",
	checkConnection: "Vérifier la connexion",
	dismissedAliases: "Suggestions d'alias écartées",
} as const;

/** Command names (their ids stay in main.ts: hotkeys are bound to ids). */
export const COMMANDS = {
	reloadVault: "Recharger le coffre dans le démon",
	openPreview: "Ouvrir l'aperçu visiteur",
	testNote: "Tester cette note",
} as const;

/** The ribbon button's tooltip: no plugin name before it, so it says whose. */
export const RIBBON_RELOAD = "Recharger le coffre dans le démon GrasBot";

/** The side panel's title. */
export const VIEW_TITLE = "Aperçu visiteur";

// ------------------------------------------------------------------ settings tab

/** Where the daemon keeps the owner token (it follows the daemon's XDG_CONFIG_HOME, which the plugin cannot see). */
const TOKEN_FILE =
	"le fichier ~/.config/grasbot/token, ou le chemin que `grasbot serve` affiche au démarrage, sauf s'il tourne avec --token ou --token-file (GRASBOT_TOKEN, GRASBOT_TOKEN_FILE)";

export const SETTING_DESCRIPTIONS = {
	daemonUrl: "Adresse du démon GrasBot sur cet ordinateur (lancez-le avec `grasbot serve`).",
	tokenSecret: `Le jeton du propriétaire du démon (${TOKEN_FILE}), envoyé à chaque appel : nécessaire pour recharger le coffre et pour les suggestions d'alias, il garde aussi vos aperçus hors du journal des questions des visiteurs. Il est gardé dans le trousseau d'Obsidian, pas dans le fichier de données du plugin : choisissez ou créez le secret qui le contient.`,
	reloadOnSave: "Recharger le coffre du démon peu après l'enregistrement d'une note.",
	debounceMs: (min: number, max: number) => `Millisecondes d'attente après le dernier enregistrement avant de recharger (de ${min} à ${max}).`,
	checkConnection: "Demander son état au démon et afficher la réponse.",
} as const;

/**
 * What is wrong with a daemon URL: `field`, under the settings tab's field; `reason`, inside a
 * sentence (the notice of a refused data.json, a refused request).
 */
export const URL_PROBLEMS = {
	notUrl: { field: "Saisissez une adresse comme http://127.0.0.1:8765.", reason: "ce n'est pas une adresse comme http://127.0.0.1:8765" },
	scheme: { field: "L'adresse doit commencer par http:// ou https://.", reason: "l'adresse doit commencer par http:// ou https://" },
	notLocal: {
		field: "Le démon doit tourner sur cet ordinateur (127.0.0.1, localhost ou [::1]).",
		reason: "le démon doit tourner sur cet ordinateur (127.0.0.1, localhost ou [::1])",
	},
	query: { field: "Saisissez l'adresse du démon seule, sans « ? » ni « # ».", reason: "l'adresse du démon seule, sans « ? » ni « # »" },
	credentials: {
		field: "Saisissez l'adresse du démon seule, sans nom d'utilisateur ni mot de passe.",
		reason: "l'adresse du démon seule, sans nom d'utilisateur ni mot de passe",
	},
	path: (pathname: string) => ({
		field: `Saisissez l'adresse du démon seule, sans ${pathname} : le plugin ajoute /rpc lui-même.`,
		reason: `l'adresse du démon seule, sans ${pathname} : le plugin ajoute /rpc lui-même`,
	}),
} as const;

export function debounceProblem(min: number, max: number): string {
	return `Saisissez un délai entre ${min} et ${max} ms.`;
}

/** Why data.json's value of a setting is refused, and what applies meanwhile (the load notice). */
export const REFUSED_REASONS = {
	daemonUrl: (reason: string) => `${reason} ; aucune requête n'est envoyée au démon, ni le jeton d'accès, tant qu'elle n'est pas corrigée`,
	notText: "ce n'est pas un texte",
	tokenSecret: "ce n'est pas le nom d'un secret du trousseau ; aucun jeton n'est envoyé",
	reloadOnSave: "true ou false attendu ; le rechargement à l'enregistrement reste désactivé",
	debounceMs: (min: number, max: number, fallback: number) => `un délai entre ${min} et ${max} ms attendu ; ${fallback} ms s'appliquent en attendant`,
} as const;

/** What applies while the settings tab's control holds a value data.json has that this version refuses. */
export function refusedMeanwhile(key: string, fallbackDelay: number): string {
	switch (key) {
		case "daemonUrl":
			return "rien n'est envoyé à aucun démon tant qu'elle n'est pas corrigée";
		case "tokenSecret":
			return "aucun jeton n'est envoyé tant qu'aucun secret n'est choisi";
		case "reloadOnSave":
			return "le rechargement à l'enregistrement reste désactivé tant qu'il n'est pas réglé";
		case "debounceMs":
			return `${fallbackDelay} ms s'appliquent tant qu'aucun délai n'est réglé`;
		default:
			return "la valeur par défaut s'applique";
	}
}

/** The settings tab's note under a control whose value in data.json is refused. */
export function refusedSettingNote(written: string, meanwhile: string): string {
	return ` Le data.json du plugin contient ${written}, que cette version refuse : ${meanwhile}.`;
}

/** The notice at load that names the refused settings. */
export function refusedSettingsNotice(lines: { name: string; key: string; written: string; reason: string }[]): string {
	return [
		"GrasBot : le data.json du plugin contient des réglages que cette version refuse. Ils y restent tels quels jusqu'à ce que vous les changiez dans les réglages du plugin.",
		...lines.map(({ name, key, written, reason }) => `• ${name} (${key} : ${written}) : ${reason}.`),
	].join("\n");
}

/** An older data.json's token and the keychain's differ: which one is used, and where the other went. */
export function legacyTokenFound(current: string, legacy: string): string {
	return `Le data.json du plugin (écrit par GrasBot 3.1) contenait un jeton d'accès autre que celui du secret « ${current} » du trousseau d'Obsidian ; il est rangé dans le secret « ${legacy} ».`;
}

export const LEGACY_TOKEN_CHOICE = {
	legacy: (current: string, legacy: string, daemonUrl: string) =>
		`C'est lui que le démon GrasBot (${daemonUrl}) reconnaît : le réglage « ${SETTING_NAMES.tokenSecret} » désigne désormais « ${legacy} ». Le secret « ${current} » est inchangé.`,
	current: (current: string, legacy: string, daemonUrl: string) =>
		`Le démon GrasBot (${daemonUrl}) reconnaît celui de « ${current} », qui reste utilisé ; supprimez « ${legacy} » du trousseau si vous n'en avez plus besoin.`,
	neither: (current: string, legacy: string, daemonUrl: string) =>
		`Le démon GrasBot (${daemonUrl}) n'a reconnu ni l'un ni l'autre (ou n'a pas répondu) : « ${current} » reste utilisé ; choisissez « ${legacy} » dans le réglage « ${SETTING_NAMES.tokenSecret} » si c'est le bon.`,
} as const;

// ------------------------------------------------------------------ preview panel

export const PANEL = {
	placeholder: "Posez la question qu'un visiteur poserait…",
	questionLabel: "Question",
	ask: "Demander en visiteur",
	followUp: "Poursuivre en visiteur",
	newConversation: "Nouvelle conversation",
	asking: "Question posée au démon…",
	streamFallback: "Réponse en direct indisponible : voici la réponse complète.",
} as const;

/**
 * What the site's chat says of an answer built without the model (busy, or the model failed):
 * its MESSAGES.busy and .fallback word for word (render.test.ts reads them from chat.js), so the
 * preview shows what a visitor is told. A kept answer is the owner's to know (ANSWER.reused).
 */
export const VISITOR_NOTES = {
	busy: "Le modèle de langue est occupé par d'autres questions : voici les passages des notes les plus proches. Réessayez dans un instant pour une réponse rédigée.",
	fallback: "Cette réponse est faite d'extraits des notes, sans le modèle de langue.",
} as const;

/** The badge a visitor sees under an answer, as the chat words it. */
export function groundedBadgeText(grounded: boolean, noteCount: number): string {
	if (!grounded) return "réponse généraliste";
	return `basé sur ${noteCount} note${noteCount > 1 ? "s" : ""}`;
}

/** A count as French writes it (`1 234`). */
function count(n: number): string {
	return n.toLocaleString("fr-FR");
}

export const ANSWER = {
	wholeNote: "Note entière",
	opening: "Début de la note",
	chars: (chars: number) => `${count(chars)} caractère${chars > 1 ? "s" : ""}`,
	noneQuoted: "Aucun passage cité",
	noneSent: "Aucun passage envoyé au modèle",
	quoted: "Passages cités dans la réponse",
	sent: "Passages envoyés au modèle",
	score: (score: string) => `score ${score}`,
	reused: "Réponse reprise d'une question identique posée récemment",
	reusedDetail: "Reprise d'une réponse précédente : recharger le coffre l'oublie. Un visiteur n'en est pas averti : il saurait qu'un autre a posé sa question.",
	model: (model: string) => `modèle ${model}`,
	vaultSize: (size: number) => `${count(size)} note${size > 1 ? "s" : ""} dans le coffre`,
} as const;

// ------------------------------------------------------------------ note test

/** Whose field each publish key is (noteTest.ts `PUBLISH_KEYS`). */
const PUBLISH_TOOL: Record<string, string> = { publish: "d'Obsidian Publish", published: "de Jekyll", "dg-publish": "du plugin Digital Garden" };
/** What a yes in each hiding key means (noteTest.ts `HIDING_KEYS`). */
const HIDING_WHAT: Record<string, string> = {
	draft: "un brouillon, que Quartz ou Hugo ne publient pas",
	private: "une note privée, que les sites qui lisent ce champ ne publient pas",
	hidden: "une note cachée, que Hexo (hexo-hide-posts) retire de ses listes, de sa recherche et de ses flux",
};

export const NOTE_TEST = {
	private: "Invisible aux visiteurs : cette note est privée.",
	noQuestions: "Cette note n'a pas de questions `answers` à tester.",
	tested: (first: number, total: number) => `Cette note arrive en tête pour ${first} question${first > 1 ? "s" : ""} sur ${total}.`,
	title: (slug: string) => `Test de « ${slug} »`,
	addQuestions: "Ajoutez aux propriétés de la note les questions que poseraient les visiteurs, en liste sous `answers:`.",
	first: (score: string) => `En tête (score ${score})`,
	lower: (rank: number, score: string, slug: string, best: string) => `Rang ${rank} (score ${score}), devancée par ${slug} (score ${best})`,
	absentBehind: (slug: string, best: string) => `Absente des résultats ; en tête : ${slug} (score ${best})`,
	absent: "Absente : aucune note ne répond à cette question",
	publishNo: (key: string, shown: string) =>
		`Les propriétés de la note disent \`${key}: ${shown}\` (le champ ${PUBLISH_TOOL[key.trim().toLowerCase()] ?? "d'Obsidian Publish"}) : seul un oui publie une note, elle reste donc privée quelle que soit sa \`visibility\`.`,
	draftYes: (key: string, shown: string) =>
		`Les propriétés de la note disent \`${key}: ${shown}\` : ${HIDING_WHAT[key.trim().toLowerCase()] ?? HIDING_WHAT.draft} ; elle reste donc privée quelle que soit sa \`visibility\`.`,
	draftUnclear: (key: string, shown: string) =>
		`Les propriétés de la note disent \`${key}: ${shown}\`, ni un oui ni un non (\`true\` ou \`false\`) : dans le doute, elle reste privée quelle que soit sa \`visibility\`.`,
	notWritten: (shown: string, tool: string) =>
		`Les propriétés de la note disent \`${shown}\` : ${tool} n'en écrit aucune page ; elle reste donc privée quelle que soit sa \`visibility\`.`,
	renderUnclear: (shown: string) =>
		`Les propriétés de la note disent \`${shown}\`, ni \`always\`, ni \`link\`, ni \`never\` : dans le doute, elle reste privée quelle que soit sa \`visibility\`.`,
	publishLater: (key: string, shown: string) =>
		`Les propriétés de la note disent \`${key}: ${shown}\`, une date de publication à venir : le démon la garde privée jusque-là, puis la montre aux visiteurs sans qu'il faille la recharger.`,
	expired: (key: string, shown: string) =>
		`Les propriétés de la note disent \`${key}: ${shown}\`, une date d'expiration passée : elle reste donc privée quelle que soit sa \`visibility\`.`,
	dateUnreadable: (key: string, shown: string) =>
		`Les propriétés de la note disent \`${key}: ${shown}\`, qui n'est pas une date (2026-05-01, 2026-05-01T09:00:00+02:00) : dans le doute, elle reste privée.`,
	dateImpossible: (key: string, shown: string) =>
		`Les propriétés de la note disent \`${key}: ${shown}\` sans guillemets : YAML y lit une date ou une heure qui n'existe pas, et le démon ignore la note, qu'aucun visiteur ne voit donc. Corrigez-la, ou mettez-la entre guillemets pour la garder comme texte.`,
	numberTooLong: (key: string, shown: string) =>
		`Les propriétés de la note donnent à \`${key}\` le nombre « ${shown} » sans guillemets, trop long pour que le démon le lise (plus de 4 300 chiffres, ou des milliers de parties en base 60 : 1:59:59…) : le démon ignore la note, qu'aucun visiteur ne voit donc. Mettez-le entre guillemets pour le garder comme texte.`,
	dateKeyImpossible: (keys: string, shown: string) =>
		`Les propriétés de la note disent \`${keys}: ${shown}\`, une clé sans guillemets : YAML y lit une date ou une heure qui n'existe pas, et le démon ignore la note, qu'aucun visiteur ne voit donc. Corrigez-la, ou mettez-la entre guillemets pour la garder comme texte.`,
	keyTooLong: (start: string) =>
		`Les propriétés de la note ont une clé de plus de 1 024 caractères jusqu'à son « : » (« ${start} ») : YAML ne la lit pas, et le démon ignore la note, qu'aucun visiteur ne voit donc. Raccourcissez-la, ou écrivez-la après « ? » sur sa propre ligne, sa valeur après « : » sur la suivante.`,
	collectionKey: (line: string) =>
		`Les propriétés de la note disent \`${line}\`, une clé qui est une liste ou des champs ([ ] ou { }) : le démon ignore la note, qu'aucun visiteur ne voit donc. Mettez la clé entre guillemets.`,
	tagRefused: (line: string) =>
		`Les propriétés de la note disent \`${line}\`, une étiquette YAML (!…) dont le démon ne sait pas faire de valeur : le démon ignore la note, qu'aucun visiteur ne voit donc. Enlevez l'étiquette, ou mettez la valeur entre guillemets.`,
	visibilityTwice: "Les propriétés de la note donnent `visibility` plus d'une fois (en deux casses) : dans le doute, le démon la garde privée. N'en gardez qu'une.",
	nearlyVisibility: (key: string, shown: string) =>
		`Les propriétés de la note disent \`${key}: ${shown}\`, qui n'est pas \`visibility\`, le champ que lit le démon : dans le doute, elle reste privée. Écrivez \`visibility: public\` pour la montrer aux visiteurs.`,
	lateKeeps: (reason: string) =>
		`Les propriétés de la note viennent après des lignes vides, des espaces ou des caractères invisibles : Obsidian et le démon les lisent comme du texte, mais elles gardent la note privée. ${reason} Supprimez ce qui précède le --- d'ouverture.`,
	lateBroken:
		"Les propriétés de la note viennent après des lignes vides, des espaces ou des caractères invisibles, et leur YAML est invalide : elles disent qui peut lire la note, ce qui la garde privée. Supprimez ce qui précède le --- d'ouverture, puis corrigez le YAML.",
	secondKeeps: (reason: string) =>
		`Un second bloc de propriétés suit le premier : Obsidian le lit comme du texte, mais il garde la note privée. ${reason} Réunissez les deux blocs en un seul.`,
	secondBroken:
		"Un second bloc de propriétés suit le premier, et son YAML est invalide : il dit qui peut lire la note, ce qui la garde privée. Réunissez les deux blocs en un seul, puis corrigez le YAML.",
	tomlKeeps: (reason: string) =>
		`La note commence par un front matter TOML (entre deux +++) : Obsidian le lit comme du texte, Hugo et le démon comme ses propriétés, et il garde la note privée. ${reason} Mettez ses champs en YAML dans les propriétés de la note.`,
	tomlBroken: (said: string) =>
		`La note commence par un front matter TOML (entre deux +++) invalide, qui dit qui peut lire la note (${said}) : dans le doute, le démon la garde privée. Corrigez-le, ou mettez ses champs en YAML dans les propriétés de la note.`,
	frontmatterTooDeep: (format: string) =>
		`Le front matter ${format} en tête de la note imbrique des listes ou des champs sur plus de 32 niveaux : le démon ignore la note, qu'aucun visiteur ne voit donc. Réduisez ses niveaux, ou mettez ses champs en YAML dans les propriétés de la note.`,
	yamlNotLoaded: "YAML que le démon ne charge pas : des listes ou des champs sur plus de 32 niveaux, des alias qui se déploient trop, une étiquette (!…) dont il ne fait pas de valeur, une clé qui est une liste ou des champs ou de plus de 1 024 caractères, une date qui n'existe pas, ou un nombre trop long",
	propertiesInvalid:
		"Les propriétés de la note (entre les --- du début) ne sont pas du YAML valide, ou pas une suite de champs (clé : valeur) : le démon ignore la note, qu'aucun visiteur ne voit donc, et `grasbot check` la nomme avec la ligne fautive. Corrigez-les (le mode Source les montre telles qu'écrites).",
	keyTwice: (key: string) =>
		`Les propriétés de la note donnent \`${key}\` plus d'une fois : Obsidian n'en lit aucune, et dans le doute le démon garde la note privée. N'en gardez qu'un.`,
	fieldTwice: (key: string) =>
		`Ses champs donnent \`${key}\` plus d'une fois : YAML n'en garde que le dernier, et dans le doute le démon garde la note privée. N'en gardez qu'un.`,
	propertiesTooDeep:
		"Les propriétés de la note imbriquent des listes ou des champs sur plus de 32 niveaux : le démon ignore la note, qu'aucun visiteur ne voit donc. Réduisez leurs niveaux.",
	propertiesExpand:
		"Les propriétés de la note se déploient par leurs alias (&ancre, *alias) en plus de 20 000 valeurs ou d'un million de caractères : le démon ignore la note, qu'aucun visiteur ne voit donc. Écrivez leurs valeurs sans alias.",
	jsonKeeps: (reason: string) =>
		`La note commence par un front matter JSON (un objet { … }) : Obsidian le lit comme du texte, Hugo et le démon comme ses propriétés, et il garde la note privée. ${reason} Mettez ses champs en YAML dans les propriétés de la note.`,
	jsonBroken: (said: string) =>
		`La note commence par un front matter JSON (un objet { … }) invalide, qui dit qui peut lire la note (${said}) : dans le doute, le démon la garde privée. Corrigez-le, ou mettez ses champs en YAML dans les propriétés de la note.`,
	jsonTwice: (key: string) =>
		`La note commence par un front matter JSON (un objet { … }) qui donne \`${key}\` plus d'une fois : Hugo n'en lit que le dernier, et dans le doute le démon garde la note privée. N'en gardez qu'un, ou mettez ses champs en YAML dans les propriétés de la note.`,
	orgKeeps: (reason: string) =>
		`La note commence par un front matter Org (des lignes #+clé: valeur) : Obsidian le lit comme du texte, Hugo et le démon comme ses propriétés, et il garde la note privée. ${reason} Mettez ses champs en YAML dans les propriétés de la note.`,
	orgUnread: (said: string) =>
		`La note commence par un front matter Org (des lignes #+clé: valeur) dont Hugo ne lit pas une ligne qui dit qui peut lire la note (${said}) : dans le doute, le démon la garde privée. Écrivez-la \`#+clé: valeur\`, ou mettez ses champs en YAML dans les propriétés de la note.`,
	commentKeeps: (format: string, reason: string) =>
		`La note commence par un commentaire HTML (<!-- … -->) qui tient un front matter ${format} : Obsidian le cache, Hugo et le démon le lisent comme ses propriétés, et il garde la note privée. ${reason} Sortez ses champs du commentaire et mettez-les en YAML dans les propriétés de la note.`,
	commentBroken: (format: string, said: string) =>
		`La note commence par un commentaire HTML (<!-- … -->) qui tient un front matter ${format} invalide ou ambigu, qui dit qui peut lire la note (${said}) : Obsidian le cache, Hugo le lit, et dans le doute le démon garde la note privée. Sortez ses champs du commentaire et mettez-les en YAML dans les propriétés de la note.`,
	lowerBlock: (said: string) =>
		`Un bloc de propriétés plus bas dans la note, qu'Obsidian lit comme du texte, dit \`${said}\` : le démon garde la note privée. Mettez ses champs dans les propriétés en tête de note, ou supprimez le bloc.`,
	noVisibilityPrivate:
		"La note n'a pas de champ `visibility` et le démon tient ces notes pour privées. Ajoutez `visibility: public` à ses propriétés pour la montrer aux visiteurs.",
	notPublic: (shown: string) => `Les propriétés de la note disent \`visibility: ${shown}\` ; seules les notes avec \`visibility: public\` sont montrées aux visiteurs.`,
	noVisibilityHint:
		"La note n'a pas de champ `visibility` : sauf si le démon tourne avec `--default-visibility public`, elle est privée. Ajoutez `visibility: public` à ses propriétés pour la montrer aux visiteurs.",
} as const;

// ------------------------------------------------------------------ notices

export const RELOAD = {
	done: (size: number, counts: { added: number | null; changed: number | null; removed: number | null }) => {
		const parts = [
			counts.added === null ? null : `${count(counts.added)} ajoutée${counts.added > 1 ? "s" : ""}`,
			counts.changed === null ? null : `${count(counts.changed)} modifiée${counts.changed > 1 ? "s" : ""}`,
			counts.removed === null ? null : `${count(counts.removed)} supprimée${counts.removed > 1 ? "s" : ""}`,
		].filter((part): part is string => part !== null);
		const detail = parts.length > 0 ? ` (${parts.join(", ")})` : "";
		return `Coffre GrasBot rechargé : ${count(size)} note${size > 1 ? "s" : ""}${detail}.`;
	},
	failed: (n: number) => `${count(n)} note${n > 1 ? "s" : ""} en échec :`,
	more: (n: number) => `… et ${count(n)} de plus.`,
	peersBehind: (behind: number, peers: number) =>
		peers === 1
			? "L'autre démon (GRASBOT_PEERS) ne s'est pas rechargé, et répond encore depuis le coffre tel qu'il était :"
			: `${behind} des ${peers} autres démons (GRASBOT_PEERS) ne ${behind > 1 ? "se sont pas rechargés, et répondent" : "s'est pas rechargé, et répond"} encore depuis le coffre tel qu'il était :`,
	noReason: "aucune raison donnée",
	peerToken:
		"Un démon pair qui refuse le jeton du propriétaire tourne avec un autre : redémarrez-le pour qu'il lise le jeton de ce démon (après un changement de jeton, chaque démon doit être redémarré).",
	peersDone: (peers: number) =>
		peers === 1 ? "L'autre démon (GRASBOT_PEERS) s'est rechargé aussi." : `Les ${peers} autres démons (GRASBOT_PEERS) se sont rechargés aussi.`,
} as const;

/** What the author reads when a source the daemon named is no longer in the vault. */
export function missingSourceNotice(path: string): string {
	return `« ${path} » n'est plus dans le coffre : l'index du démon est plus ancien que le coffre. Rechargez-le (commande « ${COMMANDS.reloadVault} »), puis posez la question à nouveau.`;
}

export function noteGone(path: string): string {
	return `« ${path} » n'est plus dans le coffre`;
}

export function aliasNotAdded(alias: string, reason: string): string {
	return `Impossible d'ajouter l'alias « ${alias} » : ${reason}`;
}

/** What `Vérifier la connexion` says of a daemon that answered. */
export const CONNECTION = {
	publicNotes: (n: number) => `${count(n)} note${n > 1 ? "s" : ""} publique${n > 1 ? "s" : ""}`,
	noModel: "aucun modèle de langue configuré",
	model: (model: string, unreachable: boolean) => `modèle ${model}${unreachable ? " (injoignable)" : ""}`,
	version: (version: string) => `version ${version}`,
	status: (status: string, daemonUrl: string, facts: string[]) =>
		`Démon GrasBot à ${daemonUrl} : ${status === "ok" ? "en marche" : status}${facts.length > 0 ? `, ${facts.join(", ")}` : ""}.`,
} as const;

// ------------------------------------------------------------------ alias suggestions

export const ALIASES = {
	boxLabel: "Alias suggérés",
	inlineLabel: "Suggestions :",
	blockLabel: "Alias suggérés :",
	add: (alias: string) => `Ajouter l'alias « ${alias} »`,
	dismiss: (alias: string) => `Écarter la suggestion « ${alias} »`,
	/** What each `source` of `suggest_aliases` means, for the hover text. */
	sources: {
		link_text: "Textes des liens dans d'autres notes",
		visitor_question: "Questions de visiteurs qui ont mené à cette note",
		ungrounded_question: "Questions de visiteurs restées sans réponse, les plus proches de cette note",
		answers: "Questions `answers` de cette note",
	} as Readonly<Record<string, string>>,
	unknownSource: (source: string) => `Source : ${source}`,
	hover: (label: string, score: string) => `Suggéré d'après : ${label} (score ${score})`,
	noToken: "aucun jeton d'accès réglé : suggestions d'alias désactivées",
	off: (title: string) => `pas de suggestions d'alias : ${title}`,
	offNotice: (said: string, detail: string) => `GrasBot : ${said}. ${detail}`,
	outdatedNotice: (detail: string) => `GrasBot : pas de suggestions d'alias. ${detail}`,
	/** Why an alias was not added: Obsidian could not parse the note's properties (its YAML parser's words are English). */
	invalidFrontmatter:
		"les propriétés de la note (son en-tête YAML, entre les lignes `---` du début) ne sont pas du YAML valide. La note n'a pas été modifiée : corrigez ses propriétés (le mode Source les montre telles qu'écrites), puis ajoutez l'alias à nouveau.",
	unsaved: (alias: string, reason: string) =>
		`GrasBot : la suggestion « ${alias} » est écartée pour cette session, mais le fichier data.json du plugin n'a pas pu être enregistré (${reason}) : elle reviendra au prochain démarrage, sauf si une autre suggestion écartée est enregistrée d'ici là.`,
} as const;

/** Why the author's dismissals were not all read, for the notice at load. */
export const UNREAD_DISMISSED = {
	whole: (what: string, key: string) =>
		`${what} au lieu d'un objet « chemin de la note → liste des alias écartés » : aucune suggestion écartée n'en est lue ; la valeur reste telle quelle dans data.json (sous ${key} dès qu'une suggestion écartée doit y être enregistrée)`,
	kinds: { list: "une liste", text: "un texte", number: "un nombre", boolean: "un booléen", other: "une valeur" },
	entries: (paths: string[]) => {
		const named = paths.map((p) => `« ${p} »`).join(", ");
		return paths.length === 1
			? `la note ${named} n'a ni liste d'alias ni alias : sa valeur reste telle quelle dans data.json ; les suggestions écartées des autres notes s'appliquent`
			: `les notes ${named} n'ont ni liste d'alias ni alias : leurs valeurs restent telles quelles dans data.json ; les suggestions écartées des autres notes s'appliquent`;
	},
} as const;

// ------------------------------------------------------------------ failures

const COPY_TOKEN = `Copiez le jeton du propriétaire du démon (${TOKEN_FILE}) dans le réglage « ${SETTING_NAMES.tokenSecret} » du plugin.`;

const UNSENT =
	"Aucun aperçu n'est envoyé tant qu'il en est ainsi : le démon le traiterait comme la question d'un visiteur (notée dans le journal des questions, reprise par les suggestions d'alias).";

/** What each JSON-RPC error code of the protocol means, as the author reads it (openrpc.json, components/errors). */
const RPC_ERRORS: Readonly<Record<number, string>> = {
	[-32700]: "requête illisible",
	[-32600]: "requête refusée",
	[-32601]: "méthode inconnue",
	[-32602]: "paramètres refusés",
	[-32603]: "erreur interne du démon",
	[-32003]: "note introuvable",
	[-32004]: "le rechargement du coffre a échoué",
};

export const FAILURES = {
	tokenFormat: `Le jeton d'accès des réglages du plugin contient une espace, un saut de ligne ou un caractère invisible, qu'aucune requête ne peut transmettre. Copiez-le à nouveau depuis ${TOKEN_FILE}.`,
	tokenFormatTitle: "Jeton d'accès inutilisable",
	daemonUrl: (url: string, reason: string) =>
		`Le réglage « ${SETTING_NAMES.daemonUrl} » du plugin (« ${url} ») est refusé : ${reason}. Aucune requête n'est envoyée au démon, ni le jeton d'accès, tant qu'il n'est pas corrigé dans les réglages du plugin.`,
	daemonUrlTitle: "Adresse du démon refusée",
	notRunningMessage: (url: string, reason: string) => `Aucun démon GrasBot n'a répondu à ${url} (${reason}). Lancez-le avec \`grasbot serve\`.`,
	notRunningTitle: "Le démon GrasBot ne tourne pas",
	notRunning: (url: string, reason: string) =>
		`Rien n'a répondu à ${url} (${reason}). Lancez-le dans un terminal avec \`grasbot serve\`, puis réessayez.`,
	http: (status: number, summary: string) => `Le démon GrasBot a répondu HTTP ${status}${summary}`,
	auth: (status: number) => `Le démon GrasBot a refusé le jeton d'accès (HTTP ${status}). ${COPY_TOKEN}`,
	tokenRefused: {
		title: "Jeton d'accès refusé par le démon",
		detail: (where: string) =>
			`Le jeton d'accès réglé dans le plugin n'est pas celui du démon GrasBot${where} : un ancien jeton, ou le démon a redémarré avec un nouveau. ${UNSENT} Copiez le jeton du démon (${TOKEN_FILE}) dans le secret que le réglage « ${SETTING_NAMES.tokenSecret} » désigne.`,
	},
	tokenNotReceived: {
		title: "Jeton d'accès non reçu par le démon",
		detail: (where: string) =>
			`Le plugin envoie un jeton d'accès, mais le démon GrasBot${where} n'en a reçu aucun : un proxy entre Obsidian et le démon retire l'en-tête Authorization. ${UNSENT} Donnez au réglage « ${SETTING_NAMES.daemonUrl} » l'adresse du démon lui-même (celle où \`grasbot serve\` écoute, http://127.0.0.1:8765 par défaut).`,
	},
	authTitle: "Jeton d'accès refusé",
	ownerOnlyWrongToken: (method: string) =>
		`\`${method}\` demande le jeton du propriétaire du démon, et le jeton d'accès réglé dans le plugin n'est pas celui-là. ${COPY_TOKEN}`,
	ownerOnlyNoToken: (method: string) => `\`${method}\` demande le jeton du propriétaire du démon, et aucun jeton d'accès n'est réglé. ${COPY_TOKEN}`,
	tokenRequiredTitle: "Jeton d'accès requis",
	rateLimitedTitle: "Trop de questions",
	rateLimited: (wait: number | undefined, tokenSet: boolean) =>
		`Le démon n'accepte qu'un certain nombre de questions par minute d'une même adresse, comme de la part des visiteurs (GRASBOT_RATE_PER_MINUTE). Réessayez ${wait === undefined ? "dans un instant" : `dans ${wait} s`}.${tokenSet ? "" : ` Avec le jeton d'accès du démon réglé dans le plugin, les aperçus ne sont pas limités.`}`,
	daemonErrorTitle: "Erreur du démon GrasBot",
	/** A JSON-RPC error: the code in French words (the daemon's `message` is the protocol's English), then the daemon's `data` (in French, or an older daemon's English). */
	rpcError: (method: string, code: number, message: string, data: string) =>
		`\`${method}\` : ${RPC_ERRORS[code] ?? `« ${message} »`}${data ? ` — ${data}` : ""} (code ${code})`,
	timeoutMessage: (what: string, seconds: number) => `Le démon GrasBot n'a pas répondu à ${what} en ${seconds} s.`,
	timeoutTitle: "Le démon GrasBot ne répond pas",
	timeout: (url: string, what: string, seconds: number) =>
		`Le démon GrasBot (${url}) n'a pas répondu à ${what} en ${seconds} s : il est peut-être occupé (un rechargement qui calcule le sens des notes, un modèle lent ou une file d'attente pleine). Réessayez dans un moment ; si cela dure, le journal de \`grasbot serve\` dit pourquoi.`,
	cut: (url: string, reason: string) =>
		`La connexion au démon GrasBot (${url}) s'est coupée pendant la réponse (${reason}) : il s'est arrêté ou a redémarré. Vérifiez que \`grasbot serve\` tourne, puis posez la question à nouveau.`,
	cutTitle: "Réponse interrompue",
	streamEnded: "le flux s'est terminé sans la fin de la réponse",
	streamErrorTitle: "Réponse interrompue par le démon",
	streamError: (url: string, message: string) =>
		`Le démon GrasBot (${url}) a interrompu la réponse : « ${message} ». Posez la question à nouveau dans un instant ; si cela se répète, le journal de \`grasbot serve\` dit pourquoi.`,
	mismatchTitle: "Réponse du démon illisible",
	mismatch: (url: string, method: string, message: string) =>
		`Le démon GrasBot (${url})${method ? ` a répondu à \`${method}\`` : " a répondu"} autrement que ce plugin ne le lit (${message}) : le démon et le plugin ne sont sans doute pas de la même version, ou un autre programme écoute à cette adresse. Mettez GrasBot et le plugin à la même version, relancez \`grasbot serve\`, et vérifiez le réglage « ${SETTING_NAMES.daemonUrl} ».`,
	outdatedTitle: "Démon GrasBot plus ancien que le plugin",
	outdated: (url: string, missing: string) =>
		`Le démon GrasBot (${url}) ne connaît pas ${missing} : il est plus ancien que ce plugin. Mettez GrasBot à jour sur cette machine (la version du plugin ou une plus récente), puis relancez \`grasbot serve\`.`,
	missingMethod: (method: string) => `la méthode \`${method}\``,
	missingParams: (names: string[], method: string) =>
		`${names.length === 1 ? "le paramètre" : "les paramètres"} ${names.map((name) => `\`${name}\``).join(", ")} de \`${method}\``,
	unknownError: "erreur inconnue",
} as const;

/** What the plugin found wrong in a daemon's answer (inside FAILURES.mismatch's parentheses). */
export const UNREADABLE = {
	notJson: (method: string) => `la réponse à \`${method}\` n'est pas du JSON`,
	notJsonRpc: (method: string) => `la réponse à \`${method}\` n'est pas une réponse JSON-RPC`,
	notJsonRpc2: (method: string) => `la réponse à \`${method}\` n'est pas du JSON-RPC 2.0`,
	wrongId: (got: string, id: number) => `la réponse porte le numéro de requête ${got} au lieu de ${id}`,
	noResult: (method: string) => `la réponse à \`${method}\` n'a pas de résultat`,
	noBody: "le flux n'a pas de corps",
	eventNotJson: (event: string) => `l'événement \`${event}\` du flux n'est pas du JSON`,
	/** `where`: a path in the answer (`search.results[0].slug`). */
	wrongType: (where: string, expected: string, got: string) => `\`${where}\` devrait être ${expected}, pas ${got}`,
	types: {
		object: "un objet",
		string: "un texte",
		number: "un nombre",
		boolean: "un booléen",
		array: "une liste",
		null: "null",
		undefined: "une valeur absente",
	} as Readonly<Record<string, string>>,
} as const;

// ------------------------------------------------------------------ the daemon's health

/** `1 note`, `3 notes`, as French writes the number. */
function plural(n: number, one: string, many: string): string {
	return `${count(n)} ${n === 1 ? one : many}`;
}

export const HEALTH = {
	noPublicTitle: "Les visiteurs n'ont pas de réponse : aucune note n'est publique",
	noPublic:
		"Une note est privée sauf si ses propriétés disent `visibility: public`, ou si le démon tourne avec `--default-visibility public` (GRASBOT_DEFAULT_VISIBILITY) ; `grasbot check` dit ce qu'il trouve d'autre dans le coffre.",
	noOllama: (urls: string) =>
		`Aucun Ollama ne répond à ${urls} : lancez \`ollama serve\` à cette adresse, ou réglez OLLAMA_HOST sur l'adresse où il tourne.`,
	answersOffTitle: "Les visiteurs reçoivent des extraits, pas des réponses rédigées",
	answersOff: (model: string, why: string) => `Aucun hôte de modèle ne peut répondre avec ${model}. ${why}`,
	hostSkippedTitle: "Un hôte de modèle est mis de côté",
	hostUnusable: (url: string | null) => `${url ?? "Un des hôtes d'OLLAMA_HOST"} n'a pas pu servir ces derniers temps.`,
	hostSkipped: (why: string) =>
		`${why} Les réponses aux visiteurs vont aux autres hôtes en attendant, et attendent plus longtemps quand ils sont occupés.`,
	unembeddedTitle: (one: boolean) => (one ? "Une note n'est trouvée que par ses mots" : "Des notes ne sont trouvées que par leurs mots"),
	unembedded: (total: number, named: string[], others: number) => {
		const one = total === 1;
		const more = others > 0 ? ` et ${plural(others, "autre", "autres")}` : "";
		return `Ollama n'a pas voulu calculer le sens du texte de ${plural(total, "note", "notes")} (bge-m3 n'y arrive pas pour quelques-uns) : les questions des visiteurs ${one ? "la trouvent par ses" : "les trouvent par leurs"} mots seulement, le reste du coffre aussi par le sens. ${one ? "C'est" : "Ce sont"} ${named.join(", ")}${more}. Modifier le texte d'une note, ou redémarrer le démon, redemande à Ollama.`;
	},
	quoted: (path: string) => `« ${path} »`,
	embeddingModel: "le modèle de sens",
	counted: (embedded: number, total: number) => ` (sens calculé pour ${count(embedded)} texte${embedded > 1 ? "s" : ""} sur ${count(total)})`,
	checkOllama: (model: string) => ` Vérifiez qu'Ollama tourne à OLLAMA_HOST et a ${model} (\`ollama pull ${model}\`).`,
	meaningMissingTitle: "La recherche par le sens manque des notes",
	meaningOffTitle: "La recherche par le sens est coupée",
	meaningFailed: (ready: boolean, counted: string, error: string, action: string) =>
		`${ready ? "Les notes non traitées" : "Les questions des visiteurs"} ne sont trouvées que par leurs mots${counted} : ${error}${action} Le démon réessaie toutes les 30 s et à chaque rechargement.`,
	pausedTitle: "La recherche par le sens est suspendue pour les questions des visiteurs",
	paused: (why: string, seconds: number) =>
		`Ollama n'a pas pu être joint ou n'a pas répondu à temps à la dernière question${why} Les questions des visiteurs ne sont trouvées que par leurs mots pendant encore ${plural(seconds, "seconde", "secondes")}, puis Ollama est de nouveau sollicité : vérifiez qu'il tourne et n'est pas surchargé.`,
	questionTitle: "La question d'un visiteur n'a été trouvée que par ses mots",
	questionMaybePaused: (error: string) =>
		`Ollama n'a pas calculé le sens de la dernière : ${error} Si Ollama n'a pas pu être joint ou n'a pas répondu à temps, les questions des 10 s suivantes ne sont trouvées que par leurs mots aussi : vérifiez qu'il tourne et n'est pas surchargé. S'il a refusé le texte de cette question (bge-m3 n'y arrive pas pour quelques-uns), la question suivante est traitée comme d'habitude.`,
	questionNotPaused: (error: string) =>
		`Ollama n'a pas calculé le sens de la dernière : ${error} La recherche par le sens n'est pas suspendue : la question suivante est traitée comme d'habitude.`,
	notReadyTitle: "La recherche par le sens n'est pas encore prête",
	notReady: (counted: string) => `Le démon calcule le sens des notes du coffre${counted} ; d'ici là, les questions des visiteurs ne sont trouvées que par leurs mots.`,
	privateNotReadyTitle: "La recherche par le sens n'est pas encore prête pour les notes privées",
	privateNotReady: (counted: string) =>
		`Le démon calcule le sens des notes privées${counted} : les questions des visiteurs sont déjà trouvées aussi par le sens ; celles posées avec l'audience « owner » (tout le coffre, notes privées comprises) ne le sont que par leurs mots d'ici là.`,
	lost: (dropped: number) => ` ${plural(dropped, "question est déjà perdue", "questions sont déjà perdues")}, trop nombreuses à attendre en même temps.`,
	logWaitingTitle: "Les questions des visiteurs ne sont pas enregistrées",
	logHeld: "un autre processus tient le fichier",
	logWaiting: (error: string, kept: number, lost: string) =>
		`Le journal des questions ne peut pas être écrit : ${error} ${plural(kept, "question attend", "questions attendent")} en mémoire, écrites dès que possible ; un arrêt du démon d'ici là les perd.${lost}`,
	logOffTitle: "Les questions des visiteurs ne sont pas journalisées",
	logOff: (error: string) =>
		`Le journal des questions est désactivé : ${error} Les suggestions d'alias n'apprennent rien des questions des visiteurs tant qu'il n'est pas réparé et le démon redémarré.`,
	logDroppedTitle: "Des questions de visiteurs ont été perdues",
	logDropped: (dropped: number) =>
		`${plural(dropped, "question n'a pas été journalisée", "questions n'ont pas été journalisées")} depuis le démarrage du démon, trop nombreuses à attendre en même temps : les suggestions d'alias ne les voient jamais.`,
} as const;
