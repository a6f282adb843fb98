from __future__ import annotations

from enum import Enum

from src.temperature_source import TemperatureSource


class Command(Enum):
    HEATING = "Heating"
    COOLING = "Cooling"
    IDLE = "Idle"


class ThermostatController:
    TEMPERATURE_DELTA_THRESHOLD = 2.0

    def __init__(
        self,
        target_temperature: float,
        temperature_source: TemperatureSource | None = None,
    ) -> None:
        self._target_temperature = target_temperature
        self._temperature_source = temperature_source

    def evaluate(self, current_temperature: float | None = None) -> Command:
        if current_temperature is None:
            if self._temperature_source is None:
                raise ValueError("no temperature given and no temperature source connected")
            current_temperature = self._temperature_source.read_temperature()
        if current_temperature <= (
            self._target_temperature - self.TEMPERATURE_DELTA_THRESHOLD
        ):
            return Command.HEATING
        if current_temperature >= (
            self._target_temperature + self.TEMPERATURE_DELTA_THRESHOLD
        ):
            return Command.COOLING
        return Command.IDLE

    def target_temperature(self) -> float:
        return self._target_temperature
