class OutOfStock(Exception):
    pass


class Inventory:
    def __init__(self, counts):
        self.counts = dict(counts)

    def reserve(self, sku, qty):
        if self.counts.get(sku, 0) < qty:
            raise OutOfStock(sku)
        self.counts[sku] -= qty

    def restock(self, sku, qty):
        self.counts[sku] = self.counts.get(sku, 0) + qty
