"""Edit one score of an Inspect log with Inspect's own API and write the edited log.

    python edit_score.py LOG OUT SAMPLE_ID EPOCH SCORER VALUE

The edit is recorded in the score's `history` with its provenance, as `inspect` itself does.
"""

import sys

from inspect_ai.log import ProvenanceData, edit_score, read_eval_log, write_eval_log
from inspect_ai.scorer import ScoreEdit


def main(log, out, sample_id, epoch, scorer, value):
    eval_log = read_eval_log(log)
    edit = ScoreEdit(
        value=value,
        explanation="regraded by hand",
        provenance=ProvenanceData(author="reviewer", reason="the answer is close enough"),
    )
    sid = int(sample_id) if sample_id.isdigit() else sample_id
    edit_score(eval_log, sid, scorer, edit, epoch=int(epoch))
    write_eval_log(eval_log, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
