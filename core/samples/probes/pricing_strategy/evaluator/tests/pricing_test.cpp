#include <cmath>
#include <cstdio>

#include "pricing/calculator.h"

using pricing::Order;

static int failures = 0;

static void expect_price(const char* what, const Order& order, double expected) {
    const double got = pricing::make_default_calculator().calculate(order);
    if (std::fabs(got - expected) > 1e-9) {
        std::printf("FAIL %s: expected %.4f, got %.4f\n", what, expected, got);
        ++failures;
    }
}

int main() {
    expect_price("plain order", Order{100.0, 1, false}, 100.0);
    expect_price("member order", Order{100.0, 1, true}, 95.0);
    expect_price("nine items", Order{100.0, 9, false}, 100.0);
    expect_price("bulk order", Order{100.0, 10, false}, 90.0);
    expect_price("bulk member order", Order{100.0, 12, true}, 85.5);
    if (failures == 0) std::printf("all pricing checks passed\n");
    return failures == 0 ? 0 : 1;
}
