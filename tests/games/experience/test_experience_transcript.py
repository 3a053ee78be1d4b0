"""A finished game retold from one seat for reflection and the curator."""

from games import get_engine
from games.experience.transcript import transcript


def test_a_twenty_questions_transcript_lists_the_dialogue_and_the_word():
    config = {"answer": "Apple", "max_questions": 20}
    events = [
        {"type": "question", "seat": 0, "text": "Is it alive?"},
        {"type": "answer", "seat": 1, "answer": "No"},
        {"type": "question", "seat": 0, "text": "Is it an apple?"},
    ]
    text = transcript("twenty-questions", config, events, 0)
    assert "1. Is it alive? -> No" in text and "2. Is it an apple? -> Yes" in text
    assert "The secret word was Apple, named at question 2." in text


def test_an_undercover_transcript_shows_the_seats_word_clues_votes_and_result():
    engine = get_engine("undercover")
    config = engine.new_config(4)
    events, state = [], engine.initial(config)
    while not engine.is_over(state):
        for seat in engine.to_move(state):
            if state.phase == "vote":
                event = {
                    "type": "vote",
                    "seat": seat,
                    "target": config["difference_seat"]
                    if seat != config["difference_seat"]
                    else None,
                }
            else:
                event = {"type": "clue", "seat": seat, "text": f"clue {len(events)}"}
            state = engine.apply(state, event)
            events.append(event)
    seat = (config["difference_seat"] + 1) % config["players"]
    text = transcript("undercover", config, events, seat)
    assert f'your word was "{config["normal_word"]}"' in text
    assert "Speaking round 3:" in text and "Vote 1:" in text
    assert "Your role was normal and you won" in text
