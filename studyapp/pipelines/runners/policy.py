"""Policy extraction as a job: a rule policy, an experience policy from chosen games (a model's
or human participants'), or the cumulative memory over a sequence of games. The model steps are
the experience functions the agents use (``games.experience.steps``), so a stored policy is the
same kind of text an experiment would have derived; each result becomes a new PolicyRecord
version.

With an ``offline:`` model there is no language model to ask: the offline policy writer
(``games.experience.offline_policy``) derives the text from the games' statistics instead, so the
job, its progress and its record can be tried without a key."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync, sync_to_async

from games import get_engine
from games.experience import steps
from games.experience.offline_policy import offline_policy
from games.experience.transcript import transcript
from games.llm import render
from games.llm.providers import closing
from games.llm.usage import Usage
from studyapp.pipelines.models import Job
from studyapp.pipelines.sources import jsonl_records, table_records
from studyapp.providers import provider_for
from studyapp.tables.models import PolicyRecord

MODES = ("rule", "experience", "cumulative")


def chosen_games(parameters: dict[str, Any]) -> list[dict[str, Any]]:
    """Games by table id (in the order given) and/or from an experiment results file."""
    game, seat = parameters["game"], int(parameters.get("seat", 0))
    records: list[dict[str, Any]] = []
    ids = [int(i) for i in parameters.get("tables") or []]
    if ids:
        by_id = {r["id"]: r for r in table_records(game, table_ids=ids, seat=seat)}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise ValueError(f"tables {missing} are not finished {game} games")
        records += [by_id[i] for i in ids]
    if parameters.get("results"):
        for record in jsonl_records(parameters["results"]):
            if record.get("game") == game:
                records.append({**record, "seat": record.get("evaluated_seat", seat)})
    return records


async def extract(
    mode: str, game: str, games: list[dict[str, Any]], provider: Any, usage: Usage, report: Any
) -> str | None:
    config = games[0]["config"] if games else get_engine(game).new_config(0)
    rules = render.rules_for_config(game, config)
    if mode == "rule":
        return await steps.write_rule_policy(provider, rules, usage=usage)
    stories = [(transcript(game, g["config"], g["events"], g["seat"]), g["reward"]) for g in games]
    if mode == "experience":
        experiences = []
        for index, (story, reward) in enumerate(stories, start=1):
            experiences.append(await steps.reflect(provider, rules, story, reward, usage=usage))
            await report(index / (len(stories) + 1), f"reflected on game {index}/{len(stories)}")
        return await steps.write_experience_policy(provider, rules, experiences, usage=usage)
    memory: str | None = None
    for index, (story, reward) in enumerate(stories, start=1):
        memory = await steps.curate(provider, rules, memory, story, reward, usage=usage)
        await report(index / len(stories), f"memory after game {index}/{len(stories)}")
    return memory


async def extract_offline(mode: str, game: str, games: list[dict[str, Any]], report: Any) -> str:
    """The offline writer over the same steps: the rules alone, all games at once, or a memory
    rewritten after each game (the last one is over every game)."""
    if mode == "rule":
        text = offline_policy(game, [], rules_only=True)
        await report(1.0, "rule policy written from the rules")
        return text
    if mode == "experience":
        text = offline_policy(game, games)
        await report(1.0, f"policy written from the statistics of {len(games)} games")
        return text
    text = ""
    for index in range(1, len(games) + 1):
        text = offline_policy(game, games[:index])
        await report(index / len(games), f"memory after game {index}/{len(games)}")
    return text


def run(job: Job) -> dict[str, Any]:
    parameters = job.parameters
    mode, game = parameters.get("mode", "experience"), parameters["game"]
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    games = chosen_games(parameters) if mode != "rule" else []
    if mode != "rule" and not games:
        raise ValueError(f"the {mode} policy needs games: give 'tables' ids or a 'results' file")
    job.write_log(f"{mode} policy for {game} from {len(games)} games with {parameters['model']}")
    usage = Usage()
    report = sync_to_async(job.set_progress)
    if str(parameters["model"]).startswith("offline:"):
        text = async_to_sync(extract_offline)(mode, game, games, report)
    else:
        provider = provider_for(parameters["model"], cache=bool(parameters.get("cache", True)))
        text = async_to_sync(closing)(extract(mode, game, games, provider, usage, report))
    job.cost = usage.as_dict()
    if not text:
        raise RuntimeError("the model gave no usable policy (no answer tag in its reply)")
    author = (
        f"the offline statistics writer ({parameters['model']})"
        if str(parameters["model"]).startswith("offline:")
        else parameters["model"]
    )
    source = f"{mode} policy by {author} from games {[g.get('id') for g in games]}"
    record = PolicyRecord.add(
        name=parameters.get("name") or f"{game}-{mode}",
        game=game,
        kind=mode,
        text=text,
        source=f"{source} (job #{job.pk})",
        job_id=job.pk,
        created_by=job.started_by,
    )
    job.write_artifact("policy.txt", text)
    job.save_result({}, cost=usage.as_dict())
    return {"policy": record.pk, "name": record.name, "version": record.version, "chars": len(text)}
