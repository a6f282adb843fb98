"""The app's screens: queue, review, evidence, notes and help."""

from .evidence import EvidenceScreen
from .help import HelpScreen
from .notes import NotesScreen
from .queue import QueueScreen
from .review import ReviewScreen

__all__ = ["EvidenceScreen", "HelpScreen", "NotesScreen", "QueueScreen", "ReviewScreen"]
