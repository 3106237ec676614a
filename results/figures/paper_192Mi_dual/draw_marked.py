"""The dual server's 192 Mi end-to-end plot redrawn from its table (end_to_end.csv here, the lead's session 17 runs,
before the windows' confirmation existed) with session 18's mark: bars whose steady-state window lost more than the
search's bound, or whose capacity no window confirmed, hatched (end_to_end.UNCONFIRMED). These points have no
confirmation column (run before it); their windows' losses mark the two skewed EREW points and EREW-T.

    .venv/bin/python results/figures/paper_192Mi_dual/draw_marked.py    # -> end_to_end_marked_s18.png
"""

import pathlib

import pandas as pd

from analysis import style
from drivers.studies import end_to_end

here = pathlib.Path(__file__).parent
df = pd.read_csv(here / "end_to_end.csv")
end_to_end.plot(df, here / "end_to_end_marked_s18.png", style.conditions(
    items=192 * 2**20, window="steady-state windows at the capacity the 300-request probes found (session 17, "
    "before the windows' confirmation); hatched: the window lost more than 1%", extra=df["conditions"].iloc[0]))
print(here / "end_to_end_marked_s18.png")
