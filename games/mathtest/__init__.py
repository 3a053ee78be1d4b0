"""The single-turn math testbed of the test-time learning paper's Table 2 (its AIME 2025 block).

A problem is one model call: the rules, the policy in force (if any) and the problem; the reward is
1 when the final answer inside ``<answer></answer>`` is right. Problems come from a JSONL task file
in the format TTRA reads (``question``, ``answer``, optional ``id``, ``options``, ``kind``), so one
file serves both. The runner (``games.experiment.runner``) plays them as it plays games: the same
records, settings, resume and cache.
"""

from games.mathtest.judge import JUDGE, is_correct
from games.mathtest.tasks import MathTask, TaskFileError, load_tasks

GAME = "math"

__all__ = ["GAME", "JUDGE", "MathTask", "TaskFileError", "is_correct", "load_tasks"]
