"""benchwright.core: the domain. Models, importers, repository access, evidence; no UI, no SQL."""

from .errors import BenchwrightError, ImportReport, InputFileError, InputProblem
from .models import Decision, QAPair, Repository, SourceRef

__all__ = [
    "BenchwrightError", "Decision", "ImportReport", "InputFileError", "InputProblem", "QAPair", "Repository",
    "SourceRef",
]
