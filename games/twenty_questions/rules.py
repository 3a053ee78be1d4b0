"""Twenty Questions' rules, written once: the oracle's three replies, the rules as people read them
(the study's instructions page, the terminal game), the default text models read, and the default
comprehension checks of a study.

Everything that states a rule takes it from here: the engine (:data:`ANSWERS`), the offline oracle,
the LLM agents, the CLI, the participants' instructions and checks. The models' text also ships as
the prompt file ``games/llm/prompts/twenty_questions_rules.txt`` (and the oracle's as
``twenty_questions_oracle.txt``), which a researcher may override with a prompt folder; the shipped
files are :data:`RULES_FOR_MODELS` and :data:`ORACLE_FOR_MODELS` to the letter, and a test keeps
them so.
"""

from __future__ import annotations

import textwrap

from games.twenty_questions import CANDIDATES, MAX_QUESTIONS

YES, NO, INVALID = "Yes", "No", "Invalid"
ANSWERS = (YES, NO, INVALID)
ANSWERS_TEXT = f"{YES}, {NO} or {INVALID}"  # "Yes, No or Invalid"
INVALID_TEXT = "questions about letters or spelling are Invalid"

# The instructions page (participants app): what a person reads before the checks.
RULES_FOR_PEOPLE = (
    "The computer thinks of a word from a fixed list of common things. You have up to "
    f"{MAX_QUESTIONS} yes/no questions to find it. The oracle answers {ANSWERS_TEXT} ({INVALID_TEXT}). To guess, "
    'pick the word with the Guess box (or ask "Is it a …?"); a wrong guess uses up a question. '
    "The sooner you find it, the higher your reward for the game (1.0 at the first question, 0 "
    "if you do not find it)."
)

# The terminal game (python -m games play twenty-questions).
RULES_FOR_TERMINAL = f"""Twenty Questions. I am thinking of one of these {len(CANDIDATES)} words:

{textwrap.fill(", ".join(CANDIDATES), 100)}

Ask up to {MAX_QUESTIONS} yes/no questions; I answer {ANSWERS_TEXT} ({INVALID_TEXT}).
To guess, ask whether it is one word ("Is it a violin?"); a wrong guess uses up a question.
The sooner you find it, the higher the reward: 1/log2(k+1) for a find at question k.
Type 'quit' to give up.
"""

# The shipped prompt twenty_questions_rules.txt ($count, $max_questions, $candidates).
RULES_FOR_MODELS = f"""Game: Twenty Questions.

The secret word is one of the $count candidate words listed below. Find it by asking questions that can be answered yes or no; you may ask up to $max_questions of them.

Each question gets one reply: {YES}, {NO}, or {INVALID}. Questions must be about the meaning of the word, what the thing is; a question about its letters or spelling is {INVALID}.

To make a guess, ask whether the secret word is one candidate, for example "Is it a violin?"; a right guess ends the game, a wrong one uses up a question like any other, and a question about several candidates at once ("Is it a cat or a dog?") is not a guess but an ordinary question.

Candidates: $candidates"""  # noqa: E501

# The shipped prompt twenty_questions_oracle.txt (no variables).
ORACLE_FOR_MODELS = f"""You are the host of a game of Twenty Questions. You know the secret word; a player is asking yes/no questions to discover it.

Reply to each question truthfully, as it applies to the secret word, with exactly one of: {YES}, {NO}, {INVALID}.
Reply {INVALID} when the question cannot be answered with yes or no, or when it is about the letters or spelling of the word rather than what the thing is. When a question is true of the thing in its usual form, reply {YES}.

Think briefly, then put only your reply inside <answer></answer>, for example <answer>{NO}</answer>"""  # noqa: E501

# What a model is told when its reply was none of the three.
REPLY_HINT = f"The reply must be exactly {ANSWERS_TEXT}."

# A study's comprehension check when staff wrote none, by the person's seat: the one rule people
# most often miss.
DEFAULT_CHECKS = {
    "questioner": [
        {
            "question": "Which answers can the oracle give to one of your questions?",
            "options": [
                "Any sentence it likes",
                ANSWERS_TEXT,
                "The first letter of the secret word",
            ],
            "answer": ANSWERS_TEXT,
        }
    ],
    "oracle": [
        {
            "question": "As the oracle, how do you answer a question?",
            "options": [
                "With any sentence I like",
                ANSWERS_TEXT,
                "With a hint about the letters of the word",
            ],
            "answer": ANSWERS_TEXT,
        }
    ],
}


# The rules and default checks people read, in the other languages a study can run in (the
# English above is the source; each translation states the same rules).
TRANSLATED_RULES_FOR_PEOPLE = {
    "de": (
        "Der Computer denkt sich ein Wort aus einer festen Liste alltäglicher Dinge aus. Sie "
        f"haben bis zu {MAX_QUESTIONS} Ja/Nein-Fragen, um es zu finden. Das Orakel antwortet mit "
        "Ja, Nein oder Ungültig (Fragen nach Buchstaben oder der Schreibweise sind ungültig). "
        "Zum Raten wählen Sie das Wort im Feld Raten (oder fragen „Ist es ein …?“); ein falscher "
        "Tipp verbraucht eine Frage. Je früher Sie es finden, desto höher Ihre Belohnung für das "
        "Spiel (1,0 bei der ersten Frage, 0, wenn Sie es nicht finden)."
    ),
}
_ANSWERS_DE = "Ja, Nein oder Ungültig"
TRANSLATED_DEFAULT_CHECKS = {
    "de": {
        "questioner": [
            {
                "question": "Welche Antworten kann das Orakel auf eine Ihrer Fragen geben?",
                "options": [
                    "Jeden beliebigen Satz",
                    _ANSWERS_DE,
                    "Den ersten Buchstaben des geheimen Wortes",
                ],
                "answer": _ANSWERS_DE,
            }
        ],
        "oracle": [
            {
                "question": "Wie beantworten Sie als Orakel eine Frage?",
                "options": [
                    "Mit einem beliebigen Satz",
                    _ANSWERS_DE,
                    "Mit einem Hinweis auf die Buchstaben des Wortes",
                ],
                "answer": _ANSWERS_DE,
            }
        ],
    }
}
