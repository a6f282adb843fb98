#include "report_renderer.h"

#include <sstream>

namespace nitr::case011 {
namespace {

std::string RenderHeader(const std::vector<Item>& items, bool compact_mode) {
  const bool compact = compact_mode;
  std::ostringstream out;
  if (compact) {
    out << "Inventory Report (compact)\n";
    return out.str();
  }
  out << "Inventory Report\n";
  out << "Items: " << items.size() << "\n";
  return out.str();
}

std::string RenderRow(const Item& item, bool compact_mode) {
  const bool compact = compact_mode;
  std::ostringstream out;
  if (compact) {
    out << item.id << ":" << item.name << ":" << item.quantity << "\n";
    return out.str();
  }
  out << "- id=" << item.id << ", name=" << item.name
      << ", qty=" << item.quantity << "\n";
  return out.str();
}

int TotalQuantity(const std::vector<Item>& items) {
  int total = 0;
  for (const Item& item : items) {
    total += item.quantity;
  }
  return total;
}

std::string RenderFooter(const std::vector<Item>& items, bool include_summary,
                         bool compact_mode) {
  if (!include_summary) {
    return std::string();
  }

  const bool compact = compact_mode;
  std::ostringstream out;
  if (!compact) {
    out << "Summary\n";
  }
  out << "Total quantity: " << TotalQuantity(items) << "\n";
  return out.str();
}

}  // namespace

std::string RenderInventoryReport(const std::vector<Item>& items,
                                  const ReportOptions& options) {
  const bool compact_mode = options.compact_mode;
  std::ostringstream out;
  out << RenderHeader(items, compact_mode);
  for (const Item& item : items) {
    out << RenderRow(item, compact_mode);
  }
  out << RenderFooter(items, options.include_summary, compact_mode);
  return out.str();
}

}  // namespace nitr::case011
