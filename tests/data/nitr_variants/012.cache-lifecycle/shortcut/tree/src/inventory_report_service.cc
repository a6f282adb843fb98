#include "inventory_report_service.h"

#include <map>
#include <stdexcept>

namespace nitr::case012 {

namespace {
std::map<const InventoryReportService*, InventorySummary>& Summaries() {
  static std::map<const InventoryReportService*, InventorySummary> summaries;
  return summaries;
}
}  // namespace

InventoryReportService::InventoryReportService(const SummaryEngine* engine)
    : engine_(engine) {
  if (engine_ == nullptr) {
    throw std::invalid_argument("engine must not be null");
  }
}

void InventoryReportService::ReplaceProducts(
    const std::vector<Product>& products) {
  products_ = products;
  Summaries().erase(this);
}

void InventoryReportService::UpsertProduct(const Product& product) {
  Summaries().erase(this);
  for (Product& existing : products_) {
    if (existing.sku == product.sku) {
      existing = product;
      return;
    }
  }

  products_.push_back(product);
}

void InventoryReportService::ClearCache() { Summaries().erase(this); }

InventorySummary InventoryReportService::GetSummary() const {
  auto found = Summaries().find(this);
  if (found == Summaries().end()) {
    found = Summaries().emplace(this, engine_->Compute(products_)).first;
  }
  return found->second;
}

}  // namespace nitr::case012
