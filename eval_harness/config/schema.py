"""The JSON Schema of eval.yaml (``orchestrate schema``), for editors' YAML servers.

It is the pydantic model's schema plus ``extends``, which the loader resolves (and removes)
before the model validates the merged document, so the model itself never sees it.
"""

from __future__ import annotations

from typing import Any

from eval_harness.config.models import EvalConfig

EXTENDS_SCHEMA: dict[str, Any] = {
    "description": "Profile file(s) merged under this one (deep merge; this file wins); "
                   "paths relative to this file. A cycle is an error.",
    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
}


def eval_schema() -> dict[str, Any]:
    """The JSON Schema of a whole eval.yaml, as written on disk."""
    schema = EvalConfig.model_json_schema(by_alias=True)
    props = dict(schema.get("properties", {}))
    if "matrix" in props:  # optional, but never null (the loader refuses `matrix:` empty)
        props["matrix"] = {"$ref": "#/$defs/MatrixBlock",
                           "description": props["matrix"].get("description", "")}
    schema["properties"] = {"extends": EXTENDS_SCHEMA, **props}
    return schema
