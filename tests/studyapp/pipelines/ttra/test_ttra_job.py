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
