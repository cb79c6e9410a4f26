"""The sloppy reproducer: does the work, but with the wrong configuration. It follows the paper's
text where the code differs (an 80 % split), leaves a quick-test setting in (2,000 darts and a
seed of its own), reshuffles the spam corpus with another seed, and does not repair what the
raw code needs. It declares what it changed; its numbers are simply not the paper's."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common

changes = []


def edit(path: str, old: str, new: str, why: str) -> None:
    text = Path(path).read_text()
    Path(path).write_text(re.sub(old, new, text, count=1))
    changes.append({"path": path, "rationale": why})


if common.PAPER == "fitting-lines":
    edit("fit.py", r'default=0\.75', 'default=0.8', "the paper says 80 % of the points are used for fitting")
elif common.PAPER == "filtering-spam":
    edit("classify.py", r"random\.Random\(11\)", "random.Random(1)", "any shuffle will do")
else:
    edit("estimate.py", r"default=20000", "default=2000", "2,000 darts are enough for a quick check")
if common.CONDITION == "raw":
    common.raw_manifest()
common.submit_record(common.run(), changes)
