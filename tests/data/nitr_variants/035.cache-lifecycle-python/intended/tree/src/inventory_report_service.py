from __future__ import annotations

from src.product import Product
from src.summary_engine import InventorySummary, SummaryEngine


class InventoryReportService:
    def __init__(self, engine: SummaryEngine) -> None:
        if engine is None:
            raise ValueError("engine must not be None")
        self._engine = engine
        self._products: list[Product] = []
        self._summary: InventorySummary | None = None

    def replace_products(self, products: list[Product]) -> None:
        self._products = list(products)
        self._summary = None

    def upsert_product(self, product: Product) -> None:
        self._summary = None
        for index, existing in enumerate(self._products):
            if existing.sku == product.sku:
                self._products[index] = product
                return
        self._products.append(product)

    def clear_cache(self) -> None:
        self._summary = None

    def get_summary(self) -> InventorySummary:
        if self._summary is None:
            self._summary = self._engine.compute(self._products)
        return self._summary
