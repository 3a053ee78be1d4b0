"""Learning While Evaluating: a pairwise LLM judge that refines its own meta-prompt as it goes.

Pure Python (no Django) so the algorithm runs from a notebook, a test or a background job alike.
Every model call goes through the Provider interface of :mod:`games.llm.providers`.
"""
