"""Who the people's measures leave out unless asked, and how many for each reason: pilots (not
the study's population), people screened out (an attention check failed, so their play is not
trusted) and people who withdrew. The counts are the same on every page and in every file."""

from __future__ import annotations

import pandas as pd

# People whose games the analysis leaves out unless asked: screened out (they failed an attention
# check, so their play is not trusted) or withdrawn; and pilots (not the study's population). A
# dropped person's finished games stay in.
LEFT_OUT_STATUSES = ("screened", "withdrawn")


def people_left_out(games: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """``games`` without the rows of pilot tables and of screened or withdrawn people, and how
    many people each reason left out (``pilot``, ``screened``, ``withdrawn``; a pilot counts as a
    pilot whatever its status). Agents' rows stay, but not those at a pilot table."""
    keep = pd.Series(True, index=games.index)
    counts: dict[str, int] = {}
    if games.empty:
        return games, counts
    human = (games["player_kind"] == "human").fillna(False).astype(bool)
    if "pilot" in games:
        pilot = games["pilot"].fillna(False).astype(bool)
        n = games.loc[pilot & human, "player"].nunique()
        if n:
            counts["pilot"] = int(n)
        keep &= ~pilot
    if "participant_status" in games:
        status = games["participant_status"].astype("string").fillna("")
        for reason in LEFT_OUT_STATUSES:
            out = human & (status == reason) & keep
            n = games.loc[out, "player"].nunique()
            if n:
                counts[reason] = int(n)
            keep &= ~out
    return games[keep], counts


def left_out_text(counts: dict[str, int]) -> str:
    """The people left out, in words ("2 screened, 1 pilot"); '' when none."""
    return ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))
