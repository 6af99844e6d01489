"""Generate a realistic Obsidian vault of N French notes, reproducibly (same N and seed, same bytes).

Why it looks like this: search cost depends on how many notes share a question's terms, so the
text follows a Zipf-like word frequency (a few words everywhere, a long tail of rare ones), the
vocabulary grows with the vault (Heaps' law: pseudo-words built from French syllables extend a
list of real words), notes vary a lot in length, and the frontmatter carries every field that
scores (aliases, answers, tags, domains, type, priority) plus links and some private notes.

    python benchmarks/generate_vault.py OUT_DIR --notes 10000 [--seed 7]
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import math
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

# Function words first: they top the frequency list, as in real French text.
FUNCTION_WORDS = """
de la le les et des en un une du est que qui dans pour par sur au avec ce il pas plus ne se
sont on aux ou mais comme nous elle son sa ses cette leur tout fait bien aussi entre sans deux
""".split()

CONTENT_WORDS = """
donnees projet code fichier serveur client requete reponse modele recherche note texte mot
question utilisateur site page lien outil script fonction classe module paquet version test
erreur journal reseau machine disque memoire processus service conteneur image base table index
colonne ligne champ valeur cle cache session jeton compte acces droit role groupe equipe auteur
lecteur visiteur article blog cours exercice exemple solution probleme methode etape phase plan
objectif resultat mesure temps vitesse taille nombre liste tableau graphe noeud arete chemin
parcours arbre branche fusion commit depot historique configuration parametre option variable
environnement commande terminal shell noyau systeme distribution paquetage installation mise
jour securite chiffrement certificat protocole port adresse domaine nom hote routeur pare feu
python typescript javascript rust java sql html css docker linux git ollama obsidian markdown
frontmatter yaml json api rpc http web navigateur extension plugin interface bouton formulaire
ecran fenetre menu theme couleur police mise en forme titre section paragraphe phrase
apprentissage entrainement inference prediction classification regression vecteur matrice
calcul statistique moyenne variance distribution probabilite echantillon mesure precision rappel
score rang ordre tri filtre requete jointure transaction verrou sauvegarde restauration archive
compression format encodage caractere accent langue francais anglais traduction dictionnaire
racine suffixe prefixe lemme radical tokenisation analyse lexique corpus document collection
meteo capteur temperature pluie vent station releve courbe prevision saison climat
jeu balle brique raquette niveau joueur partie collision physique boucle affichage rendu
musique son audio video photo camera image pixel resolution format fichier dossier chemin
entreprise client contrat facture devis tarif prix budget cout mission prestation livraison
reunion atelier conference meetup presentation diapositive discours public audience salle
livre lecture chapitre citation idee concept theorie pratique principe regle loi modele cadre
strategie marketing vente message offre produit marche concurrent prospect funnel conversion
agile scrum sprint tache ticket backlog revue retrospective equipe produit demonstration
""".split()

ONSETS = ["b", "c", "d", "f", "g", "j", "l", "m", "n", "p", "r", "s", "t", "v", "ch", "br", "cr", "dr", "fr", "gr", "pl", "pr", "tr", "vr"]
NUCLEI = ["a", "e", "i", "o", "u", "ou", "ai", "au", "eu", "on", "an", "in", "é", "è"]
CODAS = ["", "", "", "r", "l", "s", "n", "t", "x", "que", "tion", "ment", "age", "eur", "ique"]
ACCENTED = {
    "donnees": "données",
    "requete": "requête",
    "reponse": "réponse",
    "modele": "modèle",
    "reseau": "réseau",
    "memoire": "mémoire",
    "cle": "clé",
    "methode": "méthode",
    "etape": "étape",
    "resultat": "résultat",
    "systeme": "système",
    "securite": "sécurité",
    "ecran": "écran",
    "fenetre": "fenêtre",
    "francais": "français",
    "meteo": "météo",
    "temperature": "température",
    "prevision": "prévision",
    "reunion": "réunion",
    "theorie": "théorie",
    "regle": "règle",
    "strategie": "stratégie",
    "tache": "tâche",
    "retrospective": "rétrospective",
    "entrainement": "entraînement",
    "inference": "inférence",
    "prediction": "prédiction",
    "regression": "régression",
    "probabilite": "probabilité",
    "echantillon": "échantillon",
    "precision": "précision",
    "caractere": "caractère",
}

TYPES = [("note", 50), ("technique", 20), ("projet", 12), ("competence", 10), ("moc", 3), ("cours", 5)]
FOLDERS = ["notes", "techniques", "portfolio", "competences", "cours", "idees", "journal", "moc"]
QUESTION_STARTS = ["Comment", "Pourquoi", "Qu'est-ce que", "Quel est", "Quelle est", "Quels sont", "Où trouver", "Peut-on", "À quoi sert"]


def _pseudo_words(rng: random.Random, count: int, taken: set[str]) -> list[str]:
    out = []
    while len(out) < count:
        word = "".join(rng.choice(ONSETS) + rng.choice(NUCLEI) for _ in range(rng.randint(1, 3))) + rng.choice(CODAS)
        if len(word) > 3 and word not in taken:
            taken.add(word)
            out.append(word)
    return out


@dataclass
class Lexicon:
    """Words by rank and a sampler with frequency ∝ 1/rank^s."""

    words: list[str]
    cumulative: list[float]
    rng: random.Random

    @classmethod
    def make(cls, rng: random.Random, n_notes: int, s: float = 1.05) -> Lexicon:
        content = [ACCENTED.get(w, w) for w in dict.fromkeys(CONTENT_WORDS)]
        rng.shuffle(content)
        # Heaps' law: a vault of N notes of a few hundred words has about 40·N^0.6 distinct words.
        target = max(2_000, int(40 * (n_notes * 300) ** 0.6 / 10))
        taken = set(FUNCTION_WORDS) | set(content)
        words = FUNCTION_WORDS + content + _pseudo_words(rng, target, taken)
        weights = [1.0 / (r + 1) ** s for r in range(len(words))]
        return cls(words, list(itertools.accumulate(weights)), rng)

    def word(self) -> str:
        x = self.rng.random() * self.cumulative[-1]
        return self.words[bisect.bisect_left(self.cumulative, x)]

    def content_word(self) -> str:
        """A word past the function words: what titles, tags and questions are made of."""
        while True:
            w = self.word()
            if w not in FUNCTION_WORDS:
                return w

    def phrase(self, lo: int, hi: int) -> str:
        return " ".join(self.content_word() for _ in range(self.rng.randint(lo, hi)))


def _yaml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _note_length(rng: random.Random) -> int:
    """Words of body: log-normal, median ~250, from a one-liner to a long article."""
    return max(5, min(6_000, int(rng.lognormvariate(math.log(250), 0.9))))


def generate(out: Path, n_notes: int, *, seed: int = 7, private_share: float = 0.15) -> list[Path]:
    """Write `n_notes` notes under `out` (created, or emptied if it exists) and return their paths."""
    rng = random.Random(seed)
    lex = Lexicon.make(rng, n_notes)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    tag_pool = list(dict.fromkeys(lex.content_word() for _ in range(max(30, n_notes // 20))))
    domain_pool = list(dict.fromkeys(lex.content_word() for _ in range(12)))
    slugs: list[str] = []
    titles: list[str] = []
    for i in range(n_notes):
        title = lex.phrase(1, 4).capitalize()
        titles.append(title)
        slugs.append(f"{'-'.join(title.lower().split())[:60]}-{i}")
    paths = []
    type_names, type_weights = zip(*TYPES, strict=True)
    for i in range(n_notes):
        note_type = rng.choices(type_names, type_weights)[0]
        folder = FOLDERS[i % len(FOLDERS)] if note_type != "moc" else "moc"
        sub = f"{folder}/{i // 500:03d}" if n_notes > 1_000 else folder
        aliases = [lex.phrase(1, 3) for _ in range(rng.choice([0, 0, 1, 2, 3]))]
        answers = [f"{rng.choice(QUESTION_STARTS)} {lex.phrase(2, 5)} ?" for _ in range(rng.choice([0, 1, 1, 2, 3]))]
        tags = rng.sample(tag_pool, rng.randint(0, 4))
        domains = rng.sample(domain_pool, rng.randint(0, 2))
        links = [slugs[rng.randrange(n_notes)] for _ in range(rng.choice([0, 1, 2, 3, 5]))]
        fm = [f"title: {_yaml_str(titles[i])}", f"slug: {slugs[i]}", f"type: {note_type}"]
        if domains:
            fm.append("domains: [" + ", ".join(domains) + "]")
        if tags:
            fm.append("tags: [" + ", ".join(tags) + "]")
        for name, values in (("aliases", aliases), ("answers", answers)):
            if values:
                fm.append(f"{name}:")
                fm.extend(f"  - {_yaml_str(v)}" for v in values)
        if rng.random() < 0.3:
            fm.append(f"priority: {rng.randint(1, 10)}")
        if links:
            fm.append("linked:")
            fm.extend(f'  - "[[{s}]]"' for s in links)
        fm.append(f"updated: 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
        if rng.random() >= private_share:
            fm.append("visibility: public")
        else:
            fm.append("visibility: private")
        body = [f"# {titles[i]}", ""]
        remaining = _note_length(rng)
        while remaining > 0:
            if rng.random() < 0.15:
                body += [f"## {lex.phrase(1, 3).capitalize()}", ""]
            size = min(remaining, rng.randint(20, 120))
            words = [lex.word() for _ in range(size)]
            if rng.random() < 0.3:
                words.insert(rng.randrange(len(words)), f"[[{slugs[rng.randrange(n_notes)]}]]")
            if rng.random() < 0.05:
                words.append(f"#{rng.choice(tag_pool)}")
            body += [" ".join(words).capitalize() + ".", ""]
            remaining -= size
        path = out / sub / f"{slugs[i]}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\n" + "\n".join(fm) + "\n---\n" + "\n".join(body), encoding="utf-8")
        paths.append(path)
    return paths


def _typo(rng: random.Random, text: str) -> str:
    chars = list(text)
    letters = [i for i, c in enumerate(chars) if c.isalpha()]
    if not letters:
        return text
    i = rng.choice(letters)
    op = rng.randrange(3)
    if op == 0:
        del chars[i]
    elif op == 1:
        chars.insert(i, rng.choice("aeiourstnl"))
    elif i + 1 < len(chars):
        chars[i], chars[i + 1] = chars[i + 1], chars[i]
    return "".join(chars)


def questions(notes, n: int, *, seed: int = 11) -> list[str]:
    """A realistic mix of questions about `notes` (grasbot Note objects): a note's own answers,
    its title or an alias inside a question, a typo'd variant, and words drawn from its body."""
    rng = random.Random(seed)
    notes = sorted(notes, key=lambda note: note.path)
    out: list[str] = []
    while len(out) < n:
        note = rng.choice(notes)
        kind = rng.randrange(6)
        if kind == 0 and note.answers:
            out.append(rng.choice(note.answers))
        elif kind == 1:
            out.append(f"{rng.choice(QUESTION_STARTS)} {note.title.lower()} ?")
        elif kind == 2 and note.aliases:
            out.append(f"Parle-moi de {rng.choice(note.aliases)}")
        elif kind == 3:
            base = rng.choice(note.answers) if note.answers else note.title
            out.append(_typo(rng, base))
        elif kind == 4:
            words = note.body.split()
            if words:
                start = rng.randrange(len(words))
                out.append(" ".join(words[start : start + rng.randint(2, 8)]).strip("#[]") or note.title)
        else:
            words = [w.strip(".,#[]") for w in note.body.split() if w.strip(".,#[]")]
            if words:
                out.append(f"{rng.choice(QUESTION_STARTS)} " + " ".join(rng.sample(words, min(len(words), rng.randint(2, 6)))) + " ?")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--notes", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    generate(args.out, args.notes, seed=args.seed)
    print(f"{args.notes} notes written to {args.out}")


if __name__ == "__main__":
    main()
