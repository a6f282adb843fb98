from __future__ import annotations

from src.submission import Submission


class Validator:
    def validate(self, submission: Submission) -> bool:
        if not submission.content:
            return False
        if submission.is_late:
            return False
        return True
