#include <memory>

#include "pricing/calculator.h"
#include "pricing/member_discount.h"

namespace pricing {

PriceCalculator make_default_calculator() {
    PriceCalculator calculator;
    calculator.add_rule(std::make_unique<MemberDiscount>());
    return calculator;
}

}  // namespace pricing
