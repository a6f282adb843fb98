#include "inventory_report_service.h"

#include <stdexcept>

namespace nitr::case012 {

InventoryReportService::InventoryReportService(const SummaryEngine* engine)
    : engine_(engine) {
  if (engine_ == nullptr) {
    throw std::invalid_argument("engine must not be null");
  }
}

void InventoryReportService::ReplaceProducts(
    const std::vector<Product>& products) {
  products_ = products;
  summary_.reset();
}

void InventoryReportService::UpsertProduct(const Product& product) {
  summary_.reset();
  for (Product& existing : products_) {
    if (existing.sku == product.sku) {
      existing = product;
      return;
    }
  }

  products_.push_back(product);
}

void InventoryReportService::ClearCache() { summary_.reset(); }

InventorySummary InventoryReportService::GetSummary() const {
  if (!summary_.has_value()) {
    summary_ = engine_->Compute(products_);
  }
  return *summary_;
}

}  // namespace nitr::case012
