"""Who is the Difference's rules, written once: the rules as people read them (the study's
instructions page, the terminal game), the default text models read, and the default
comprehension check of a study.

The models' text also ships as the prompt file ``games/llm/prompts/undercover_rules.txt``, which a
researcher may override with a prompt folder; the shipped file is :data:`RULES_FOR_MODELS` to the
letter, and a test keeps it so.
"""

from __future__ import annotations

# The rule of a clue, as the comprehension check asks it.
CLUE_FORBIDDEN = "Say your word or spell out its letters"

# The instructions page (participants app): what a person reads before the checks.
RULES_FOR_PEOPLE = (
    "Each game is a game of Who is the Difference with other players: some are people taking "
    "part in this study, some are computer agents. Every player gets a secret word; one player's "
    "word is related but different. In each clue round everyone gives one sentence about their "
    "word, without saying it, spelling it or repeating an earlier clue. After three clue rounds "
    "the players vote out the one they think holds the different word; a clue round and a vote "
    "then alternate. The common-word players win when the different word is voted out; the "
    "different-word player wins when only three players are left."
)

# The terminal game (python -m games play undercover); {cap} is the vote cap.
RULES_FOR_TERMINAL = """Who is the Difference.

Every player has a secret word. All but one share the same word; one player, the difference,
holds a related but different word. Nobody is told their role: compare the clues to find out.

The game starts with three speaking rounds, then a vote; after that one speaking round and one vote
alternate. When it is your turn to speak, type one sentence about your word (or 'pass'). Do not say
your word, do not hint at letters, spelling or rhymes, and do not repeat an earlier clue.
When voting, type the seat number of the player you think is the difference (not yourself), or
'abstain'. Votes are secret until everyone has voted. The most-voted player is out; a tie removes
no one.

The normal players win when the difference is voted out. The difference wins when only three
players remain, or when {cap} votes have passed. Type 'quit' to give up.
"""

# The shipped prompt undercover_rules.txt ($players, $last_seat).
RULES_FOR_MODELS = """Game: Who is the Difference.

There are $players players, numbered 0 to $last_seat. Every player gets a secret word. All players but one share the same word; they are the normal players. The remaining player, the difference, got a related but different word. Nobody is told which role they have: you only know your own word, and must work out your role from what the others say.

The game starts with three speaking rounds, followed by a vote. After that one speaking round and one vote alternate until the game ends.

Speaking: the players still in the game speak in turn, each giving one sentence about their word. It is forbidden to say your word, to hint at its letters, spelling or rhymes, and to repeat a clue someone already gave. You do not have to describe your own word exactly; the difference may try to sound like the normal players.

Voting: all players still in the game vote at the same time for one other player (never themselves). Normal players vote for whoever they think is the difference; the difference votes to survive. The player with the most votes is out. On a tie nobody is out.

The normal players win as soon as the difference is voted out. The difference wins by surviving until only three players remain."""  # noqa: E501

# A study's comprehension check when staff wrote none.
DEFAULT_CHECKS = [
    {
        "question": "In a clue round, what may your clue not do?",
        "options": [
            "Describe your word in one sentence",
            CLUE_FORBIDDEN,
            "Mention something your word is used for",
        ],
        "answer": CLUE_FORBIDDEN,
    }
]


# The rules and default checks people read, in the other languages a study can run in (the
# English above is the source; each translation states the same rules).
TRANSLATED_RULES_FOR_PEOPLE = {
    "de": (
        "Jedes Spiel ist eine Partie „Wer ist anders?“ mit anderen Mitspielenden: Einige sind "
        "Menschen, die an dieser Studie teilnehmen, einige sind Computer-Agenten. Alle bekommen ein "
        "geheimes Wort; das Wort einer Person ist verwandt, aber anders. In jeder Hinweisrunde "
        "gibt jede Person einen Satz über ihr Wort, ohne es zu nennen, zu buchstabieren oder einen "
        "früheren Hinweis zu wiederholen. Nach drei Hinweisrunden wählen alle die Person heraus, "
        "die ihrer Meinung nach das andere Wort hat; danach wechseln sich eine Hinweisrunde und "
        "eine Abstimmung ab. Die Personen mit dem gemeinsamen Wort gewinnen, wenn das andere Wort "
        "herausgewählt wird; die Person mit dem anderen Wort gewinnt, wenn nur noch drei "
        "Mitspielende übrig sind."
    ),
}
_CLUE_FORBIDDEN_DE = "Ihr Wort nennen oder seine Buchstaben aufzählen"
TRANSLATED_DEFAULT_CHECKS = {
    "de": [
        {
            "question": "Was darf Ihr Hinweis in einer Hinweisrunde nicht tun?",
            "options": [
                "Ihr Wort in einem Satz beschreiben",
                _CLUE_FORBIDDEN_DE,
                "Etwas erwähnen, wofür Ihr Wort verwendet wird",
            ],
            "answer": _CLUE_FORBIDDEN_DE,
        }
    ]
}
