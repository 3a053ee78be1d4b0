"""Every text a model reads in ``games``, as plain files filled with ``string.Template``.

The shipped set is this folder: one ``<name>.txt`` per prompt and ``manifest.toml``, which lists
each file's variables. A researcher who holds other texts (a paper's exact rules or human
policies) exports the set (``python -m games prompts export DIR``), edits any files and passes the
folder back with ``--prompts DIR``: each file there replaces the shipped one of the same name, the
others stay shipped. :func:`load_set` refuses an unknown file name or a file whose placeholders
differ from the manifest's, so a typo never reaches a model as a stray ``$placeholder``.

The set in force is process-wide (:func:`use`); every experiment record stores its
:func:`fingerprint`, the name and the SHA-256 of every file, so a result says which texts it used.
``$name`` placeholders leave JSON braces and code examples in prompts alone.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from string import Formatter, Template

import tomli_w

_DIR = Path(__file__).parent
MANIFEST = "manifest.toml"
SHIPPED = "shipped"


class PromptSetError(ValueError):
    """A prompt folder that cannot be used; the message names the file and what is wrong."""


STYLES = ("template", "format")  # $name (string.Template) or {name} (str.format)


def placeholders(text: str, style: str = "template") -> tuple[str, ...]:
    """The placeholders of a prompt text: ``$name`` (``template``; an invalid ``$`` raises
    PromptSetError) or ``{name}`` (``format``, ``{{``/``}}`` literal braces; an unbalanced brace
    or a positional ``{}`` raises PromptSetError).

    >>> placeholders("Solve {question} {{x}}", "format")
    ('question',)
    """
    if style == "format":
        try:
            fields = [field for _, field, _, _ in Formatter().parse(text) if field is not None]
        except ValueError as err:
            raise PromptSetError(f"a brace that starts no {{placeholder}} ({err})") from None
        names = {field.split(".")[0].split("[")[0] for field in fields}
        if "" in names or any(name.isdigit() for name in names):
            raise PromptSetError("a positional {} placeholder (name it, or write {{ }} for braces)")
        return tuple(sorted(names))
    template = Template(text)
    if not template.is_valid():
        raise PromptSetError("a '$' that starts no placeholder (write $$ for a dollar sign)")
    return tuple(sorted(set(template.get_identifiers())))


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PromptSet:
    """Prompt texts by name; ``overridden`` names the files that came from ``source``; ``files``
    is the file each text was read from (for hashes of the files as written)."""

    name: str
    texts: dict[str, str]
    overridden: tuple[str, ...] = ()
    source: str | None = None
    files: dict[str, Path] = field(default_factory=dict, compare=False, repr=False)
    _templates: dict[str, Template] = field(default_factory=dict, compare=False, repr=False)

    def template(self, name: str) -> Template:
        if name not in self._templates:
            if name not in self.texts:
                raise KeyError(f"no prompt named {name!r}")
            self._templates[name] = Template(self.texts[name])
        return self._templates[name]

    def fingerprint(self) -> dict:
        """``{"name", "sha256": {file: hash}, "overridden": [...]}`` of this set."""
        return {
            "name": self.name,
            "sha256": {f"{n}.txt": _sha256(self.texts[n]) for n in sorted(self.texts)},
            "overridden": list(self.overridden),
        }


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8").strip()


class Catalog:
    """A folder of prompt files with its manifest, and the set of it in force.

    ``games`` has one (:data:`GAMES`, this folder); other code with prompt files of its own (the
    LWE judge's: ``studyapp.pipelines.lwe.judging.CATALOG``; TTRA's ``{name}`` files:
    ``studyapp.pipelines.ttra.prompt_files.CATALOG``) makes another with ``Catalog(its_folder)``
    and gets the same export, override, refusal and hashes: the one ``--prompts`` loader of the
    project. Without a ``manifest.toml`` the variables of each file are the placeholders of its
    shipped text."""

    def __init__(
        self,
        folder: str | Path,
        where: str = "python -m games prompts export DIR writes them all",
        style: str = "template",
    ) -> None:
        if style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}")
        self.folder = Path(folder)
        self.where = where  # how a user finds the names, for the refusal of an unknown file
        self.style = style  # $name files (games, LWE) or {name} files (TTRA's format strings)
        manifest = self.folder / MANIFEST
        if manifest.exists():
            self.entries: dict[str, dict] = tomllib.loads(manifest.read_text(encoding="utf-8"))
        else:
            self.entries = {
                path.stem: {"variables": list(placeholders(self.read(path), style))}
                for path in self.folder.glob("*.txt")
            }
        self.names: tuple[str, ...] = tuple(sorted(self.entries))
        self._current = self.shipped()

    def variables(self, name: str) -> tuple[str, ...]:
        """The placeholders the manifest lists for prompt ``name``."""
        if name not in self.entries:
            raise KeyError(f"no prompt named {name!r}")
        return tuple(sorted(self.entries[name].get("variables", [])))

    def shipped(self) -> PromptSet:
        """The set in the catalog's own folder."""
        files = {n: self.folder / f"{n}.txt" for n in self.names}
        return PromptSet(SHIPPED, {n: self.read(path) for n, path in files.items()}, files=files)

    def slot(self, name: str) -> str:
        """A placeholder as a file writes it, for messages."""
        return f"{{{name}}}" if self.style == "format" else f"${name}"

    def read(self, path: Path) -> str:
        """A prompt file's text: stripped (``template``), or only its one final newline dropped
        (``format``: a completion prompt may end in a space the model must continue after)."""
        if self.style == "format":
            return path.read_text(encoding="utf-8").removesuffix("\n")
        return _read(path)

    def load_set(self, folder: str | Path, base: PromptSet | None = None) -> PromptSet:
        """``base`` (the shipped set) with every ``*.txt`` of ``folder`` in place of its
        namesake.

        Refused with :class:`PromptSetError`, before anything changes: a missing folder, a file
        name that is no prompt, a file whose placeholders are not exactly the manifest's. A
        ``manifest.toml`` in the folder (an export writes one) is ignored: the variables are the
        code's, not the folder's."""
        folder = Path(folder)
        if not folder.is_dir():
            raise PromptSetError(f"{folder}: no such folder")
        base = base or self.shipped()
        texts = dict(base.texts)
        files = dict(base.files)
        changed: list[str] = []
        problems: list[str] = []
        for path in sorted(folder.iterdir()):
            if path.name == MANIFEST or path.name.startswith(".") or path.is_dir():
                continue
            problem = self._check(path, texts, changed)
            if problem:
                problems.append(f"{path.name}: {problem}")
            else:
                files[path.stem] = path  # in force, even where its text equals the base's
        if problems:
            raise PromptSetError(f"prompt folder {folder}: " + "; ".join(problems))
        name = base.name
        if changed:
            here = folder.resolve().name
            name = here if base.name == SHIPPED else f"{base.name}+{here}"
        overridden = tuple(dict.fromkeys((*base.overridden, *changed)))
        here = str(folder.resolve())
        source = here if base.source is None else f"{base.source}+{here}"
        return PromptSet(name, texts, overridden, source, files)

    def _check(self, path: Path, texts: dict[str, str], changed: list[str]) -> str:
        """What is wrong with one override file ('' when it is fine; then it is taken)."""
        if path.suffix != ".txt":
            return "not a prompt file (prompt files end in .txt)"
        name = path.stem
        if name not in self.entries:
            return f"unknown prompt name; the names are {', '.join(self.names)} ({self.where})"
        try:
            text = self.read(path)
        except UnicodeDecodeError:
            return "not UTF-8 text"
        try:
            found = placeholders(text, self.style)
        except PromptSetError as err:
            return str(err)
        wanted = self.variables(name)
        # A slot the manifest marks optional may be left out: a paper's own text states it in
        # words (Appendix A.1 names its 157 words and 20 questions).
        optional = set(self.entries[name].get("optional", []))
        missing = sorted(set(wanted) - set(found) - optional)
        extra = sorted(set(found) - set(wanted))
        if missing or extra:
            parts = []
            if missing:
                parts.append("missing " + ", ".join(self.slot(v) for v in missing))
            if extra:
                parts.append("unknown " + ", ".join(self.slot(v) for v in extra))
            listed = ", ".join(self.slot(v) for v in wanted) or "none"
            return f"{'; '.join(parts)} (its variables: {listed})"
        if text != texts[name]:
            texts[name] = text
            changed.append(name)
        return ""

    def use(self, folder: str | Path | None, variant: str | Path | None = None) -> PromptSet:
        """Put the set of ``folder`` in force (None: the shipped set), with the files of
        ``variant`` (a folder such as ``variants/undercover``) over it, and return it. Validation
        comes first: a refused folder leaves the set in force unchanged."""
        new = self.shipped() if folder is None else self.load_set(folder)
        if variant is not None:
            new = self.load_set(variant, new)
        self._current = new
        return new

    def current(self) -> PromptSet:
        return self._current

    def fingerprint(self) -> dict:
        """The name and per-file SHA-256 of the set in force."""
        return self._current.fingerprint()

    def export(self, folder: str | Path, prompt_set: PromptSet | None = None) -> list[Path]:
        """Write every prompt of ``prompt_set`` (the set in force) and the manifest."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        prompt_set = prompt_set or self._current
        written = []
        for name in self.names:
            path = folder / f"{name}.txt"
            path.write_text(prompt_set.texts[name] + "\n", encoding="utf-8")
            written.append(path)
        manifest = folder / MANIFEST
        if (self.folder / MANIFEST).exists():
            manifest.write_text((self.folder / MANIFEST).read_text(encoding="utf-8"), "utf-8")
        else:
            manifest.write_text(tomli_w.dumps(self.entries), encoding="utf-8")
        written.append(manifest)
        return written

    def render(self, name: str, **values: object) -> str:
        """Fill prompt ``name`` of the set in force; a missing value raises ``KeyError``."""
        if self.style == "format":
            return self._current.texts[name].format(**values)
        template = self._current.template(name)
        return template.substitute({key: str(value) for key, value in values.items()})

    def text(self, name: str) -> str:
        """A prompt with no placeholders, from the set in force."""
        return self.render(name)


GAMES = Catalog(_DIR)
MANIFEST_ENTRIES = GAMES.entries
NAMES = GAMES.names


def variables(name: str) -> tuple[str, ...]:
    return GAMES.variables(name)


def shipped() -> PromptSet:
    """The set in this package."""
    return GAMES.shipped()


def load_set(folder: str | Path, base: PromptSet | None = None) -> PromptSet:
    """:meth:`Catalog.load_set` of the games' catalog."""
    return GAMES.load_set(folder, base)


def use(folder: str | Path | None, variant: str | Path | None = None) -> PromptSet:
    """Put the set of ``folder`` in force for every model call of ``games`` (None: shipped),
    with ``variant``'s files over it."""
    return GAMES.use(folder, variant)


def current() -> PromptSet:
    """The set in force."""
    return GAMES.current()


def fingerprint() -> dict:
    """The name and per-file SHA-256 of the set in force: what records store under ``prompts``.
    Pure apart from reading which set is in force; safe to call from any code."""
    return GAMES.fingerprint()


def export(folder: str | Path, prompt_set: PromptSet | None = None) -> list[Path]:
    """Write every prompt of ``prompt_set`` (the set in force) and the manifest into ``folder``."""
    return GAMES.export(folder, prompt_set)


def render(name: str, **values: object) -> str:
    """Fill prompt ``name`` of the set in force; a missing value raises ``KeyError`` rather than
    leaving a stray ``$placeholder`` in front of a model."""
    return GAMES.render(name, **values)


def text(name: str) -> str:
    """A prompt with no placeholders (a shipped policy, for example), from the set in force."""
    return GAMES.text(name)
