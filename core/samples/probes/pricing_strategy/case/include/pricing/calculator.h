#pragma once

#include <memory>
#include <vector>

#include "pricing/order.h"
#include "pricing/rule.h"

namespace pricing {

class PriceCalculator {
public:
    void add_rule(std::unique_ptr<PricingRule> rule);
    double calculate(const Order& order) const;

private:
    std::vector<std::unique_ptr<PricingRule>> rules_;
};

// The calculator with the shop's standard rules.
PriceCalculator make_default_calculator();

}  // namespace pricing
