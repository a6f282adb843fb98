from __future__ import annotations

from src.product import Product
from src.summary_engine import InventorySummary, SummaryEngine

_summary_cache: dict[int, InventorySummary] = {}


class InventoryReportService:
    def __init__(self, engine: SummaryEngine) -> None:
        if engine is None:
            raise ValueError("engine must not be None")
        self._engine = engine
        self._products: list[Product] = []

    def replace_products(self, products: list[Product]) -> None:
        self._products = list(products)
        _summary_cache.pop(id(self), None)

    def upsert_product(self, product: Product) -> None:
        _summary_cache.pop(id(self), None)
        for index, existing in enumerate(self._products):
            if existing.sku == product.sku:
                self._products[index] = product
                return
        self._products.append(product)

    def clear_cache(self) -> None:
        _summary_cache.pop(id(self), None)

    def get_summary(self) -> InventorySummary:
        if id(self) not in _summary_cache:
            _summary_cache[id(self)] = self._engine.compute(self._products)
        return _summary_cache[id(self)]
