"""argparse in French: the words argparse itself prints (its usage line, help titles and -h,
its errors), for the `grasbot` command whose own words are French.

argparse writes them through gettext's process-wide catalog (`from gettext import gettext as
_`): a French catalog installed there would translate every other library of the process too.
Instead a `FrenchParser` says the few words of its help itself, and its `error` translates
the message templates of argparse it recognises (Python 3.11's msgids). One it does not
recognise, a later Python's new wording, is shown as argparse wrote it: never lost."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from typing import Any, NoReturn

#: What a usage line starts with (argparse: « usage: »).
USAGE = "utilisation : "

#: The help of every parser's -h (argparse: « show this help message and exit »).
HELP = "affiche cette aide et s'arrête"

#: argparse's error templates as its `_()` and `ngettext()` calls write them, and what to say
#: instead; the first that matches a whole message is taken. The text argparse put in a
#: placeholder (a flag, a value as repr wrote it, the choices) is kept as it was written.
MESSAGES = {
    "argument %(argument_name)s: %(message)s": "argument %(argument_name)s : %(message)s",
    "unrecognized arguments: %s": "arguments non reconnus : %s",
    "the following arguments are required: %s": "les arguments suivants sont obligatoires : %s",
    "one of the arguments %s is required": "l'un des arguments %s est obligatoire",
    "not allowed with argument %s": "incompatible avec l'argument %s",
    "ignored explicit argument %r": "ne prend pas de valeur : %s",
    "expected one argument": "attend une valeur",
    "expected at most one argument": "attend une valeur au plus",
    "expected at least one argument": "attend au moins une valeur",
    "expected %s argument": "attend %s valeur",
    "expected %s arguments": "attend %s valeurs",
    "ambiguous option: %(option)s could match %(matches)s": "option ambiguë : %(option)s peut désigner %(matches)s",
    "unexpected option string: %s": "option inattendue : %s",
    # « invalid %(type)s value », said for the two types a French reader knows by another name
    "invalid int value: %(value)r": "pas un nombre entier : %(value)s",
    "invalid float value: %(value)r": "pas un nombre : %(value)s",
    "invalid %(type)s value: %(value)r": "valeur invalide pour %(type)s : %(value)s",
    "invalid choice: %(value)r (choose from %(choices)s)": "choix invalide : %(value)s (au choix : %(choices)s)",
}

_PLACEHOLDER = re.compile(r"%(?:\((\w+)\))?[sr]")


def _pattern(template: str) -> re.Pattern[str]:
    """The messages a template writes: `%(name)s` a named group, `%s` an unnamed one."""
    parts, end = [], 0
    for found in _PLACEHOLDER.finditer(template):
        parts += [re.escape(template[end : found.start()]), f"(?P<{found[1]}>.*?)" if found[1] else "(.*?)"]
        end = found.end()
    parts.append(re.escape(template[end:]))
    return re.compile("".join(parts), re.DOTALL)


_TRANSLATIONS = [(_pattern(english), french) for english, french in MESSAGES.items()]


def french(message: str) -> str:
    """An error message of argparse in French; one it does not know, as it is."""
    for pattern, said in _TRANSLATIONS:
        found = pattern.fullmatch(message)
        if found is None:
            continue
        named = found.groupdict()
        if not named:
            return said % found.groups()
        if "message" in named:  # « argument --port: invalid int value: 'x' »: the flag's own error too
            named["message"] = french(named["message"])
        return said % named
    return message


class FrenchHelpFormatter(argparse.HelpFormatter):
    """argparse's help, with its usage line said in French."""

    def add_usage(
        self, usage: str | None, actions: Iterable[argparse.Action], groups: Iterable[argparse._MutuallyExclusiveGroup], prefix: str | None = None
    ) -> None:
        super().add_usage(usage, actions, groups, USAGE if prefix is None else prefix)


class FrenchParser(argparse.ArgumentParser):
    """An ArgumentParser that prints no English of argparse's own: its usage line, its titles,
    its -h and its errors are French. Its subparsers are made of this class too."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", FrenchHelpFormatter)
        add_help = kwargs.pop("add_help", True)
        super().__init__(add_help=False, **kwargs)
        self.add_help = add_help
        self._positionals.title = "arguments"
        self._optionals.title = "options"
        if add_help:
            self.add_argument("-h", "--help", action="help", help=HELP)

    def error(self, message: str) -> NoReturn:
        """As argparse's: the usage line and the error on stderr, exit code 2."""
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: erreur : {french(message)}\n")
