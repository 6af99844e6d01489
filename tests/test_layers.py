"""The package's data flows one way: files → vault → index → search (`retrieval`), kept by
`store`, then prompt → LLM → response (`answer`), run by `_engine`, served by `server`, driven
by `_cli`. A module that imported from further down that chain would tie a lower layer to a
higher one; this reads every module's imports and fails on one. An import made only for type
checking (`if TYPE_CHECKING:`) is not run, and is allowed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "daemon" / "grasbot"

# A module's layer: what it may import is its own part and the layers below it.
LAYERS = {
    "_version": 0,
    "_argparse_fr": 0,
    "_exceptions": 0,
    "_contacts": 0,
    "_files": 0,
    "_hosts": 0,
    "_imports": 0,
    "_terminal": 0,
    "_urls": 0,
    "_zones": 0,
    "_config": 1,
    "retrieval": 2,
    "store": 3,
    "answer": 3,
    "_engine": 4,
    "_evaluate": 5,
    "server": 5,
    "_cli": 6,
    "__main__": 7,
}


def _part(module: str) -> str:
    """`retrieval.index` → `retrieval`, `_engine` → `_engine`."""
    return module.split(".")[0]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).with_suffix("")
        parts = [p for p in relative.parts if p != "__init__"]
        if parts:
            found[".".join(parts)] = path
    return found


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the import nodes under `if TYPE_CHECKING:`."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for inner in node.body:
                skipped.update(id(sub) for sub in ast.walk(inner))
    return skipped


def _imports(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, imported grasbot module) of every import run, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_only(tree)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = ".".join([*base, *([node.module] if node.module else [])])
                names = [target] if node.module else [f"{target}.{alias.name}".strip(".") for alias in node.names]
            elif node.module and node.module.startswith("grasbot."):
                names = [node.module.removeprefix("grasbot.")]
            else:
                continue
            found += [(node.lineno, name) for name in names if name]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.removeprefix("grasbot.")) for alias in node.names if alias.name.startswith("grasbot.")]
    return found


def test_every_part_has_a_layer():
    parts = {_part(module) for module in _modules()}
    assert parts - set(LAYERS) == set()


@pytest.mark.parametrize("module", sorted(m for m in _modules() if _part(m) in LAYERS))
def test_imports_only_from_below(module):
    path = _modules()[module]
    here = _part(module)
    upward = [
        f"{path.relative_to(PACKAGE)}:{line} imports {target}"
        for line, target in _imports(module, path)
        if _part(target) != here and LAYERS.get(_part(target), 99) >= LAYERS[here]
    ]
    assert upward == []


def test_the_check_reads_relative_imports():
    """A relative import is resolved to its module, so the rule has something to see."""
    seen = dict(_imports("answer.passages", PACKAGE / "answer" / "passages.py"))
    assert any(target.startswith("retrieval.") for target in seen.values())
    assert all(not target.startswith(".") for target in seen.values())
