"""The paper's experience settings: what an evaluated model knows beyond the rules.

``none`` (rules only), ``rule-policy`` (a strategy the model writes from the rules),
``experience-policy`` (a strategy written from the rules plus N earlier games with their rewards
and the model's reflections), ``human-policy`` (a researcher's strategy), ``full-experience`` (the
raw earlier games in context) and ``cumulative`` (a memory the model rewrites after every game).
``context.py`` assembles the text, ``steps.py`` makes the model calls, ``transcript.py`` retells a
finished game.
"""
