"""The prompt set as data: export, override by file name, refusal of bad folders, hashes."""

import json

import pytest

from games.__main__ import main
from games.llm import prompts, render


@pytest.fixture(autouse=True)
def _shipped_prompts():
    prompts.use(None)
    yield
    prompts.use(None)


def test_the_manifest_lists_exactly_each_files_placeholders():
    shipped = prompts.shipped()
    assert set(shipped.texts) == set(prompts.NAMES)
    for name in prompts.NAMES:
        assert prompts.placeholders(shipped.texts[name]) == prompts.variables(name), name


def test_export_writes_every_prompt_and_an_unchanged_export_changes_nothing(tmp_path):
    assert main(["prompts", "export", str(tmp_path / "set")]) == 0
    names = {p.stem for p in (tmp_path / "set").glob("*.txt")}
    assert names == set(prompts.NAMES) and (tmp_path / "set" / "manifest.toml").exists()
    loaded = prompts.load_set(tmp_path / "set")
    assert loaded.fingerprint() == prompts.shipped().fingerprint()
    assert loaded.name == "shipped" and loaded.overridden == ()


def test_an_edited_file_replaces_its_namesake_and_changes_its_hash(tmp_path):
    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "undercover_rules.txt").write_text("Paper rules for $players players ($last_seat).")
    before = prompts.fingerprint()
    prompts.use(folder)
    assert render.undercover_rules(4) == "Paper rules for 4 players (3)."
    after = prompts.fingerprint()
    assert after["name"] == "paper" and after["overridden"] == ["undercover_rules"]
    changed = {f for f in before["sha256"] if before["sha256"][f] != after["sha256"][f]}
    assert changed == {"undercover_rules.txt"}
    prompts.use(None)
    assert prompts.fingerprint() == before


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("rulez.txt", "anything", "rulez.txt: unknown prompt name"),
        # undercover_rules' slots are optional (the paper's A.2 text has none); a turn's are not
        ("twenty_questions_questioner_turn.txt", "$history $number", "missing $max_questions"),
        ("undercover_rules.txt", "$players $last_seat $colour", "unknown $colour"),
        ("policy_section.txt", "costs $5 $policy", "a '$' that starts no placeholder"),
        ("notes.md", "hello", "notes.md: not a prompt file"),
    ],
)
def test_a_bad_folder_is_refused_with_the_file_and_nothing_changes(tmp_path, name, text, message):
    (tmp_path / name).write_text(text)
    (tmp_path / "reflection.txt").write_text("Changed $rules $transcript $reward")
    before = prompts.fingerprint()
    with pytest.raises(prompts.PromptSetError, match=message.replace("$", r"\$")):
        prompts.use(tmp_path)
    assert prompts.fingerprint() == before


def test_the_experiment_command_refuses_a_bad_prompt_folder_before_playing(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "curator.txt").write_text("no variables")
    out = tmp_path / "out.jsonl"
    argv = ["experiment", "--game", "undercover", "--model", "offline:kb", "--cases", "1"]
    argv += ["--samples", "1", "--out", str(out), "--no-progress", "--prompts", str(tmp_path / "p")]
    with pytest.raises(SystemExit, match="curator.txt: missing"):
        main(argv)
    assert not out.exists()


def test_records_store_the_hashes_of_the_prompt_set_they_used(tmp_path, llm_server, monkeypatch):
    from tests.fakes.game_responder import GameResponder

    llm_server.responder = GameResponder()
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    folder = tmp_path / "mine"
    folder.mkdir()
    text = "You ask. Answer inside <answer></answer>, e.g. <answer>Is it red?</answer> (edited)"
    (folder / "twenty_questions_questioner.txt").write_text(text)
    out = tmp_path / "out.jsonl"
    argv = ["experiment", "--game", "twenty-questions", "--model", "openai-compatible:fake"]
    argv += ["--oracle", "offline:kb", "--cases", "1", "--samples", "1", "--out", str(out)]
    argv += ["--no-progress", "--no-cache", "--prompts", str(folder)]
    assert main(argv) == 0
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["prompts"]["overridden"] == ["twenty_questions_questioner"]
    assert record["prompts"]["sha256"] == prompts.load_set(folder).fingerprint()["sha256"]
    assert any("(edited)" in str(r.body) for r in llm_server.requests)


def test_the_baseline_prompts_state_rules_and_format_only():
    shipped = prompts.shipped().texts
    for name in ("twenty_questions_questioner", "undercover_voter", "undercover_speaker"):
        lowered = shipped[name].lower()
        for coaching in ("narrow", "best", "single property", "fit the shared", "least"):
            assert coaching not in lowered, (name, coaching)


def test_a_catalog_of_other_prompt_files_gets_the_same_overrides_and_hashes(tmp_path):
    # Another component's prompt folder (the LWE judge's, say), with no manifest: the variables
    # are the placeholders of its shipped files.
    own = tmp_path / "judge"
    own.mkdir()
    (own / "vanilla.txt").write_text("Judge this:\n$case\nAnswer A or B.")
    catalog = prompts.Catalog(own)
    assert catalog.variables("vanilla") == ("case",)
    exported = catalog.export(tmp_path / "out")
    assert {p.name for p in exported} == {"vanilla.txt", "manifest.toml"}
    (tmp_path / "out" / "vanilla.txt").write_text("Be strict.\n$case")
    before = catalog.fingerprint()
    catalog.use(tmp_path / "out")
    assert catalog.render("vanilla", case="X") == "Be strict.\nX"
    assert catalog.fingerprint()["sha256"] != before["sha256"]
    (tmp_path / "out" / "vanilla.txt").write_text("no case here")
    with pytest.raises(prompts.PromptSetError, match=r"missing \$case"):
        catalog.use(tmp_path / "out")
    assert prompts.fingerprint()["name"] == "shipped"  # the games' set is untouched


def test_the_papers_rules_without_slots_run_unchanged(tmp_path):
    """Appendix A's texts name their numbers in words: a folder holding them is taken as is."""
    (tmp_path / "twenty_questions_rules.txt").write_text(
        "You are playing the game Twenty Questions. In this game, there are 157 candidate words."
    )
    (tmp_path / "undercover_rules.txt").write_text("Game Rules of Who is the Difference")
    loaded = prompts.load_set(tmp_path)
    assert set(loaded.overridden) == {"twenty_questions_rules", "undercover_rules"}
    manifest = prompts.MANIFEST_ENTRIES
    assert manifest["twenty_questions_rules"]["paper"].startswith("Appendix A.1")
    assert manifest["human_policy_undercover"]["paper"].startswith("Appendix B.2")


def test_a_catalog_of_format_string_files_checks_and_fills_them_too(tmp_path):
    """TTRA's prompt files are str.format strings ({question}, {{ }} literal): the same loader
    reads them with style="format", refusing a file whose fields differ."""
    from pathlib import Path

    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "math.txt").write_text("Solve {question}. Put the answer in \\boxed{{}}. \n")
    catalog = prompts.Catalog(shipped, where="the TTRA prompts", style="format")
    assert catalog.variables("math") == ("question",)
    assert catalog.render("math", question="1+1") == "Solve 1+1. Put the answer in \\boxed{}. "
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "math.txt").write_text("Solve {problem}.")
    with pytest.raises(prompts.PromptSetError, match=r"missing \{question\}; unknown \{problem\}"):
        catalog.load_set(mine)
    (mine / "math.txt").write_text("Q: {question} {}")
    with pytest.raises(prompts.PromptSetError, match="positional"):
        catalog.load_set(mine)
    (mine / "math.txt").write_text("Q: {question}\nA:")
    assert catalog.use(mine).overridden == ("math",)
    assert catalog.render("math", question="2+2") == "Q: 2+2\nA:"
    assert Path(catalog.current().source).name == "mine"
