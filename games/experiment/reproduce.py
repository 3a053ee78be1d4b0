"""``python -m games reproduce``: one command per table and figure of the test-time learning paper."""

from __future__ import annotations

import argparse


def add_reproduce(commands: argparse._SubParsersAction) -> None:
    """Register ``reproduce`` (filled in below)."""
