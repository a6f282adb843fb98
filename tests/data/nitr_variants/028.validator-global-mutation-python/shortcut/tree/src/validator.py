from __future__ import annotations

import src.stats as stats
from src.submission import Submission


class Validator:
    def validate(self, submission: Submission) -> bool:
        eligible = bool(submission.content) and not submission.is_late
        if eligible:
            stats.__dict__.setdefault("validated_ids", []).append(submission.student_id)
        return eligible
