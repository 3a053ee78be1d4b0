"""How a job's result reads on its page: a result can hold hundreds of table ids, which as
indented JSON fill a screen one number per line. Ids become a count and ranges, and short lists
of plain values stay on one line."""

from __future__ import annotations

import json
from typing import Any


def id_ranges(ids: list[int]) -> str:
    """Sorted ids as ranges: ``[3, 4, 5, 9]`` reads ``#3–#5, #9``."""
    spans: list[list[int]] = []
    for i in sorted(set(ids)):
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return ", ".join(f"#{a}" if a == b else f"#{a}–#{b}" for a, b in spans)


def result_text(result: dict[str, Any]) -> str:
    """The result as indented JSON, with table ids summarised and lists of plain values kept on
    one line."""
    shown = dict(result)
    if isinstance(shown.get("tables"), list):
        shown["tables"] = f"{len(shown['tables'])} tables (listed above)"
    return _dump(shown, "")


def _dump(value: Any, indent: str) -> str:
    inner = indent + "  "
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(str(k))}: {_dump(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        return "[\n" + ",\n".join(inner + _dump(v, inner) for v in value) + f"\n{indent}]"
    return json.dumps(value, default=str)
