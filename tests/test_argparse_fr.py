"""argparse's own words in French (`grasbot._argparse_fr`): the errors the `grasbot` command
cannot make (tests/test_cli.py has those it makes), and nothing changed for other code."""

from __future__ import annotations

import argparse
import gettext

import pytest

from grasbot._argparse_fr import FrenchParser, french


def parser() -> FrenchParser:
    made = FrenchParser(prog="outil")
    made.add_argument("--paire", nargs=2)
    made.add_argument("--complexe", type=complex)
    either = made.add_mutually_exclusive_group(required=True)
    either.add_argument("--court", action="store_true")
    either.add_argument("--long", action="store_true")
    return made


@pytest.mark.parametrize(
    "argv, error",
    [
        (["--court", "--long"], "outil: erreur : argument --long : incompatible avec l'argument --court"),
        ([], "outil: erreur : l'un des arguments --court --long est obligatoire"),
        (["--court", "--paire", "a"], "outil: erreur : argument --paire : attend 2 valeurs"),
        (["--court", "--complexe", "z"], "outil: erreur : argument --complexe : valeur invalide pour complex : 'z'"),
    ],
)
def test_mutually_exclusive_groups_and_other_errors_are_french(capsys, argv, error):
    with pytest.raises(SystemExit) as stopped:
        parser().parse_args(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("utilisation : outil [-h] ")
    assert err.splitlines()[-1] == error


def test_a_message_it_does_not_know_is_kept_whole():
    assert french("a wording of a later Python: 'x'") == "a wording of a later Python: 'x'"
    assert french("argument --x: a wording of a later Python") == "argument --x : a wording of a later Python"


def test_no_help_flag_when_none_is_asked_for():
    assert "-h" not in FrenchParser(prog="outil", add_help=False).format_help()


def test_other_code_still_gets_argparse_and_gettext_as_they_were():
    """No catalog installed for the process: a library's own parser speaks as it did."""
    FrenchParser(prog="outil").format_help()
    assert gettext.gettext("usage: ") == "usage: "
    other = argparse.ArgumentParser(prog="autre").format_help()
    assert other.startswith("usage: autre [-h]") and "show this help message and exit" in other
