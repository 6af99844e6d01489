"""The shared protocol's examples, as the tests read them: `rpc-discover.json` refers to the
document (`{"$ref": "../openrpc.json"}`) instead of holding a copy that would drift."""

from __future__ import annotations

import json
from pathlib import Path

from support.bots import REPO

SHARED = REPO / "shared-protocol"
EXAMPLES = sorted((SHARED / "examples").glob("*.json"))


def load_example(path: Path) -> dict:
    """The example at `path`, a result that refers to a file of shared-protocol replaced by it."""
    example = json.loads(path.read_text(encoding="utf-8"))
    responses = example["response"] if isinstance(example["response"], list) else [example["response"]]
    for response in responses:
        result = response.get("result") if isinstance(response, dict) else None
        if isinstance(result, dict) and set(result) == {"$ref"}:
            response["result"] = json.loads((path.parent / result["$ref"]).resolve().read_text(encoding="utf-8"))
    return example
