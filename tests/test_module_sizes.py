"""Every product module (games/, analysis/, studyapp/; migrations aside, which Django writes) is at
most 500 lines: past that a module holds several things, and it is split along its seams into
modules whose names say what each holds."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("games", "analysis", "studyapp")
MOST_LINES = 500

# Modules allowed past the limit, each with its reason. Empty: none has one.
EXCEPTIONS: dict[str, str] = {}


def product_modules() -> list[Path]:
    return [
        path
        for package in PRODUCT
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.relative_to(ROOT).parts
    ]


def lines(path: Path) -> int:
    with path.open(encoding="utf-8") as source:
        return sum(1 for _ in source)


def test_no_product_module_is_over_500_lines() -> None:
    over = {
        str(path.relative_to(ROOT)): lines(path)
        for path in product_modules()
        if lines(path) > MOST_LINES and str(path.relative_to(ROOT)) not in EXCEPTIONS
    }
    assert over == {}, f"split these along their seams (lines each): {over}"


def test_every_exception_is_still_a_module_over_the_limit() -> None:
    stale = [
        name
        for name in EXCEPTIONS
        if not (ROOT / name).is_file() or lines(ROOT / name) <= MOST_LINES
    ]
    assert stale == [], f"no longer needed: delete these from EXCEPTIONS: {stale}"


def test_the_count_finds_the_product_modules_and_skips_migrations() -> None:
    found = {str(path.relative_to(ROOT)) for path in product_modules()}
    assert "studyapp/settings.py" in found and "games/__init__.py" in found
    assert not any("/migrations/" in name for name in found)
