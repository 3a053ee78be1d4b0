"""games.provenance: what produced an artefact, from the checkout and the installed packages."""

import hashlib
import subprocess
from importlib import metadata
from pathlib import Path

import pytest

from games.provenance import PACKAGES, prompt_hashes, provenance, public_url

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("url", "public"),
    [
        ("https://api.openai.com/v1", "https://api.openai.com/v1"),
        ("http://me:secret@127.0.0.1:8000/v1?api_key=x#f", "http://127.0.0.1:8000/v1"),
        ("http://tok@[::1]:11434/v1", "http://[::1]:11434/v1"),
        (None, None),
        ("", None),
    ],
)
def test_a_server_address_loses_its_credentials(url, public):
    assert public_url(url) == public


def test_it_names_the_checkout_the_locks_and_the_packages():
    block = provenance({"openai:gpt-4o": "https://u:p@api.openai.com/v1", "offline:kb": None})
    assert block["project"]["version"] == metadata.version("studyapp")
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert block["project"]["commit"].removesuffix("-dirty") == head
    for name in ("requirements/lock.txt", "requirements/lock-ttra.txt"):
        assert block["lock"][name] == hashlib.sha256((ROOT / name).read_bytes()).hexdigest()
    assert set(block["packages"]) == set(PACKAGES)
    assert block["packages"]["pandas"] == metadata.version("pandas")
    assert block["models"] == [
        {"spec": "offline:kb", "server": None},
        {"spec": "openai:gpt-4o", "server": "https://api.openai.com/v1"},
    ]
    assert "prompts" not in block
    assert provenance(prompts={"set": "v1"})["prompts"] == {"set": "v1"}


def test_outside_a_checkout_the_commit_and_locks_are_unknown(tmp_path):
    block = provenance(root=tmp_path)
    assert block["project"]["commit"] is None
    assert set(block["lock"].values()) == {None}


def test_the_prompt_set_hash_changes_with_any_template(tmp_path):
    (tmp_path / "a.txt").write_text("Ask a question.")
    (tmp_path / "b.txt").write_text("Answer yes or no.")
    first = prompt_hashes(tmp_path)
    assert set(first["files"]) == {"a.txt", "b.txt"}
    assert first["files"]["a.txt"] == hashlib.sha256(b"Ask a question.").hexdigest()
    (tmp_path / "b.txt").write_text("Answer yes, no or maybe.")
    second = prompt_hashes(tmp_path)
    assert (
        second["sha256"] != first["sha256"] and second["files"]["a.txt"] == first["files"]["a.txt"]
    )
