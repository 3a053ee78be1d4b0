"""MIMIC-CDM-FI preprocessing (§5.1, appendix C): sections over 1,000 tokens summarised by a model
through games.llm (here the loopback fake server), cached; then the longest section cut until the
4,000-token prompt fits, the frame's instruction never cut. Also a TTRA run's own prompt limit."""

import json

import pytest

pytest.importorskip("trl")

from studyapp.pipelines.ttra.mimic import main  # noqa: E402
from studyapp.pipelines.ttra.prompt_files import load_prompts  # noqa: E402
from studyapp.pipelines.ttra.tasks import Task, load_tasks  # noqa: E402
from tests.fakes.llm_server import FakeLLMServer, last_user_text  # noqa: E402
from tests.studyapp.pipelines.ttra.test_ttra_pipeline import tiny_options  # noqa: E402

INSTRUCTION = "You are an expert Clinical Decision Support System."


def tokens(tokenizer, text):
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


@pytest.fixture
def tokenizer(tiny_model):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model)


@pytest.fixture
def summariser(monkeypatch):
    with FakeLLMServer(lambda body: "CT: dilated appendix 11 mm, fat stranding.") as server:
        monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "k")
        yield server


def cases_file(tmp_path, history_words=20, imaging_words=20):
    records = [
        {
            "id": "c1",
            "pathology": "appendicitis",
            "sections": {
                "Patient History": "Right lower quadrant pain since yesterday. " * history_words,
                "Physical Examination": "Tender at McBurney's point.",
                "Laboratory Tests": {"WBC": "14.2 K/uL", "CRP": "88 mg/L"},
                "Imaging Reports": ["CT abdomen: appendix measures 11 mm. " * imaging_words],
            },
        }
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def run(tmp_path, tiny_model, cases, *extra):
    out = tmp_path / "tasks.jsonl"
    argv = ["--cases", str(cases), "--out", str(out), "--tokenizer", tiny_model,
            "--summariser", "openai-compatible:fake-nano", "--cache", str(tmp_path / "c.sqlite"),
            *extra]  # fmt: skip
    assert main(argv) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_a_long_section_is_summarised_once_and_cached(tmp_path, tiny_model, tokenizer, summariser):
    cases = cases_file(tmp_path, imaging_words=200)
    long_report = "CT abdomen: appendix measures 11 mm. " * 200
    assert tokens(tokenizer, long_report) > 1000
    (record,) = run(tmp_path, tiny_model, cases)
    assert record["summarised"] == ["Imaging Reports"] and record["answer"] == "appendicitis"
    assert "Imaging Reports:\nCT: dilated appendix 11 mm, fat stranding." in record["question"]
    assert "Tender at McBurney's point." in record["question"]  # short sections as they were
    assert len(summariser.requests) == 1
    sent = last_user_text(summariser.requests[0].body)
    assert long_report.strip() in sent and "without adding anything" in sent
    assert sent.rstrip().endswith("Summary:")
    run(tmp_path, tiny_model, cases)  # again: every summary comes from the cache
    assert len(summariser.requests) == 1
    meta = json.loads((tmp_path / "tasks.jsonl.meta.json").read_text())
    assert meta["summariser"] == "openai-compatible:fake-nano" and meta["summarised_sections"] == 1
    (task,) = load_tasks(tmp_path / "tasks.jsonl")
    assert task.kind == "word" and task.answer == "appendicitis"


def test_the_papers_own_prompt_can_be_brought_in_a_file(tmp_path, tiny_model, summariser):
    own = tmp_path / "own.txt"
    own.write_text("Please summarize the following result:\n{Report}\nSummary:\n")
    run(tmp_path, tiny_model, cases_file(tmp_path, imaging_words=200), "--summary-prompt", str(own))
    sent = last_user_text(summariser.requests[-1].body)
    assert sent.startswith("Please summarize the following result:\nCT abdomen")
    bad = tmp_path / "bad.txt"
    bad.write_text("no slot here")
    assert main(["--cases", str(own), "--out", str(tmp_path / "x"), "--tokenizer", tiny_model,
                 "--summariser", "offline:x", "--summary-prompt", str(bad)]) == 2  # fmt: skip


def test_the_longest_section_is_cut_and_the_instruction_kept(
    tmp_path, tiny_model, tokenizer, summariser
):
    cases = cases_file(tmp_path, history_words=60, imaging_words=10)
    limit = 1500  # this tokenizer spends about a token a character
    (record,) = run(
        tmp_path, tiny_model, cases, "--max-prompt-length", str(limit), "--section-limit", "5000"
    )
    assert record["summarised"] == []  # under 1,000 tokens: no summary, a cut instead
    assert {c["section"] for c in record["cut"]} == {"Patient History"}  # the longest alone
    assert "Tender at McBurney's point." in record["question"]
    assert "Imaging Reports:\nCT abdomen" in record["question"]
    frame = load_prompts(None, "s5-clinical")
    user = Task("c1", record["question"], "appendicitis", "word").prompt(frame)
    messages = [{"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": user}]  # fmt: skip
    whole = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    assert limit - 20 <= len(whole if isinstance(whole, list) else whole["input_ids"]) <= limit
    assert user.startswith(INSTRUCTION) and user.rstrip().endswith("\\boxed{}.")
    assert record["prompt_tokens"] <= limit


def test_a_runs_prompt_limit_cuts_the_case_not_the_clinical_instruction(tiny_model, tokenizer):
    from studyapp.pipelines.ttra.sampling import prompt_text
    from studyapp.pipelines.ttra.train import load

    _, tok = load(tiny_model)
    case = Task("c", "Patient History:\n" + "Pain in the right lower quadrant. " * 200, "x", "word")
    options = tiny_options(tiny_model, max_prompt_length=900, prompt_set="s5-clinical")
    held = prompt_text(case, options, tok)
    assert 850 <= tokens(tok, held) <= 900
    assert INSTRUCTION in held and "enclosed in \\boxed{}." in held
    assert "Pain in the right lower quadrant." in held
