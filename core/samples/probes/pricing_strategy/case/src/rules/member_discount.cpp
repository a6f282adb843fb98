#include "pricing/member_discount.h"

namespace pricing {

double MemberDiscount::apply(const Order& order, double price) const {
    return order.member ? price * 0.95 : price;
}

}  // namespace pricing
