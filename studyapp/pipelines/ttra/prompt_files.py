"""The texts TTRA's models read, as files: built-in ones in ``prompts/``, any subset overridable
from a directory of the same file names (``--prompts DIR``), and the sha256 of each file in force
for the record.

``math.txt`` ({question}), ``choice.txt`` ({question}, {options}), ``word.txt`` ({candidates},
{transcript}: a Twenty Questions game) and ``label.txt`` ({question}: the frame around any other
task with a free-text label, such as a clinical case) are Python format strings: ``{{`` and ``}}``
are literal braces.

A section of the paper that words a prompt its own way has a built-in set under ``prompts/sets/``
(``--prompt-set``, chosen by the presets): appendix A.1's GSM8K prompt (``a1-gsm8k``) and appendix
C's clinical frame (``s5-clinical``). The order of precedence: a ``--prompts`` directory's file, the
set's file, the built-in file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

PROMPTS_DIR = Path(__file__).parent / "prompts"
NAMES = tuple(sorted(p.stem for p in PROMPTS_DIR.glob("*.txt")))
SETS_DIR = PROMPTS_DIR / "sets"
SETS = tuple(sorted(p.name for p in SETS_DIR.iterdir() if p.is_dir()))


class PromptDirError(ValueError):
    """A prompt directory that cannot be used; the message names the files."""


def prompt_paths(
    directory: str | Path | None = None, prompt_set: str | None = None
) -> dict[str, Path]:
    """The file in force for each prompt name: the directory's where it has one, else the set's,
    else the built-in one.

    Every ``.txt`` file in the directory must be a known name; anything else is refused, so a
    misspelt file never silently leaves the built-in text in force.
    """
    paths = {name: PROMPTS_DIR / f"{name}.txt" for name in NAMES}
    if prompt_set is not None:
        if prompt_set not in SETS:
            raise PromptDirError(f"no prompt set {prompt_set!r}; the sets are {', '.join(SETS)}")
        paths.update({p.stem: p for p in (SETS_DIR / prompt_set).glob("*.txt")})
    if directory is None:
        return paths
    folder = Path(directory)
    if not folder.is_dir():
        raise PromptDirError(f"--prompts {folder}: not a directory")
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    unknown = [p.name for p in files if p.suffix != ".txt" or p.stem not in NAMES]
    if unknown:
        raise PromptDirError(
            f"--prompts {folder}: unknown prompt file(s) {', '.join(unknown)}; "
            f"the names are {', '.join(n + '.txt' for n in NAMES)}"
        )
    paths.update({p.stem: p for p in files})
    return paths


def load_prompts(
    directory: str | Path | None = None, prompt_set: str | None = None
) -> dict[str, str]:
    """Name → text (its one trailing newline dropped) for every prompt in force."""
    return {
        name: path.read_text(encoding="utf-8").removesuffix("\n")
        for name, path in prompt_paths(directory, prompt_set).items()
    }


def prompt_hashes(
    directory: str | Path | None = None, prompt_set: str | None = None
) -> dict[str, str]:
    """Name → sha256 of the file in force, for the run's record."""
    return {
        name: hashlib.sha256(path.read_bytes()).hexdigest()
        for name, path in prompt_paths(directory, prompt_set).items()
    }
