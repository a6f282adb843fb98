#pragma once

namespace pricing {

struct Order {
    double subtotal = 0.0;
    int quantity = 0;
    bool member = false;
};

}  // namespace pricing
