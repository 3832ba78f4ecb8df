"""JSON Schema pieces the bench reports share."""

from __future__ import annotations

from typing import Any

NUMBER: dict[str, Any] = {"type": "number"}
COUNT: dict[str, Any] = {"type": "integer", "minimum": 1}


def schema_object(**properties: Any) -> dict[str, Any]:
    """A closed JSON object schema: exactly these properties, all required."""
    return {
        "type": "object",
        "properties": properties,
        "required": sorted(properties),
        "additionalProperties": False,
    }
