"""Figure 5 of the LWE paper: how the meta-prompt changed in one refinement step, words removed in
red and words added in blue, with the full texts before and after (its appendix F, Figures 23
and 24). Read from a saved run; no model is called.

*Becoming Experienced Judges: Selective Test-Time Learning for Evaluators* (arXiv:2512.06751).

    python -m studyapp.pipelines.lwe.metadiff var/table1 --benchmark VL \\
        [--method selective-lwe] [--order 0] [--step 1] --out var/figure5

The source is Table 1's ``--out`` folder (with ``--benchmark``; the method's
``runs/<benchmark>/<method>.json``), a subset run's JSON, or any run JSON of
``studyapp.pipelines.lwe``. ``--step N`` picks the N-th change of the meta-prompt in that order
(a refinement or a condensing the judge's reply replaced it with; default 1, the first); the
paper does not say which step its figure shows. It writes

- ``figure5.html``: the meta-prompt after the step, removed words struck through in red, added
  words in blue;
- ``figure5.txt``: the same as a word diff, ``[-removed-]`` and ``{+added+}``;
- ``figure5_before.txt``, ``figure5_after.txt``: the two full texts (Figures 23 and 24);
- ``figure5.json``: where they came from (file, order, step, after which case) and the counts.
"""

from __future__ import annotations

import argparse
import difflib
import html
import json
import re
import sys
from pathlib import Path
from typing import Any

TOKEN = re.compile(r"\s+|[^\s]+")


class DiffError(ValueError):
    """The run or step asked for is not there; the message says which."""


def changes(run: dict[str, Any]) -> list[tuple[dict[str, Any], str, str]]:
    """Every change of an order's meta-prompt: (history event, text before, text after)."""
    before = run.get("initial_meta_prompt")
    out = []
    for event in run.get("history", []):
        text = event.get("meta_prompt")
        if event.get("step") not in ("refine", "summarise") or event.get("kept_previous"):
            continue
        if text is None or before is None:
            raise DiffError(
                "this run was saved before the meta-prompt's texts were recorded; run it again"
            )
        out.append((event, before, text))
        before = text
    return out


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """(kind, text) pieces: "same", "removed" or "added", by words (whitespace kept)."""
    old, new = TOKEN.findall(before), TOKEN.findall(after)
    pieces: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pieces.append(("same", "".join(old[i1:i2])))
            continue
        if tag in ("delete", "replace"):
            pieces.append(("removed", "".join(old[i1:i2])))
        if tag in ("insert", "replace"):
            pieces.append(("added", "".join(new[j1:j2])))
    return pieces


def as_text(pieces: list[tuple[str, str]]) -> str:
    marks = {"same": "{}", "removed": "[-{}-]", "added": "{{+{}+}}"}
    return "".join(marks[kind].format(text) for kind, text in pieces)


def as_html(pieces: list[tuple[str, str]], title: str) -> str:
    styles = {
        "same": "{}",
        "removed": '<del style="color:#c62828">{}</del>',
        "added": '<ins style="color:#1565c0;text-decoration:none">{}</ins>',
    }
    body = "".join(styles[kind].format(html.escape(text)) for kind, text in pieces)
    return (
        '<!doctype html>\n<html><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title></head>\n<body>\n<h1>{html.escape(title)}</h1>\n"
        '<p><del style="color:#c62828">removed</del> · '
        '<ins style="color:#1565c0;text-decoration:none">added</ins></p>\n'
        f'<pre style="white-space:pre-wrap;font-family:serif">{body}</pre>\n</body></html>\n'
    )


def source_file(source: Path, benchmark: str | None, method: str) -> Path:
    if source.is_file():
        return source
    if not source.is_dir():
        raise DiffError(f"{source}: no such file or folder")
    if not benchmark:
        raise DiffError(f"{source} is a folder: name the benchmark (--benchmark)")
    path = source / "runs" / benchmark / f"{method}.json"
    if not path.is_file():
        raise DiffError(f"{path}: missing (run the method on that benchmark first)")
    return path


def write_figure5(path: Path, order: int, step: int, out: Path) -> list[Path]:
    result = json.loads(path.read_text(encoding="utf-8"))
    runs = result.get("runs") or []
    if not 0 <= order < len(runs):
        raise DiffError(f"{path}: no order {order} (it has {len(runs)})")
    found = changes(runs[order])
    if not found:
        raise DiffError(f"{path}: order {order}'s meta-prompt never changed")
    if not 1 <= step <= len(found):
        raise DiffError(f"{path}: order {order} has {len(found)} change(s), not a step {step}")
    event, before, after = found[step - 1]
    pieces = word_diff(before, after)
    method = result.get("method", path.stem)
    title = (
        f"The meta-prompt of {method}, order {order}, change {step} "
        f"({event['step']} after case {event['after_case']})"
    )
    out.mkdir(parents=True, exist_ok=True)
    written = {
        "figure5.html": as_html(pieces, title),
        "figure5.txt": as_text(pieces) + "\n",
        "figure5_before.txt": before + "\n",
        "figure5_after.txt": after + "\n",
    }
    for name, text in written.items():
        (out / name).write_text(text, encoding="utf-8")
    about = {
        "source": str(path),
        "method": method,
        "model": result.get("model"),
        "order": order,
        "step": step,
        "changes": len(found),
        "event": {k: v for k, v in event.items() if k != "meta_prompt"},
        "words_removed": sum(len(t.split()) for k, t in pieces if k == "removed"),
        "words_added": sum(len(t.split()) for k, t in pieces if k == "added"),
    }
    (out / "figure5.json").write_text(json.dumps(about, indent=2), encoding="utf-8")
    return [out / name for name in (*written, "figure5.json")]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m studyapp.pipelines.lwe.metadiff",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("source", type=Path, help="Table 1's --out folder, or a run's JSON")
    parser.add_argument("--benchmark", help="with a folder: the benchmark's name (VL, MM, ...)")
    parser.add_argument(
        "--method", default="selective-lwe", choices=("lwe", "selective-lwe"),
        help="with a folder: whose meta-prompt (default selective-lwe)",
    )  # fmt: skip
    parser.add_argument("--order", type=int, default=0, help="which random order (default 0)")
    parser.add_argument("--step", type=int, default=1, help="the N-th change (default 1)")
    parser.add_argument("--out", type=Path, required=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        path = source_file(args.source, args.benchmark, args.method)
        written = write_figure5(path, args.order, args.step, args.out)
    except (DiffError, OSError, json.JSONDecodeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
