#pragma once

#include "pricing/order.h"

namespace pricing {

// A pricing rule adjusts the running price of an order. The calculator applies its rules in the order
// they were added.
class PricingRule {
public:
    virtual ~PricingRule() = default;
    virtual double apply(const Order& order, double price) const = 0;
};

}  // namespace pricing
