"""TTRA: test-time RL alignment (paper 001), one-shot GRPO then majority-vote TTRL, with TRL.

Pure Python plus the optional ``ttra`` extra (torch, transformers, trl, datasets, accelerate,
math-verify); no Django import, so it runs from the command line, a notebook or a job.
The light modules (tasks, answers, rewards, collapse, config) import without the extra.
"""
