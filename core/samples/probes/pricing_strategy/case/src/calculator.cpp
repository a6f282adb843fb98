#include "pricing/calculator.h"

#include <utility>

namespace pricing {

void PriceCalculator::add_rule(std::unique_ptr<PricingRule> rule) {
    rules_.push_back(std::move(rule));
}

double PriceCalculator::calculate(const Order& order) const {
    double price = order.subtotal;
    for (const auto& rule : rules_) {
        price = rule->apply(order, price);
    }
    return price;
}

}  // namespace pricing
