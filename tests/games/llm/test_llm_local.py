"""The local model provider (``local:<path>``) without a model: its spec, and that importing it
loads neither torch nor transformers (the ttra extra), so ``games`` imports without them. A tiny
saved model answering through it is tested with the TTRA pipeline
(tests/studyapp/pipelines/ttra/test_ttra_pipeline.py)."""

import subprocess
import sys
from pathlib import Path

import pytest

from games.llm.local import LocalProvider
from games.llm.providers import local_path

ROOT = Path(__file__).resolve().parents[3]  # python -c imports this checkout's games


def test_a_local_spec_needs_a_path():
    with pytest.raises(ValueError, match="local:<path>"):
        LocalProvider.from_spec("local:")


def test_local_specs_are_read_in_one_place():
    assert local_path("local:/models/aligned") == "/models/aligned"
    assert local_path("openai:gpt-4o") is None
    with pytest.raises(ValueError, match="needs a path"):
        local_path("local:")
    with pytest.raises(ValueError, match="local:<path>"):
        local_path("openai:gpt-4o", required=True)
    assert LocalProvider.from_spec("local:/models/aligned").path == "/models/aligned"


def test_importing_the_local_provider_loads_no_model_library():
    code = (
        "import sys, games.llm.local; "
        "print(sorted(m for m in ('torch', 'transformers', 'django') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
