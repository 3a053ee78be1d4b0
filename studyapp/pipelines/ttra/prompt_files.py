"""The texts TTRA's models read, as files: built-in ones in ``prompts/``, any subset overridable
from a directory of the same file names (``--prompts DIR``), and the sha256 of each file in force
for the record.

``math.txt`` ({question}), ``choice.txt`` ({question}, {options}), ``word.txt`` ({candidates},
{transcript}: a Twenty Questions game) and ``label.txt`` ({question}: the frame around any other
task with a free-text label, such as a clinical case) are Python format strings: ``{{`` and ``}}``
are literal braces.

A section of the paper that words a prompt its own way has a built-in set under ``prompts/sets/``
(``--prompt-set``, chosen by the presets): appendix A.1's GSM8K prompt (``a1-gsm8k``), its MathQA
prompt as printed, which asks for the letter in ``boxed{}`` with no backslash (``a1-mathqa``), and
appendix C's clinical frame (``s5-clinical``). The order of precedence: a ``--prompts`` directory's file, the
set's file, the built-in file.

The files are read by the project's one prompt loader, ``games.llm.prompts.Catalog`` (its
``format`` style): a file whose name is no prompt, or whose ``{slots}`` differ from the built-in
file's, is refused before anything runs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from games.llm.prompts import Catalog, PromptSet, PromptSetError

PROMPTS_DIR = Path(__file__).parent / "prompts"
SETS_DIR = PROMPTS_DIR / "sets"
SETS = tuple(sorted(p.name for p in SETS_DIR.iterdir() if p.is_dir()))
_FILES = ", ".join(sorted(p.name for p in PROMPTS_DIR.glob("*.txt")))
CATALOG = Catalog(
    PROMPTS_DIR, where=f"studyapp/pipelines/ttra/prompts/ holds {_FILES}", style="format"
)
NAMES = CATALOG.names
PromptDirError = PromptSetError  # the loader's error, under the name this package used


def prompts_in_force(
    directory: str | Path | None = None, prompt_set: str | None = None
) -> PromptSet:
    """The prompts in force: the built-in set, the named set's files over it, the directory's
    files over those.

    Every ``.txt`` file in the directory must be a known name with the built-in file's slots;
    anything else is refused, so a misspelt file never silently leaves the built-in text in force.
    """
    chosen = CATALOG.shipped()
    if prompt_set is not None:
        if prompt_set not in SETS:
            raise PromptDirError(f"no prompt set {prompt_set!r}; the sets are {', '.join(SETS)}")
        chosen = CATALOG.load_set(SETS_DIR / prompt_set, chosen)
    if directory is None:
        return chosen
    folder = Path(directory)
    if not folder.is_dir():
        raise PromptDirError(f"--prompts {folder}: not a directory")
    return CATALOG.load_set(folder, chosen)


def prompt_paths(
    directory: str | Path | None = None, prompt_set: str | None = None
) -> dict[str, Path]:
    """The file in force for each prompt name: the directory's where it has one, else the set's,
    else the built-in one."""
    return dict(prompts_in_force(directory, prompt_set).files)


def load_prompts(
    directory: str | Path | None = None, prompt_set: str | None = None
) -> dict[str, str]:
    """Name → text (its one trailing newline dropped) for every prompt in force."""
    return dict(prompts_in_force(directory, prompt_set).texts)


def prompt_hashes(
    directory: str | Path | None = None, prompt_set: str | None = None
) -> dict[str, str]:
    """Name → sha256 of the file in force, as written, for the run's record."""
    return {
        name: hashlib.sha256(path.read_bytes()).hexdigest()
        for name, path in prompt_paths(directory, prompt_set).items()
    }
