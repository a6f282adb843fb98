#include "stats.h"

namespace nitr::case023 {

int total_processed = 0;
int total_validated = 0;

}  // namespace nitr::case023
