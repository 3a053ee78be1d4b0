"""A job's parameters of the wrong type are refused by the start form, naming the parameter,
instead of the job failing on them later (``{"model": 5}`` was an AttributeError)."""

from __future__ import annotations

import json

import pytest

from studyapp.pipelines.models import Job


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("kind", "parameters", "said"),
    [
        (
            "selective-lwe",
            {"model": 5},
            "model must be a model spec such as openai:gpt-4o-mini, not 5",
        ),
        ("experiment", {"model": ""}, "model must be a model spec"),
        ("experiment", {"cases": "three"}, "cases must be a number, not 'three'"),
    ],
)
def test_the_start_form_refuses_a_parameter_of_the_wrong_type(
    client, staff, kind, parameters, said
):
    client.force_login(staff)
    response = client.post(
        "/dashboard/jobs/new/", {"kind": kind, "parameters": json.dumps(parameters)}
    )
    assert response.status_code == 200 and not Job.objects.exists()
    page = response.content.decode()
    assert 'role="alert"' in page and said in page.replace("&#x27;", "'")
