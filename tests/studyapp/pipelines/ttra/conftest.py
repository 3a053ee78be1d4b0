"""Fixtures for the TTRA tests: no hub access, and one tiny model built from code per session."""

import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A 2-layer random Qwen2-style model with a byte-level BPE tokenizer, saved to a folder."""
    pytest.importorskip("trl")
    from studyapp.pipelines.ttra.tiny import build_tiny_model

    return str(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model"))
