"""Where stage 1's labeled example comes from (``--one-shot-from``), and which one is taken.

The TTRA paper names a source per benchmark: §4.1 draws MATH500's example among its level-1
problems and AIME's from AIME 2023 (stage 2 then runs on AIME 2024 and 2025); appendix A.1 draws
GSM8K's from its training split and MathQA's and GSM-plus-mini's from the test set itself;
appendix C takes one case per pathology (``--one-shot-per-label``). ``--one-shot-from`` says which
of these a run uses:

- ``tasks``: drawn with the seed from the task file; the rest is stage 2's and the evaluation's.
- ``where:FIELD=VALUE`` (``where:level=1``): drawn only among the task file's records whose field
  FIELD reads VALUE (case and spaces ignored; MATH's "Level 1" matches ``level=1``); every other task, the other matching ones included, stays in the pool. A file
  in which no record has FIELD is refused (an AIME file under preset ``b`` must name its AIME 2023
  file instead).
- ``split:NAME`` (``split:train``): the records whose ``split`` field is NAME are the candidates
  and all of them stay out of stage 2 and the evaluation (a file holding GSM8K's train and test
  splits). A file whose records carry no ``split`` field at all is read as the test split alone
  and the example is drawn from it, appendix A.1's rule for a benchmark without a training split
  (GSM-plus-mini); the selection says so.
- ``file:PATH`` (or a plain path to a ``.jsonl`` file): drawn from that task file (AIME 2023, a
  GSM8K train-split file); every task of the task file stays in the pool.

``--one-shot-id`` (or ``--one-shot-ids``) names the example instead of drawing it, looked up among
the same candidates: ``--one-shot-from file:aime2023.jsonl --one-shot-id 2023-I-4``, or
``--one-shot-from file:gsm8k_train.jsonl --one-shot-id line-17``. This module needs no torch, so a
dry run can say which example a run would take.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from studyapp.pipelines.ttra.config import TTRAOptions, one_shot_id_list, parse_source
from studyapp.pipelines.ttra.tasks import Task, load_tasks


def _normal(text: str, name: str) -> str:
    """A field's text for comparison: case and spaces ignored, and a leading repeat of the
    field's name dropped (MATH's "Level 1" reads as MATH500's 1).

    >>> _normal("Level 1", "level"), _normal(" Train ", "split")
    ('1', 'train')
    """
    text = " ".join(text.split()).lower()
    prefix = name.lower() + " "
    return text[len(prefix) :] if text.startswith(prefix) else text


def _matches(task: Task, name: str, value: str) -> bool:
    found = task.value_of(name)
    return found is not None and _normal(found, name) == _normal(value, name)


@dataclass(frozen=True)
class Selection:
    """Stage 1's examples, the pool left for stage 2 and evaluation, and how they were chosen."""

    chosen: list[Task]
    pool: list[Task]
    source: str  # what the examples were drawn from, in words
    rule: str  # --one-shot-from as given
    candidates: int  # how many tasks the draw (or the id lookup) was among

    def record(self) -> dict[str, object]:
        return {
            "from": self.rule,
            "source": self.source,
            "candidates": self.candidates,
            "ids": [t.id for t in self.chosen],
        }


def candidates_and_pool(
    tasks: list[Task], options: TTRAOptions
) -> tuple[list[Task], list[Task], str]:
    """The tasks stage 1 may take, the pool before the chosen ones leave it, and the source in
    words; a source that finds no candidate raises ValueError."""
    source = parse_source(options.one_shot_from)
    if source.kind == "tasks":
        return tasks, tasks, source.describe()
    if source.kind == "file":
        if not Path(source.path).is_file():
            raise ValueError(f"--one-shot-from: no task file {source.path}")
        return load_tasks(source.path), tasks, source.describe()
    if source.kind == "where":
        if not any(t.value_of(source.field) is not None for t in tasks):
            raise ValueError(
                f"--one-shot-from where:{source.field}={source.value}: no task has a "
                f"{source.field!r} field (for AIME, name the AIME 2023 file: "
                "--one-shot-from file:PATH; elsewhere --one-shot-from tasks)"
            )
        found = [t for t in tasks if _matches(t, source.field, source.value)]
        if not found:
            raise ValueError(
                f"--one-shot-from where:{source.field}={source.value}: no task matches"
            )
        return found, tasks, source.describe()
    # split
    if not any(t.value_of("split") is not None for t in tasks):
        return (
            tasks,
            tasks,
            (
                f"the task file (no record has a split field, so no '{source.value}' split: read as "
                "the test split alone, A.1's rule for GSM-plus-mini)"
            ),
        )
    found = [t for t in tasks if _matches(t, "split", source.value)]
    if not found:
        raise ValueError(f"--one-shot-from split:{source.value}: no record is in that split")
    rest = [t for t in tasks if not _matches(t, "split", source.value)]
    if not rest:
        raise ValueError(f"--one-shot-from split:{source.value}: no task outside that split")
    return found, rest, f"the task file's '{source.value}' split ({len(found)} records)"


def select(tasks: list[Task], options: TTRAOptions) -> Selection:
    """Stage 1's labeled tasks and the rest (the questions of stage 2 and evaluation).

    Among the candidates of ``one_shot_from``: by ``one_shot_ids`` (k tasks, in that order) or
    ``one_shot_id``; else with ``one_shot_per_label`` one task per distinct label, each drawn with
    the seed (appendix C: one case per pathology); else one task drawn with the seed (§2.2). An
    unknown id raises ValueError.
    """
    candidates, pool, described = candidates_and_pool(tasks, options)
    if options.one_shot_ids is not None or options.one_shot_id is not None:
        wanted = one_shot_id_list(options.one_shot_ids) or [str(options.one_shot_id)]
        by_id = {t.id: t for t in candidates}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise ValueError(f"no task has id {', '.join(repr(i) for i in missing)} in {described}")
        chosen = [by_id[i] for i in dict.fromkeys(wanted)]
    elif options.one_shot_per_label:
        rng = random.Random(options.seed)
        by_label: dict[str, list[Task]] = {}
        for task in candidates:
            by_label.setdefault(task.answer, []).append(task)
        chosen = [rng.choice(by_label[label]) for label in sorted(by_label)]
    else:
        chosen = [random.Random(options.seed).choice(candidates)]
    if parse_source(options.one_shot_from).kind == "file":
        rest = pool  # another file's example: nothing leaves the task file
    else:
        ids = {t.id for t in chosen}
        rest = [t for t in pool if t.id not in ids]
    return Selection(chosen, rest, described, options.one_shot_from, len(candidates))
