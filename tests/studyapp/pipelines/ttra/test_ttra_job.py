"""The ``ttra`` job kind: progress on the job row, results and the model as artifacts."""

import json

import pytest

pytest.importorskip("trl")

pytestmark = [pytest.mark.ttra, pytest.mark.django_db(transaction=True)]


def test_a_ttra_job_reports_progress_and_keeps_its_artifacts(tiny_model, tmp_path, settings):
    from studyapp.pipelines.jobs import create_job, execute
    from studyapp.pipelines.models import Job

    settings.MEDIA_ROOT = str(tmp_path)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "\n".join(
            json.dumps({"question": f"What is {i} + 1?", "answer": str(i + 1)}) for i in range(4)
        ),
        encoding="utf-8",
    )
    job = create_job(
        "ttra",
        {
            "model": tiny_model,
            "tasks": str(tasks),
            "num_generations": 2,
            "max_completion_length": 4,
            "eval_max_completion_length": 4,
            "one_shot_steps": 2,
            "ttrl_steps": 2,
            "ttrl_prompts_per_step": 1,
            "eval_samples": 1,
            "gradient_checkpointing": False,
            "use_vllm": "off",
        },
    )
    job = execute(job.pk)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.progress == 1.0
    assert job.message.startswith("finished · ttrl step 2/2: reward")
    assert "results.json" in job.artifacts
    assert "model/config.json" in job.artifacts
    assert (job.artifact_dir / "model" / "model.safetensors").exists()
    assert [s["stage"] for s in job.result["stages"]] == ["one-shot", "ttrl"]
    assert "per_question" not in job.result["aligned"]


def test_a_ttra_job_takes_a_preset_and_its_given_values_win(tiny_model, tmp_path, settings):
    from studyapp.pipelines.jobs import create_job, execute
    from studyapp.pipelines.models import Job

    settings.MEDIA_ROOT = str(tmp_path)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "\n".join(
            json.dumps({"id": f"t{i}", "question": f"What is {i} + 1?", "answer": str(i + 1)})
            for i in range(4)
        ),
        encoding="utf-8",
    )
    job = create_job(
        "ttra",
        {
            "model": tiny_model,
            "tasks": str(tasks),
            "preset": "a1-gsm8k",
            "num_generations": 2,
            "max_completion_length": 4,
            "eval_max_completion_length": 4,
            "one_shot_steps": 1,
            "ttrl_steps": 1,
            "ttrl_prompts_per_step": 1,
            "eval_samples": 1,
            "gradient_checkpointing": False,
            "use_vllm": "off",
            "save_model": False,
        },
    )
    job = execute(job.pk)
    assert job.status == Job.Status.SUCCEEDED, job.error
    saved = json.loads((job.artifact_dir / "results.json").read_text())
    assert saved["preset"]["name"] == "a1-gsm8k"
    assert (saved["options"]["one_shot_learning_rate"], saved["options"]["ttrl_learning_rate"]) == (
        1e-6,
        5e-7,
    )
    assert saved["options"]["ttrl_steps"] == 1  # the job's own value over the preset's 300
    assert saved["options"]["prompt_set"] == "a1-gsm8k"
    assert "cost_table.md" in job.artifacts
