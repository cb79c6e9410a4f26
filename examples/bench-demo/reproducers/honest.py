"""The honest reproducer: runs the code as the paper says, repairs what must be repaired (and
declares it), and submits the value its run recorded. Given the raw code, it has only the paper
to go by: where the paper and the code disagree (the line fit's train split), it follows the
paper, and misses the number the refined artifact's discrepancy record explains."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common

changes = []
if common.CONDITION == "raw":
    if common.PAPER == "fitting-lines":
        # Section 3 of the paper: "fitted on 80 % of the points".
        common.raw_manifest(["python", "fit.py", "--train-fraction", "0.8", "--out", "results"])
    else:
        common.raw_manifest()
    if common.PAPER == "filtering-spam":
        # The published code reads its corpus from the authors' home directory: read the copy
        # that ships with the code instead.
        code = Path("classify.py").read_text()
        Path("classify.py").write_text(code.replace('"/home/author/experiments/spam/corpus.txt"', '"corpus.txt"'))
        changes.append({"path": "classify.py", "rationale": "read corpus.txt from the code's directory; the "
                        "published absolute path exists only on the authors' machine"})
common.submit_record(common.run(), changes)
