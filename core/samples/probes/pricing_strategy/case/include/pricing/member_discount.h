#pragma once

#include "pricing/rule.h"

namespace pricing {

// Members get 5% off.
class MemberDiscount : public PricingRule {
public:
    double apply(const Order& order, double price) const override;
};

}  // namespace pricing
