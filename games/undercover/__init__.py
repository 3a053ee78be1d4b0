"""Who is Undercover, played with the neutral role names "difference" and "normal" (paper A.2).

Players never read "undercover" or "civilian": language models tend to deny a role with a negative
name, so the engine, observations and agents use only the neutral labels.
"""
