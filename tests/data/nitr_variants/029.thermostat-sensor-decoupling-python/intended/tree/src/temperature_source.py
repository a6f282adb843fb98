from __future__ import annotations

from typing import Protocol


class TemperatureSource(Protocol):
    def read_temperature(self) -> float:
        """The current room temperature in degrees."""
