"""How well the offline oracle ``offline:kb`` answers natural questions.

Reads the development set ``tests/games/twenty_questions/oracle_dev_set.jsonl`` (a word, a question
as a person would type it, the careful human answer, and a rough kind of question) and prints JSON:
agreement with the human answers, the share of meaning questions answered Invalid, the figures by
kind of question, the confusion table (human answer -> oracle answer), and the same figures for the
held-out third (every third line, never looked at while the oracle was tuned). It also scores
``oracle_fresh_set.jsonl``: questions in other phrasings, written in two rounds after tuning had
begun, to see how the oracle does on questions it was not built around: round 1, 208 questions
as people ask them (81.7% on first reading), round 2, 191 questions as language models ask them
(84.8% on first reading), round 3, 138 questions with many No answers, negations, comparisons and
subjects ("would a chef use it?") (89.9% on first reading), round 4, 111 questions on weights and
lengths in units, everyday reference objects, feel, danger and what things are made into (64.0% on
first reading), round 5, 191 questions on details, one or two for every word (84.8% on first
reading), round 6, 138 questions on comparisons between candidates, parts, actions done to the
thing, places, life, sounds, feel, negations and sets (83.3% on first reading), round 7, 99
everyday questions after an audit of the facts behind the commonest questions (74.7% on first
reading), round 8, 115 questions, many of them "is it for …?" (72.2% on first reading), round 9,
101 questions of the commonest kinds in casual phrasing ("is it something you …?") (99.0% on
first reading), round 10, 64 questions in the formal phrasing of language models ("is it used
primarily for recreational purposes?") (78.1% on first reading); what each round showed was then
fixed in general, not question by question.

    .venv/bin/python benchmarks/oracle.py            # figures only
    .venv/bin/python benchmarks/oracle.py --errors   # also list every disagreement
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.twenty_questions.agents import answer_question  # noqa: E402

SETS = Path(__file__).resolve().parent.parent / "tests" / "games" / "twenty_questions"
DEV_SET = SETS / "oracle_dev_set.jsonl"
FRESH_SET = SETS / "oracle_fresh_set.jsonl"


def load(path: Path = DEV_SET) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def figures(rows: list[dict]) -> dict:
    """Agreement over all rows; Invalid rate over rows whose human answer is Yes or No."""
    replies = [answer_question(row["question"], row["word"]) for row in rows]
    meaning = [
        reply for row, reply in zip(rows, replies, strict=True) if row["answer"] != "Invalid"
    ]
    by_kind: dict[str, list[bool]] = defaultdict(list)
    confusion: Counter[str] = Counter()
    for row, reply in zip(rows, replies, strict=True):
        by_kind[row["kind"]].append(reply == row["answer"])
        confusion[f"{row['answer']}->{reply}"] += 1
    return {
        "questions": len(rows),
        "agreement": round(
            sum(r == row["answer"] for row, r in zip(rows, replies, strict=True)) / len(rows), 4
        ),
        "meaning_questions": len(meaning),
        "invalid_rate_on_meaning": round(meaning.count("Invalid") / max(len(meaning), 1), 4),
        "by_kind": {
            kind: {"questions": len(hits), "agreement": round(sum(hits) / len(hits), 4)}
            for kind, hits in sorted(by_kind.items())
        },
        "confusion": dict(sorted(confusion.items())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--errors", action="store_true", help="list every disagreement")
    args = parser.parse_args(argv)
    rows = load()
    held_out = [row for i, row in enumerate(rows) if i % 3 == 2]
    tuned = [row for i, row in enumerate(rows) if i % 3 != 2]
    report = {
        "words": len({row["word"] for row in rows}),
        "all": figures(rows),
        "tuned_two_thirds": figures(tuned),
        "held_out_third": figures(held_out),
        "fresh_set": figures(load(FRESH_SET)),
        "fresh_set_by_round": {
            str(n): figures([row for row in load(FRESH_SET) if row.get("round") == n])
            for n in sorted({row.get("round") for row in load(FRESH_SET)})
        },
    }
    if args.errors:
        report["errors"] = [
            {**row, "oracle": reply, "held_out": i % 3 == 2}
            for i, row in enumerate(rows)
            if (reply := answer_question(row["question"], row["word"])) != row["answer"]
        ] + [
            {**row, "oracle": reply, "fresh": True}
            for row in load(FRESH_SET)
            if (reply := answer_question(row["question"], row["word"])) != row["answer"]
        ]
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
